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

# One feature set everywhere: `cargo test --workspace --all-targets` unifies the features of the
# dev-dependencies (approx, tempfile, criterion) into the dependency tree, so a build of the binary
# alone would compile polars, ndarray and rayon a second time. `build` therefore builds what `test`
# builds (the test binaries too), and `test` uses the binary its own build made.
build: deps
	$(CARGO) build --release --workspace --all-targets

reproduce-all: build
	$(REPRO) reproduce-all
	@echo "results: results/<experiment>/full.parquet (+ .manifest.json); figures: figures/<experiment>/full.{png,svg}"

test: deps
	$(CARGO) test --release --workspace --all-targets
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
# $(TARGET_DIR)/compare-ref), runs every config there and, in a scratch root with this checkout's
# configs, here (PROFILE, default full), then compares each table with `repro compare` (cell keys
# and *_seconds columns aside). Fails when a table differs or exists on one side only.
PROFILE ?= full
REF_TARGET_DIR ?= $(abspath $(TARGET_DIR))/compare-ref
COMPARE_DIR ?= $(abspath $(TARGET_DIR))/compare-worktree
HERE_DIR ?= $(abspath $(TARGET_DIR))/compare-here
DATA_DIR ?= $(or $(REPRO_DATA_DIR),$(abspath ../shared/datasets))
compare-with: build
	@test -n "$(REF)" || { echo "usage: make compare-with REF=<commit> [PROFILE=quick]"; exit 2; }
	rm -rf $(COMPARE_DIR) $(HERE_DIR) && git worktree prune && git worktree add --detach $(COMPARE_DIR) $(REF)
	cd $(COMPARE_DIR) && CARGO_TARGET_DIR=$(REF_TARGET_DIR) $(CARGO) build --release -p experiments --bin repro
	rm -rf $(COMPARE_DIR)/results/*/ && mkdir -p $(HERE_DIR) && cp -r configs Cargo.toml $(HERE_DIR)/
	REPRO_DATA_DIR=$(DATA_DIR) $(REF_TARGET_DIR)/release/repro --root $(COMPARE_DIR) reproduce-all --profile $(PROFILE) || true
	REPRO_DATA_DIR=$(DATA_DIR) $(REPRO) --root $(HERE_DIR) reproduce-all --profile $(PROFILE) || true
	@status=0; for t in $$(cd $(COMPARE_DIR) && ls results/*/*.parquet) $$(cd $(HERE_DIR) && ls results/*/*.parquet); do \
	  case " $$seen " in *" $$t "*) continue;; esac; seen="$$seen $$t"; \
	  if [ ! -f $(COMPARE_DIR)/$$t ] || [ ! -f $(HERE_DIR)/$$t ]; then echo "MISSING: $$t on one side"; status=1; continue; fi; \
	  $(REPRO) compare $(COMPARE_DIR)/$$t $(HERE_DIR)/$$t || status=1; \
	done; git worktree remove --force $(COMPARE_DIR); rm -rf $(HERE_DIR); exit $$status
