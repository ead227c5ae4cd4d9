#!/usr/bin/env python3
"""Summarises a bench/run.sh results folder: medians, ratios, peak RSS, targets
and ours' per-stage timings, as Markdown on stdout.

Usage: python3 bench/summarize.py bench/results/<timestamp>
"""
import csv
import glob
import json
import os
import statistics
import sys

# Targets from issues 5 and 16 (ratio of wall times ours/theirs, same run).
RATIO_TARGETS = {"photos": 0.9, "videos": 0.3, "mixed": 0.45, "iphone": 0.6}
SCALE_TIME_TARGET = 11.0
SCALE_RSS_TARGET = 1.2
SCALE_RSS_MIB_TARGET = 150.0
STAGES = ["sniff", "copy", "probe", "thumbnail", "manifest"]


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def load_runs(folder):
    with open(os.path.join(folder, "runs.tsv")) as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    for r in rows:
        r["round"] = int(r["round"])
        r["wall_s"] = float(r["wall_s"])
        r["rss_kib"] = int(r["rss_kib"] or 0)
        r["cpu_s"] = float(r.get("cpu_s") or 0)
        r["exit"] = int(r["exit"])
    return [r for r in rows if r["round"] > 0]  # round 0 is the warm-up


def side(rows, scenario, name):
    return [r for r in rows if r["scenario"] == scenario and r["side"] == name]


def fmt_s(x):
    return f"{x:.2f}"


def mib(kib):
    return kib / 1024.0


def verdict(ok):
    return "met" if ok else "MISSED"


def main():
    folder = sys.argv[1]
    rows = load_runs(folder)
    scenarios = []
    for r in rows:
        if r["scenario"] not in scenarios:
            scenarios.append(r["scenario"])
    out = []
    p = out.append
    machine = os.path.join(folder, "machine.txt")
    if os.path.exists(machine):
        p("```")
        p(open(machine).read().rstrip())
        p("```")
        p("")

    p("| scenario | rounds | median ours (s) | median theirs (s) | ours/theirs | target | CPU s ours / theirs (median) | peak RSS ours (MiB) | peak RSS theirs (MiB) | delivered ours: items/thumbs | theirs: items/thumbs |")
    p("|---|---|---|---|---|---|---|---|---|---|---|")
    targets = []
    for s in scenarios:
        if s == "scale":
            continue
        a, b = side(rows, s, "ours"), side(rows, s, "theirs")
        ma, mb = median([r["wall_s"] for r in a]), median([r["wall_s"] for r in b])
        ratio = ma / mb if mb else float("nan")
        ra, rb = max((r["rss_kib"] for r in a), default=0), max((r["rss_kib"] for r in b), default=0)
        t = RATIO_TARGETS.get(s)
        tgt = f"≤ {t} ({verdict(ratio <= t)})" if t else ""
        if t:
            targets.append((f"{s}: ours/theirs ≤ {t}", f"{ratio:.2f}", ratio <= t))
        da = f"{a[-1]['items']}/{a[-1]['thumbnails']}" if a else ""
        db = f"{b[-1]['items']}/{b[-1]['thumbnails']}" if b else ""
        bad = [r for r in a if r["exit"] not in (0, 1)] + [r for r in b if r["exit"] != 0]
        note = " (nonzero exit in some runs)" if bad else ""
        ca, cb = median([r["cpu_s"] for r in a]), median([r["cpu_s"] for r in b])
        p(f"| {s}{note} | {len(a)} | {fmt_s(ma)} | {fmt_s(mb)} | **{ratio:.2f}** | {tgt} | {ca:.2f} / {cb:.2f} | {mib(ra):.0f} | {mib(rb):.0f} | {da} | {db} |")
    p("")

    # Variants of ours run side by side (OURS_VARIANTS): each one's ratio to
    # theirs, and each ratio relative to the first variant's.
    variants = []
    for r in rows:
        if r["side"].startswith("ours") and r["side"] not in variants and r["scenario"] != "scale":
            variants.append(r["side"])
    if len(variants) > 1:
        p("Variants of ours, side by side in the same rounds (median wall s; ratio to theirs; ratio relative to " + variants[-1] + "):")
        p("")
        p("| scenario | " + " | ".join(variants) + " | theirs | " + " | ".join(f"{v}/theirs" for v in variants) + " | " + " | ".join(f"{v} vs {variants[-1]}" for v in variants[:-1]) + " |")
        p("|---|" + "---|" * (3 * len(variants)))
        for s in scenarios:
            if s == "scale":
                continue
            mb = median([r["wall_s"] for r in side(rows, s, "theirs")])
            ms = [median([r["wall_s"] for r in side(rows, s, v)]) for v in variants]
            ratios = [m / mb if mb else float("nan") for m in ms]
            rel = [(x / ratios[-1] - 1) * 100 if ratios[-1] else float("nan") for x in ratios[:-1]]
            cpu = [median([r["cpu_s"] for r in side(rows, s, v)]) for v in variants]
            p(f"| {s} | " + " | ".join(f"{m:.2f} ({c:.2f} CPU)" for m, c in zip(ms, cpu)) + f" | {mb:.2f} | " + " | ".join(f"**{x:.3f}**" for x in ratios) + " | " + " | ".join(f"{x:+.1f} %" for x in rel) + " |")
        p("")

    # BEFORE_BIN: the other build, run in the same rounds.
    before = [s for s in scenarios if side(rows, s, "before")]
    if before:
        p("Before and after in the same rounds (BEFORE_BIN is \"before\", SHARE_BIN is \"ours\"):")
        p("")
        p("| scenario | median before (s) | median ours (s) | median theirs (s) | before/theirs | ours/theirs | CPU s before / ours | peak RSS before / ours (MiB) | delivered before |")
        p("|---|---|---|---|---|---|---|---|---|")
        for s in before:
            a, b, c = side(rows, s, "ours"), side(rows, s, "theirs"), side(rows, s, "before")
            ma, mb, mc = (median([r["wall_s"] for r in x]) for x in (a, b, c))
            ca, cc = median([r["cpu_s"] for r in a]), median([r["cpu_s"] for r in c])
            ra, rc = max((r["rss_kib"] for r in a), default=0), max((r["rss_kib"] for r in c), default=0)
            dc = f"{c[-1]['items']}/{c[-1]['thumbnails']}" if c else ""
            p(f"| {s} | {fmt_s(mc)} | {fmt_s(ma)} | {fmt_s(mb)} | {mc / mb:.2f} | **{ma / mb:.2f}** | {cc:.2f} / {ca:.2f} | {mib(rc):.0f} / {mib(ra):.0f} | {dc} |")
        p("")

    def floor_line(file, scenario, describe):
        """A scenario's floor from FILE (its rounds' floor_s), against ours and theirs."""
        path = os.path.join(folder, file)
        if not (os.path.exists(path) and side(rows, scenario, "ours")):
            return
        with open(path) as f:
            fl = list(csv.DictReader(f, delimiter="\t"))
        floor = median([float(r["floor_s"]) for r in fl])
        ma = median([r["wall_s"] for r in side(rows, scenario, "ours")])
        mb = median([r["wall_s"] for r in side(rows, scenario, "theirs")])
        col = lambda name: median([float(r[name]) for r in fl])
        p(f"{describe(len(fl), floor, col)}; ours/floor = **{ma / floor:.2f}**, theirs/floor = {mb / floor:.2f}")
        p("")

    floor_line("floor.tsv", "photos", lambda n, floor, col:
        f"Photos floor (djpeg -scale 1/8 CPU over 2 cores + cp + sync, median of {n}): "
        f"**{floor:.2f} s** = {col('djpeg_cpu_s'):.2f} CPU-s / 2 + {col('copy_s'):.2f} s copy")
    floor_line("videofloor.tsv", "videos", lambda n, floor, col:
        f"Videos floor (one keyframe per file: ffmpeg's decode CPU less its start-up, over 2 cores, + cp + sync, median of {n}): "
        f"**{floor:.2f} s** = ({col('decode_cpu_s'):.2f} - {col('start_cpu_s'):.2f}) CPU-s / 2 + {col('copy_s'):.2f} s copy")

    if "scale" in scenarios:
        a, b = side(rows, "scale", "n100"), side(rows, "scale", "n1000")
        ma, mb = median([r["wall_s"] for r in a]), median([r["wall_s"] for r in b])
        ra, rb = median([r["rss_kib"] for r in a]), median([r["rss_kib"] for r in b])
        pa, pb = max((r["rss_kib"] for r in a), default=0), max((r["rss_kib"] for r in b), default=0)
        tr = mb / ma if ma else float("nan")
        rr = rb / ra if ra else float("nan")
        p("| scale | rounds | median time (s) | median CPU (s) | median peak RSS (MiB) | max peak RSS (MiB) | delivered items/thumbs |")
        p("|---|---|---|---|---|---|---|")
        p(f"| 100 files | {len(a)} | {fmt_s(ma)} | {median([r['cpu_s'] for r in a]):.2f} | {mib(ra):.1f} | {mib(pa):.1f} | {a[-1]['items']}/{a[-1]['thumbnails'] if a else ''} |")
        p(f"| 1000 files | {len(b)} | {fmt_s(mb)} | {median([r['cpu_s'] for r in b]):.2f} | {mib(rb):.1f} | {mib(pb):.1f} | {b[-1]['items']}/{b[-1]['thumbnails'] if b else ''} |")
        p("")
        p(f"- time 1000 / time 100 = **{tr:.2f}** (target ≤ {SCALE_TIME_TARGET}: {verdict(tr <= SCALE_TIME_TARGET)})")
        p(f"- peak RSS 1000 / peak RSS 100 = **{rr:.2f}** (target ≤ {SCALE_RSS_TARGET}: {verdict(rr <= SCALE_RSS_TARGET)})")
        p(f"- peak RSS for 1000 files = **{mib(pb):.1f} MiB** (target ≤ {SCALE_RSS_MIB_TARGET:.0f} MiB: {verdict(mib(pb) <= SCALE_RSS_MIB_TARGET)})")
        p("")
        targets.append((f"scale: time1000/time100 ≤ {SCALE_TIME_TARGET}", f"{tr:.2f}", tr <= SCALE_TIME_TARGET))
        targets.append((f"scale: rss1000/rss100 ≤ {SCALE_RSS_TARGET}", f"{rr:.2f}", rr <= SCALE_RSS_TARGET))
        targets.append((f"scale: peak RSS 1000 files ≤ {SCALE_RSS_MIB_TARGET:.0f} MiB", f"{mib(pb):.1f}", mib(pb) <= SCALE_RSS_MIB_TARGET))

    # Per-stage timings of ours, from --report (seconds summed over items; the
    # stages overlap across worker threads, so they add up to more than the wall).
    reports = sorted(glob.glob(os.path.join(folder, "reports", "*.json")))
    by_group = {}
    for path in reports:
        name = os.path.basename(path)[:-5]  # scenario-side-rN (a side may contain "-")
        parts = name.split("-")
        scen, sd, rnd = parts[0], "-".join(parts[1:-1]), parts[-1]
        if rnd == "r0":
            continue
        try:
            rep = json.load(open(path))
        except (OSError, ValueError):
            continue
        key = f"scale {sd[1:]}" if scen == "scale" else scen if sd == "ours" else f"{scen} ({sd})"
        g = by_group.setdefault(key, {st: [] for st in STAGES + ["wall"]})
        ss = rep.get("stageSeconds", {})
        for st in STAGES:
            g[st].append(float(ss.get(st, 0.0)))
        g["wall"].append(float(rep.get("wallSeconds", 0.0)))
    if by_group:
        p("Per-stage seconds of ours (`--report` stageSeconds, summed over items, median over rounds; "
          "stages run in parallel worker threads, so the sum exceeds the wall time):")
        p("")
        p("| scenario | " + " | ".join(STAGES) + " | wallSeconds (report) |")
        p("|---|" + "---|" * (len(STAGES) + 1))
        for key, g in by_group.items():
            p(f"| {key} | " + " | ".join(f"{median(g[st]):.3f}" for st in STAGES) + f" | {median(g['wall']):.3f} |")
        p("")

    if targets:
        p("Targets (issues 5 and 16):")
        p("")
        for what, value, ok in targets:
            p(f"- {what}: {value} — {verdict(ok)}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
