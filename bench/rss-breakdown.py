#!/usr/bin/env python3
"""What a process's peak resident memory is made of.

    bench/rss-breakdown.py [--helpers] -- COMMAND [ARG...]

Runs COMMAND, and every 20 ms while it runs reads its /proc/PID/smaps; keeps
the sample taken when its resident set (the sum of the mappings' Rss) was
largest, and prints that sample summed by what is mapped: each shared library
and executable file (their code and data pages count in RSS as much as the
heap does), the heap and anonymous mappings (malloc's arenas, thread stacks,
libvips' and SQLite's buffers), and the rest. Only COMMAND's own process is
sampled, not the helpers it starts; with --helpers, only the helpers: every
descendant of COMMAND whose executable is `share-helper` (the template and
each decoder helper forked from it), and the largest sample of any one of
them is kept. Prints KiB, largest first, and how much of the peak is pages
shared with other processes (a forked helper shares the template's library
pages, which each process's resident set counts in full); exits with
COMMAND's status.

An outline of where a peak RSS goes, to say what holds a memory bound back
(bench/run.sh's scale scenario measures the same process's peak with
/usr/bin/time)."""
import collections, os, subprocess, sys, time

helpers = len(sys.argv) > 1 and sys.argv[1] == "--helpers"
if helpers:
    del sys.argv[1]
if len(sys.argv) < 3 or sys.argv[1] != "--":
    sys.exit(__doc__)

SHARED = " shared"  # not a mapping: the sample's pages shared with other processes


def descendant_helpers(root):
    """The pids of root's descendants whose executable is share-helper."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    found = []
    for pid in parents:
        ancestor = parents.get(pid)
        while ancestor and ancestor != root:
            ancestor = parents.get(ancestor)
        if ancestor == root:
            try:
                if os.readlink(f"/proc/{pid}/exe").rsplit("/", 1)[-1].startswith("share-helper"):
                    found.append(pid)
            except OSError:
                pass
    return found


def sample(pid):
    """{mapping name: Rss KiB} of one smaps read, or None when the process is gone."""
    sizes = collections.Counter()
    name = None
    try:
        with open(f"/proc/{pid}/smaps") as f:
            for line in f:
                head = line.split(None, 5)
                if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                    path = head[5].strip() if len(head) > 5 else ""
                    name = path or "[anonymous]"
                elif head[0] == "Rss:":
                    sizes[name] += int(head[1])
                elif head[0] in ("Shared_Clean:", "Shared_Dirty:"):
                    sizes[SHARED] += int(head[1])
    except (OSError, IndexError, ValueError):
        return None
    return sizes

child = subprocess.Popen(sys.argv[2:])
best, best_total = collections.Counter(), 0
while child.poll() is None:
    for pid in descendant_helpers(child.pid) if helpers else [child.pid]:
        sizes = sample(pid)
        if sizes:
            total = sum(v for n, v in sizes.items() if n != SHARED)
            if total > best_total:
                best, best_total = sizes, total
    time.sleep(0.02)

shared = best.pop(SHARED, 0)
groups = collections.Counter()
for name, kib in best.items():
    if name.startswith("/"):
        groups[name.rsplit("/", 1)[-1]] += kib
    else:
        groups[name] += kib
whose = "its largest share-helper" if helpers else sys.argv[2]
print(f"peak resident set of {whose}: {best_total} KiB ({best_total / 1024:.1f} MiB), {shared} KiB of it shared with other processes")
files = sum(k for n, k in best.items() if n.startswith("/"))
print(f"  mapped files (libraries, the executable, data files): {files} KiB; anonymous and heap: {best_total - files} KiB")
for name, kib in groups.most_common(25):
    print(f"{kib:10d}  {name}")
sys.exit(child.returncode)
