#!/usr/bin/env python3
"""Samples the memory high-water marks of a process tree until its root exits.

    bench/peaks.py PID OUT

Every 20 ms it reads /proc/*/status of PID's descendants, and at the end writes
"PARENT_KB HELPER_KB" to OUT: the largest VmHWM of a `share` process below PID
(the command itself) and the largest of the decoder helpers' (processes named
`share-decoder`, forked by the helper template, which is not below PID: it
leaves its parent). Run one measured command at a time. VmHWM only grows, so
one sample after a process's peak is enough."""
import os, sys, time

root, out = int(sys.argv[1]), sys.argv[2]
parent_peak = helper_peak = 0

def status(pid):
    fields = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
    except OSError:
        return None
    return fields

while os.path.exists(f"/proc/{root}"):
    table = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = status(entry)
            if fields:
                table[int(entry)] = fields
    def below_root(pid):
        while pid in table and pid > 1:
            if pid == root:
                return True
            pid = int(table[pid].get("PPid", "0"))
        return False
    for pid, fields in table.items():
        hwm = int(fields.get("VmHWM", "0 kB").split()[0])
        if fields.get("Name") == "share-decoder":
            helper_peak = max(helper_peak, hwm)
        elif fields.get("Name") == "share" and pid != root and below_root(pid):
            parent_peak = max(parent_peak, hwm)
    time.sleep(0.02)
with open(out, "w") as f:
    f.write(f"{parent_peak} {helper_peak}\n")
