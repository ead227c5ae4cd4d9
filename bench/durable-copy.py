#!/usr/bin/env python3
"""The floor of copying a drop's sidecars durably, alone (issue 34, speed).

    python3 bench/durable-copy.py DROP DEST [GROUP]

Copies every `.json` file under DROP into DEST the way the pipeline delivers a
file (read it, create a temporary name with O_EXCL, write, fsync, rename into
place; one fsync of DEST at the end) and prints the wall and CPU time. What a
Takeout drop's sidecars cost at the least, beside its photos, with the
pipeline's durability and nothing else: no sniff, no journal, no helper.
With GROUP, the files are written GROUP at a time and then fsynced and renamed
together (does grouping the fsyncs lower the floor?).
DEST must not hold an earlier run's files (remove it first)."""
import os, sys, time

if len(sys.argv) not in (3, 4):
    sys.exit(__doc__)
src_root, dst = sys.argv[1], sys.argv[2]
group = int(sys.argv[3]) if len(sys.argv) == 4 else 1
os.makedirs(dst, exist_ok=True)
files = []
for d, _, names in os.walk(src_root):
    files += [os.path.join(d, n) for n in names if n.endswith('.json')]
t0 = time.time(); c0 = os.times()
pending = []
def settle():
    for fd, i in pending:
        os.fsync(fd); os.close(fd)
        os.rename(f"{dst}/.{i}.json.partial", f"{dst}/{i}.json")
    pending.clear()
for i, f in enumerate(files):
    with open(f, 'rb') as s: data = s.read()
    fd = os.open(f"{dst}/.{i}.json.partial", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, data)
    pending.append((fd, i))
    if len(pending) >= group: settle()
settle()
dfd = os.open(dst, os.O_RDONLY); os.fsync(dfd); os.close(dfd)
c1 = os.times(); t1 = time.time()
print(f"{len(files)} sidecars copied durably: wall {t1-t0:.2f} s, CPU {c1.user-c0.user + c1.system-c0.system:.2f} s (user {c1.user-c0.user:.2f}, system {c1.system-c0.system:.2f})")
