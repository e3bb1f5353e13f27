# The two commands a user needs: `make reproduce-all` and `make test`.
# Cargo honours CARGO_TARGET_DIR; the binary is looked up there.

CARGO ?= cargo
TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
REPRO := $(TARGET_DIR)/release/repro

.PHONY: all deps build reproduce-all test check figures report bench lint clean help compare-with

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
	@echo "make compare-with REF=<commit> [PROFILE=quick]"
	@echo "                    run every config at REF and here; fail unless the tables agree (timings aside)"

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

# Same numbers as another commit? Builds REF in a worktree (its own build folder, default
# $(TARGET_DIR)/compare-ref), runs every config there and here with PROFILE (default full), and
# compares each table with `repro compare` (cell keys and *_seconds columns aside). Needs the data.
PROFILE ?= full
REF_TARGET_DIR ?= $(abspath $(TARGET_DIR))/compare-ref
COMPARE_DIR ?= $(abspath $(TARGET_DIR))/compare-worktree
compare-with: build
	@test -n "$(REF)" || { echo "usage: make compare-with REF=<commit> [PROFILE=quick]"; exit 2; }
	rm -rf $(COMPARE_DIR) && git worktree prune && git worktree add --detach $(COMPARE_DIR) $(REF)
	cd $(COMPARE_DIR) && CARGO_TARGET_DIR=$(REF_TARGET_DIR) $(CARGO) build --release -p experiments --bin repro
	rm -rf $(COMPARE_DIR)/results/*/
	REPRO_DATA_DIR=$${REPRO_DATA_DIR:-$(abspath ../shared/datasets)} $(REF_TARGET_DIR)/release/repro --root $(COMPARE_DIR) reproduce-all --profile $(PROFILE) || true
	$(REPRO) reproduce-all --profile $(PROFILE) || true
	@status=0; for t in $(COMPARE_DIR)/results/*/*.parquet; do \
	  e=$$(basename $$(dirname $$t)); \
	  $(REPRO) compare $$t results/$$e/$$(basename $$t) || status=1; \
	done; git worktree remove --force $(COMPARE_DIR); exit $$status
