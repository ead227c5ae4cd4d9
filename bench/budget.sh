#!/usr/bin/env bash
# The work a drop costs per item besides decoding (issue 35, item 1): system
# calls by name, fsyncs, renames, helper round trips (messages on the helper
# sockets), journal writes (to the SQLite WAL), bytes read from each source and
# from its copy, and heap allocations. Counts, not times: they do not depend on
# how loaded the machine is, so a change can be priced on a busy machine too.
#
#   SHARE_BIN=.build/release/share bash bench/budget.sh bench/corpus/photos
#   ALLOCATIONS=0 ...   skip the heaptrack run (slow)
#
# Prints one table (per item), and keeps the raw traces under $BUDGET_DIR
# (default: a temporary folder, printed).
set -euo pipefail
cd "$(dirname "$0")/.."
share=$(realpath "${SHARE_BIN:-.build/release/share}")
drop=$(realpath "${1:?usage: bench/budget.sh DROP}")
out=${BUDGET_DIR:-$(mktemp -d)}
mkdir -p "$out"
items=$(find "$drop" -type f ! -name '.*' | wc -l)
echo "budget: $items items of $drop, share $share, traces in $out" >&2

# One traced run: every process (the helpers too; one trace file per process,
# so no call is split), each call with its file descriptor's path (-y) and its
# result, so reads can be summed per file.
rm -rf "$out/container"
rm -f "$out"/trace.*
strace -ff -y -qq -s 0 -o "$out/trace" -e trace='!futex,clock_gettime,gettid,getpid,rt_sigprocmask,sched_yield' \
  "$share" ingest --container "$out/container" --report "$out/report.json" --quiet "$drop/" > /dev/null
ingested=$(jq '[.items[] | select(.status == "ingested")] | length' "$out/report.json")

python3 - "$out/trace" "$items" "$drop" "$out/container" > "$out/budget.txt" <<'EOF'
import collections, re, sys
trace, items, drop, container = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
calls = collections.Counter()
bytes_read = collections.Counter()
special = collections.Counter()
line_re = re.compile(r'^()(\w+)\((.*)\)\s+=\s+(-?\d+)')
fd_re = re.compile(r'^\d+<([^>]*)>')
import glob
lines = (line for name in sorted(glob.glob(trace + ".*")) for line in open(name, errors="replace"))
for line in lines:
    m = line_re.match(line)
    if not m:
        continue
    pid, name, args, result = m.group(1), m.group(2), m.group(3), int(m.group(4))
    calls[name] += 1
    fd = fd_re.match(args)
    path = fd.group(1) if fd else ""
    if name in ("read", "pread64", "readv", "preadv") and result > 0:
        if path.startswith(drop):
            bytes_read["source"] += result
        elif path.startswith(container) and "/journal" not in path:
            bytes_read["copy (container)"] += result
        elif path.startswith("socket:"):
            bytes_read["helper sockets"] += result
    if name in ("fsync", "fdatasync"):
        special["fsync of the journal (WAL)" if path.endswith("-wal") else
                "fsync of a folder" if not re.search(r'\.[^/]*$', path.rsplit('/', 1)[-1]) else "fsync of a file"] += 1
    if name in ("pwrite64", "write") and path.endswith("-wal"):
        special["journal (WAL) writes"] += 1
    if name in ("sendmsg", "recvmsg") and path.startswith(("socket:", "UNIX")):
        special[f"{name} on a socket"] += 1
    if name in ("copy_file_range",):
        special["copy_file_range"] += 1
    if name in ("rename", "renameat", "renameat2", "linkat", "link"):
        special["renames and links"] += 1
    if name in ("clone", "clone3", "vfork", "fork"):
        special["processes and threads started"] += 1
print(f"per item ({items} items): system calls of every process, the helpers included")
print(f"{'all system calls':40} {sum(calls.values()) / items:10.1f}")
for name, count in calls.most_common(15):
    print(f"  {name:38} {count / items:10.1f}")
for name, count in sorted(special.items()):
    print(f"{name:40} {count / items:10.2f}")
for name, count in sorted(bytes_read.items()):
    print(f"bytes read: {name:28} {count / items / 1e6:10.2f} MB")
EOF
cat "$out/budget.txt"
echo "ingested: $ingested of $items"

if [ "${ALLOCATIONS:-1}" = 1 ] && command -v heaptrack > /dev/null; then
  rm -rf "$out/container"
  heaptrack -o "$out/heap" "$share" ingest --container "$out/container" --quiet "$drop/" > /dev/null 2>&1 || true
  file=$(ls "$out"/heap*.zst "$out"/heap*.gz 2>/dev/null | head -n 1)
  if [ -n "$file" ]; then
    calls=$(heaptrack_print "$file" 2>/dev/null | sed -n 's/^total memory allocations: *\([0-9]*\).*/\1/p; s/^calls to allocation functions: \([0-9]*\).*/\1/p' | tail -n 1)  # tail, not head: an early close would fail the pipeline (pipefail)
    [ -n "$calls" ] && echo "heap allocations of the parent process per item: $((calls / items))"
  fi
fi
