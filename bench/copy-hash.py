#!/usr/bin/env python3
"""What the content hash costs beside the copy, and whether moving it off the
copy's path would save any (issue 35, item 2).

    python3 bench/copy-hash.py bench/corpus/photos [ROUNDS]

Copies every file of the folder durably (O_EXCL create, fsync) three ways, in
alternating rounds after one warm-up round (the sources in the page cache, as
after the sniff), and prints the medians of wall and CPU time:
  - read + SHA-256 + write through one 1 MiB buffer: what FileCopier.transfer
    does (Sources/ShareIngest/FileSystem/FileCopier.swift);
  - copy_file_range inside the kernel, then SHA-256 of the copy from the page
    cache through a read-only mapping (MAP_POPULATE): the bytes never pass
    through a buffer of ours;
  - copy_file_range alone, no hash: the copy's floor.
The first two differ from the third by what hashing costs; they differ from
each other by what the kernel copy would save. hashlib uses OpenSSL's SHA-256,
the library the pipeline links (libcrypto)."""
import hashlib, mmap, os, resource, shutil, sys, time

src = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
files = sorted(os.path.join(src, f) for f in os.listdir(src))
dest = "/tmp/copyhash-dest"

def today(s, d):
    h = hashlib.sha256()
    with open(s, "rb", buffering=0) as i:
        o = os.open(d, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        buf = bytearray(1 << 20)
        mv = memoryview(buf)
        while True:
            n = i.readinto(buf)
            if not n:
                break
            h.update(mv[:n])
            os.write(o, mv[:n])
        os.fsync(o); os.close(o)
    return h.hexdigest()

def kernel_copy(s, d, mode):
    """Copies s to a new file d inside the kernel; returns (source fd, d's fd, size)."""
    i = os.open(s, os.O_RDONLY)
    size = os.fstat(i).st_size
    o = os.open(d, mode | os.O_CREAT | os.O_EXCL, 0o600)
    left = size
    while left:
        n = os.copy_file_range(i, o, left)
        if n == 0:
            break
        left -= n
    return i, o, size

def kernel_then_map(s, d):
    i, o, size = kernel_copy(s, d, os.O_RDWR)
    h = hashlib.sha256()
    if size:
        m = mmap.mmap(o, size, prot=mmap.PROT_READ, flags=mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0))
        h.update(m)
        m.close()
    os.fsync(o); os.close(o); os.close(i)
    return h.hexdigest()

def kernel_only(s, d):
    i, o, _ = kernel_copy(s, d, os.O_WRONLY)
    os.fsync(o); os.close(o); os.close(i)
    return ""

ways = {"read+hash+write": today, "copy_file_range+mmap hash": kernel_then_map, "copy_file_range, no hash": kernel_only}
results = {k: [] for k in ways}
for r in range(rounds + 1):
    for name, f in ways.items():
        shutil.rmtree(dest, ignore_errors=True); os.makedirs(dest)
        os.sync()
        t0 = time.perf_counter(); c0 = resource.getrusage(resource.RUSAGE_SELF)
        digests = [f(s, os.path.join(dest, str(k))) for k, s in enumerate(files)]
        c1 = resource.getrusage(resource.RUSAGE_SELF); t1 = time.perf_counter()
        if r:  # round 0 warms the page cache
            results[name].append((t1 - t0, (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime), c1.ru_utime - c0.ru_utime, c1.ru_stime - c0.ru_stime))
        if name != "copy_file_range, no hash":
            check = digests
    assert today(files[0], dest + "/x1") == kernel_then_map(files[0], dest + "/x2")
med = lambda xs: sorted(xs)[len(xs) // 2]
print(f"{len(files)} files, {sum(os.path.getsize(f) for f in files) / 1e6:.0f} MB, medians of {rounds} alternating rounds")
for name, rs in results.items():
    print(f"{name:28s} wall {med([x[0] for x in rs]):.3f} s  CPU {med([x[1] for x in rs]):.3f} s (user {med([x[2] for x in rs]):.3f}, sys {med([x[3] for x in rs]):.3f})")
shutil.rmtree(dest, ignore_errors=True)
