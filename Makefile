# share-ingest: build, test, benchmark.
#   make build        release build of the `share` CLI (.build/release/share)
#   make test         the test suite, exactly as CI runs it (scripts/test.sh)
#   make corpus       the benchmark corpus in bench/corpus/ (deterministic, skips what exists)
#   make bench        corpus, then the full benchmark (ROUNDS=5 by default; see BENCHMARKS.md)
#   make bench-quick  corpus, then one round of each scenario, no warm-up
#   make check-report HTML report + contact sheet for testdata/sample-drop, screenshotted with headless Chromium (.build/check-report/)
#   make fuzz         the libFuzzer targets, 60 s each (scripts/fuzz.sh)
#   make memcheck     `share` under valgrind on small, odd-size and committed media (scripts/memcheck.sh; part of make test)
# Variables: ROUNDS, SCENARIOS, SHARE_BIN (a prebuilt share; skips the build).

SWIFT ?= swift

.PHONY: all build test corpus bench bench-quick clean-bench check-report fuzz memcheck

all: build

build:
	$(SWIFT) build -c release --product share

test:
	bash scripts/test.sh

corpus:
	bash bench/make-corpus.sh

bench: corpus
	bash bench/run.sh

bench-quick: corpus
	ROUNDS=1 WARMUP=0 bash bench/run.sh

clean-bench:
	rm -rf bench/results

check-report:
	bash scripts/check-report.sh

fuzz:
	bash scripts/fuzz.sh

memcheck:
	bash scripts/memcheck.sh
