#!/usr/bin/env python3
"""Draws the claims docs/claims-check.md checks (issue 60), reproducibly.

usage: python3 scripts/draw-claims.py [COMMIT] [COUNT]   (default: 0c3e3b5, the commit drawn from; 25)

Reads, at COMMIT (git show, so the working tree does not matter): README.md,
docs/*.md (but the rows of docs/design.md's decision table, lines starting
with `|`) and the `///` comments of Sources/ShareIngestCore and Sources/share
(consecutive lines joined into one block). Splits each line (a block) into
sentences, keeps those of more than 40 characters that hold a claim a reader
relies on (a number with a unit, always/never/only/exit/print/default/at
most/at least/every, or a file name), shuffles them with random.seed(60) and
prints the first COUNT as `n. file:line: sentence`.
"""
import random
import re
import subprocess
import sys

PATTERN = re.compile(
    r"\b\d+(\.\d+)?\s*(KB|MB|GB|KiB|MiB|B|s|ms|min|px|bytes|seconds|minutes|hours|days|lines|items|files|characters|%)\b"
    r"|\b(always|never|only|exits?|prints?|default|at most|at least|every)\b|\b[\w-]+\.(swift|sh|sql|json)\b"
)


def git(*arguments):
    return subprocess.run(["git", *arguments], check=True, capture_output=True, text=True).stdout


def sentences(text):
    text = re.sub(r"\s+", " ", text).strip()
    return [s.strip() for s in re.split(r"(?<=[.;:])\s+(?=[A-Z`(*])", text) if s.strip()]


def main():
    commit = sys.argv[1] if len(sys.argv) > 1 else "0c3e3b5"
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    files = git("ls-tree", "-r", "--name-only", commit).split("\n")
    docs = ["README.md"] + sorted(f for f in files if re.fullmatch(r"docs/[^/]+\.md", f))
    sources = sorted(
        f for f in files if re.match(r"Sources/(ShareIngestCore|share)/", f) and f.endswith(".swift")
    )
    units = []
    for path in docs:
        for number, line in enumerate(git("show", f"{commit}:{path}").split("\n"), 1):
            if path == "docs/design.md" and line.lstrip().startswith("|"):
                continue  # the decision table: not drawn from
            if line.startswith("```") or not line.strip():
                continue
            units += [(path, number, s) for s in sentences(line)]
    for path in sources:
        lines = git("show", f"{commit}:{path}").split("\n")
        i = 0
        while i < len(lines):
            if not lines[i].strip().startswith("///"):
                i += 1
                continue
            start, block = i, []
            while i < len(lines) and lines[i].strip().startswith("///"):
                block.append(lines[i].strip()[3:])
                i += 1
            units += [(path, start + 1, s) for s in sentences(" ".join(block))]
    candidates = [u for u in units if PATTERN.search(u[2]) and len(u[2]) > 40]
    random.seed(60)
    order = random.sample(range(len(candidates)), len(candidates))
    print(f"# at {commit}: {len(units)} sentences, {len(candidates)} holding a claim; the first {count} drawn")
    for n, index in enumerate(order[:count], 1):
        path, line, sentence = candidates[index]
        print(f"{n}. {path}:{line}: {sentence}")


if __name__ == "__main__":
    main()
