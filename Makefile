# The two commands a user needs: `make reproduce-all` and `make test`.
# Cargo honours CARGO_TARGET_DIR; the binary is looked up there.

CARGO ?= cargo
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
REPRO := $(TARGET_DIR)/release/repro

.PHONY: all deps build reproduce-all test check figures report bench lint clean help

all: reproduce-all

help:
	@echo "make reproduce-all  build, run every config under configs/, write results/ and figures/"
	@echo "make test           workspace tests + 'repro check' (quick profile of every config)"
	@echo "make check          only 'repro check'"
	@echo "make figures        re-render figures from stored results"
	@echo "make report         reproduced vs published numbers (results/REPORT.md)"
	@echo "make bench          criterion benchmarks"
	@echo "make lint           rustfmt check + clippy -D warnings"
	@echo "make clean          remove generated results and all but the full-run figures"

# ndarray-linalg links LAPACK from Debian's libopenblas-dev (feature openblas-system).
deps:
	@command -v $(CARGO) >/dev/null 2>&1 || { echo "cargo not found: install Rust from https://rustup.rs"; exit 1; }
	@if ! { dpkg -s libopenblas-dev >/dev/null 2>&1 || ldconfig -p 2>/dev/null | grep -q 'libopenblas\.so '; }; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing libopenblas-dev"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libopenblas-dev; \
	  else \
	    echo "missing OpenBLAS/LAPACK. Run: sudo apt-get install -y libopenblas-dev"; exit 1; \
	  fi; \
	fi

build: deps
	$(CARGO) build --release -p experiments --bin repro

reproduce-all: build
	$(REPRO) reproduce-all
	@echo "results: results/<experiment>/full.parquet (+ .manifest.json); figures: figures/<experiment>/full.{png,svg}"

test: deps
	$(CARGO) test --release --workspace --all-targets
	$(CARGO) build --release -p experiments --bin repro
	$(REPRO) check

check: build
	$(REPRO) check

figures: build
	$(REPRO) plot

report: build
	$(REPRO) report

bench: deps
	$(CARGO) bench --workspace

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings

clean:
	rm -rf results/*/ figures/*/*-set-*
	find figures -type f ! -name 'full.*' ! -name 'full-*' -delete
