#!/usr/bin/env python3
"""The references between the folders of Sources/ShareIngestCore (issue 60):
which folders' files name types declared in which other folders, and the
cycles among them. Usage and output: scripts/folder-references.sh."""
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
spec = importlib.util.spec_from_file_location("doclinks", os.path.join(HERE, "check-doc-links.py"))
doclinks = importlib.util.module_from_spec(spec)
spec.loader.exec_module(doclinks)
strip = doclinks.strip

# A type declared at a file's top level (not nested: a nested type is reached
# through its outer one, which is what is counted).
TOP_TYPE = re.compile(r"^(?:(?:public|package|internal|fileprivate|private|final|indirect|@\w+(?:\([^)]*\))?)\s+)*"
                      r"(?:struct|class|enum|protocol|actor|typealias)\s+([A-Za-z_]\w*)", re.M)
IDENTIFIER = re.compile(r"\b[A-Z][A-Za-z0-9_]*\b")


def main(argv):
    strict = "--strict" in argv
    core = os.path.join(ROOT, "Sources", "ShareIngestCore")
    files = {}
    for folder, _, names in os.walk(core):
        for name in names:
            if name.endswith(".swift"):
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, core)
                room = rel.split(os.sep)[0] if os.sep in rel else "(top)"
                with open(path, encoding="utf-8", errors="replace") as f:
                    files[path] = (room, strip(f.read()))
    declared = {}  # type -> set of rooms
    for path, (room, code) in files.items():
        for m in TOP_TYPE.finditer(code):
            declared.setdefault(m.group(1), set()).add(room)
    edges = {}  # (from, to) -> {type: set(file names)}
    for path, (room, code) in sorted(files.items()):
        for name in set(IDENTIFIER.findall(code)):
            owners = declared.get(name, set())
            if len(owners) != 1:
                continue  # not ours, or declared in several rooms: not counted
            (owner,) = owners
            if owner != room:
                edges.setdefault((room, owner), {}).setdefault(name, set()).add(os.path.basename(path))
    rooms = sorted({room for room, _ in files.values()})
    print("references (folder -> folder it names types of: the types, with the files naming them):")
    for a in rooms:
        for b in rooms:
            if (a, b) in edges:
                types = edges[(a, b)]
                shown = ", ".join(f"{t} ({', '.join(sorted(fs))})" for t, fs in sorted(types.items()))
                print(f"  {a} -> {b}: {len(types)} type(s): {shown}")
    # Strongly connected components (Tarjan): each of more than one folder is a cycle.
    graph = {a: sorted(b for (x, b) in edges if x == a) for a in rooms}
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            sccs.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in rooms:
        if v not in index:
            visit(v)
    cycles = [c for c in sccs if len(c) > 1]
    mutual = [(a, b) for (a, b) in edges if a < b and (b, a) in edges]
    print("cycles (folders that reach each other through their references):")
    if not cycles:
        print("  none")
    for c in sorted(cycles):
        print(f"  {', '.join(c)}")
    print("both ways (a cycle of two folders):")
    if not mutual:
        print("  none")
    for a, b in sorted(mutual):
        print(f"  {a} <-> {b}: {a} names {', '.join(sorted(edges[(a, b)]))}; {b} names {', '.join(sorted(edges[(b, a)]))}")
    if cycles and strict:
        print(f"folder-references: {len(cycles)} cycle(s) between folders of Sources/ShareIngestCore", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
