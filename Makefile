# share-ingest: build, test, benchmark.
#   make build        release build of the `share` CLI and its decoder helper (.build/release/share, .build/release/share-helper)
#   make test         the test suite, exactly as CI runs it (scripts/test.sh)
#   make corpus       the benchmark corpus in bench/corpus/ (deterministic, skips what exists)
#   make bench        corpus, then the full benchmark (ROUNDS=5 by default; see BENCHMARKS.md)
#   make bench-quick  corpus, then one round of each scenario, no warm-up
#   make check-report the HTML report of testdata/sample-drop in headless Chromium: checked at 1280 and 390 px, screenshotted (.build/check-report/)
#   make fuzz         the libFuzzer targets, 60 s each (scripts/fuzz.sh)
#   make memcheck     `share` under valgrind on small, odd-size and committed media (scripts/memcheck.sh; part of make test)
#   make install      the release `share` and `share-helper` (side by side: share finds its helper next to itself), its man page (share.1) and its bash, zsh and fish completions under PREFIX
#   make uninstall    removes what make install put there
# Variables: ROUNDS, SCENARIOS, SHARE_BIN (a prebuilt share; skips the build), PREFIX (/usr/local), DESTDIR.

SWIFT ?= swift
PREFIX ?= /usr/local
BINDIR = $(DESTDIR)$(PREFIX)/bin
MANDIR = $(DESTDIR)$(PREFIX)/share/man/man1
BASHDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
FISHDIR = $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d

.PHONY: all build test corpus bench bench-quick clean-bench check-report fuzz memcheck install uninstall

all: build

build:
	$(SWIFT) build -c release --product share
	$(SWIFT) build -c release --product share-helper

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

# The man page and the completion scripts are made by the binary from its option table.
install: build
	install -d $(BINDIR) $(MANDIR) $(BASHDIR) $(ZSHDIR) $(FISHDIR)
	install -m 0755 .build/release/share $(BINDIR)/share
	install -m 0755 .build/release/share-helper $(BINDIR)/share-helper
	.build/release/share man > $(MANDIR)/share.1
	.build/release/share completion bash > $(BASHDIR)/share
	.build/release/share completion zsh > $(ZSHDIR)/_share
	.build/release/share completion fish > $(FISHDIR)/share.fish
	chmod 0644 $(MANDIR)/share.1 $(BASHDIR)/share $(ZSHDIR)/_share $(FISHDIR)/share.fish

uninstall:
	rm -f $(BINDIR)/share $(BINDIR)/share-helper $(MANDIR)/share.1 $(BASHDIR)/share $(ZSHDIR)/_share $(FISHDIR)/share.fish
