#!/usr/bin/env bash
# Checks that the tests can fail: applies each breakage of scripts/mutations/
# (one at a time) to the source tree, rebuilds, runs the tests that should
# catch it RUNS times (default 3), and reports it as
#   caught    every run failed
#   SURVIVED  at least one run passed (a test is missing, or fails only by luck)
#   stale     the code it breaks has changed (its text is not found exactly once): rewrite it
#   no build  the broken code does not compile (rewrite it)
# then restores the file, byte for byte, whatever happens (error, Ctrl-C,
# SIGTERM), and rebuilds, so .build never keeps a broken binary. Other
# uncommitted changes in the tree are left alone (no git stash, no checkout:
# only the mutated file is copied aside and put back).
#
# usage: scripts/mutation-check.sh [--runs N] [--logs DIR] [--list] [--stale] [NAME...]
#   --stale: only check that each breakage's hunks still apply (no build, no test; exit 1 if one is stale)
#   NAME: a file of scripts/mutations/ without .txt, or a prefix of it (e.g. 04)
#   --logs DIR: keep each run's whole test output as DIR/<name>.<run>.log
# A mutation file: `what:`, `file:` and `tests:` (a swift test --filter regex)
# lines, then one or more hunks, each replacing text found exactly once:
#   <<<<<<< before
#   (lines of the file)
#   =======
#   (their replacement)
#   >>>>>>> after
# Exit status: 0 if every mutation run was caught, 1 otherwise.
# (Display pipelines that stop reading early end in `|| true`: with pipefail a
# SIGPIPE'd grep would otherwise end the script.)
set -euo pipefail
cd "$(dirname "$0")/.."

runs=3
list=0
stale=0
logs=""
names=()
while (($#)); do
  case "$1" in
    --runs) runs=${2:?--runs N}; shift 2 ;;
    --list) list=1; shift ;;
    --stale) stale=1; shift ;;
    --logs) logs=${2:?--logs DIR}; mkdir -p "$logs"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) names+=("$1"); shift ;;
  esac
done

mutations=()
for file in scripts/mutations/*.txt; do
  base=$(basename "$file" .txt)
  if ((${#names[@]} == 0)); then mutations+=("$file"); continue; fi
  for name in "${names[@]}"; do
    if [[ "$base" == "$name"* ]]; then mutations+=("$file"); break; fi
  done
done
((${#mutations[@]})) || { echo "mutation-check: no mutation matches ${names[*]}" >&2; exit 2; }

field() { sed -n "/^$2: /{s/^$2: //p;q;}" "$1"; }

if ((list)); then
  for m in "${mutations[@]}"; do printf '%-40s %s\n' "$(basename "$m" .txt)" "$(field "$m" what)"; done
  exit 0
fi

# Replaces each hunk's text, found exactly once, in the target; exit 3 if a hunk is stale.
# A hunk not found as written is looked for again with whitespace ignored (the
# same characters, any spacing and line breaks between them, as a formatter
# may have rewrapped the lines); found once, that text is replaced.
apply() {
  perl -e '
    my ($mutation, $target) = @ARGV;
    local $/; open(my $m, "<", $mutation) or die; my $text = <$m>; close $m;
    open(my $t, "<", $target) or die "$target: $!"; my $source = <$t>; close $t;
    my @hunks = ($text =~ /^<<<<<<< before\n(.*?)^=======\n(.*?)^>>>>>>> after\n/msg);
    die "no hunk in $mutation\n" unless @hunks;
    for (my $i = 0; $i < @hunks; $i += 2) {
      my ($before, $after) = ($hunks[$i], $hunks[$i + 1]);
      my $count = () = $source =~ /\Q$before\E/g;
      if ($count == 0) {
        (my $squeezed = $before) =~ s/\s+//g;
        my $pattern = join("\\s*", map { quotemeta } split(//, $squeezed));
        my @spans;
        while ($source =~ /$pattern/g) { push @spans, [$-[0], $+[0]]; }
        if (@spans == 1) {
          my ($start, $end) = @{$spans[0]};
          substr($source, $start, $end - $start) = $after;
          next;
        }
        $count = scalar @spans;
      }
      if ($count != 1) { print STDERR "hunk ", $i / 2 + 1, " is found $count times\n"; exit 3; }
      my $at = index($source, $before);
      substr($source, $at, length $before) = $after;
    }
    open($t, ">", $target) or die; print $t $source; close $t;
  ' "$1" "$2"
}

# --stale: only checks that every hunk still applies (its text found once in
# its file, on a copy: nothing is built or changed). A second; scripts/test.sh
# runs it, so a refactor that moves the code a breakage quotes is named at once.
if ((stale)); then
  copy=$(mktemp /tmp/mutation-stale.XXXXXX)
  found=0
  for m in "${mutations[@]}"; do
    file=$(field "$m" file)
    if [ ! -f "$file" ]; then echo "stale     $(basename "$m" .txt): $file does not exist"; found=1; continue; fi
    cp "$file" "$copy"
    if ! why=$(apply "$m" "$copy" 2>&1); then echo "stale     $(basename "$m" .txt): $file: $why"; found=1; fi
  done
  rm -f "$copy"
  exit "$found"
fi

work=$(mktemp -d /tmp/mutation-check.XXXXXX)
target=""   # the file currently mutated (empty: none)
log="$work/log"

restore() {
  if [ -n "$target" ]; then
    cp -p "$work/original" "$target"
    if cmp -s "$work/original" "$target"; then echo "  restored $target"; else echo "mutation-check: COULD NOT RESTORE $target (copy kept at $work/original)" >&2; exit 3; fi
    target=""
  fi
}
build() { swift build --build-tests >"$log" 2>&1; }
finish() {
  local status=$?
  trap - EXIT INT TERM HUP
  restore
  # The tree is as it was: rebuild, so no later `swift test --skip-build` runs a broken binary.
  echo "mutation-check: rebuilding the restored tree"
  build || { echo "mutation-check: the restored tree does not build:"; tail -n 20 "$log"; }
  rm -rf "$work"
  exit "$status"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

# Runs the filter once; 0 if the tests passed.
run_tests() { swift test --skip-build --filter "$1" >"$log.test" 2>&1; }

echo "mutation-check: building the tree as it is"
build || { tail -n 20 "$log"; echo "mutation-check: the tree does not build" >&2; exit 2; }
declare -A checked
for m in "${mutations[@]}"; do
  filter=$(field "$m" tests)
  [ -n "${checked[$filter]:-}" ] && continue
  echo "mutation-check: baseline: $filter"
  if ! run_tests "$filter"; then
    { grep -E '^✘' "$log.test" | head -n 10; } || true
    echo "mutation-check: the tests fail without any mutation: fix them first" >&2
    exit 2
  fi
  checked[$filter]=1
done

summary=()
all_caught=1
for m in "${mutations[@]}"; do
  name=$(basename "$m" .txt)
  file=$(field "$m" file)
  filter=$(field "$m" tests)
  echo
  echo "== $name: $(field "$m" what)"
  echo "   $file; tests: $filter"
  cp -p "$file" "$work/original"
  target=$file
  status=0
  apply "$m" "$file" || status=$?
  if ((status == 3)); then
    restore
    summary+=("stale     $name")
    all_caught=0
    continue
  elif ((status != 0)); then
    exit 2
  fi
  if ! build; then
    { grep -E 'error:' "$log" | head -n 5; } || true
    restore
    summary+=("no build  $name")
    all_caught=0
    continue
  fi
  failed=0
  for ((i = 1; i <= runs; i++)); do
    result=0
    run_tests "$filter" || result=$?
    if [ -n "$logs" ]; then cp "$log.test" "$logs/$name.$i.log"; fi
    if ((result == 0)); then
      echo "   run $i: passed"
    else
      failed=$((failed + 1))
      echo "   run $i: failed: $(grep -E '^✘ Test ' "$log.test" | grep -v '^✘ Test run with' | sed -E 's/^✘ Test ([^ (]+).*/\1/' | sort -u | tr '\n' ' ')"
      # The first two issues: the failed expectation, then its message.
      { grep -E 'recorded an issue' -A1 "$log.test" | grep -vE '^--$' | head -n 4 | sed -E 's/^✘ Test .* recorded an issue at //' | cut -c1-240 | sed 's/^/      /'; } || true
    fi
  done
  restore
  if ((failed == runs)); then
    summary+=("caught    $name ($failed/$runs runs failed)")
  else
    summary+=("SURVIVED  $name ($failed/$runs runs failed)")
    all_caught=0
  fi
done

echo
echo "mutation-check: $runs runs each"
printf '  %s\n' "${summary[@]}"
((all_caught)) && exit 0 || exit 1
