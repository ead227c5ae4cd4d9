#!/usr/bin/env python3
"""Finds each ``symbol`` link (DocC's double-backtick symbol link) in the `///`
doc comments of the Swift files under Sources/ and prints, as file:line, each
one that names nothing declared in the package's sources; and each relative
link of README.md, BENCHMARKS.md and docs/*.md to a file that does not exist
or an anchor that is no heading of it (issue 60). Exit 1 if any.

How a link resolves (pragmatic, not DocC itself):
- its path is split at `/`; a leading target name (``MediaFormats/ThumbHash``)
  is dropped; a DocC disambiguation suffix (`-swift.property`, `-1a2b3`) is
  ignored;
- one component: any type, or any declaration at a type's or the file's top
  level (not a local), of that name;
- several: the first names a type (at any nesting), each next one a member
  declared in that type's body or an extension of it (a nested type counts,
  so ``Outer/Inner/member`` works);
- a signature, ``name(_:label:)`` or ``init(row:)``: a function, initialiser,
  subscript or enum case of that name whose argument labels are exactly those
  (an unlabelled argument is `_`); ``name()`` needs one with no arguments.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = os.path.join(ROOT, "Sources")
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
KEYWORDS = {"func", "var", "let", "init", "subscript", "case", "static", "class", "struct", "enum",
            "protocol", "actor", "extension", "typealias", "where"}


def strip(text):
    """The text with comments and string literals blanked (newlines kept), so
    braces and declarations are only the code's."""
    out = list(text)
    n = len(text)
    i = 0

    def blank(a, b):
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    def skip_string(i):
        # i at the first character of the opening delimiter (after any `#`s).
        hashes = 0
        j = i
        while j < n and text[j] == "#":
            hashes += 1
            j += 1
        multi = text.startswith('"""', j)
        j += 3 if multi else 1
        close = ('"""' if multi else '"') + "#" * hashes
        escape = "\\" + "#" * hashes
        while j < n:
            if text.startswith(escape, j):
                k = j + len(escape)
                if k < n and text[k] == "(":
                    j = skip_code(k + 1, ")")
                    continue
                j = k + 1
                continue
            if text.startswith(close, j):
                return j + len(close)
            if not multi and text[j] == "\n":
                return j  # unterminated: stop at the line's end
            j += 1
        return n

    def skip_code(j, closer):
        # Code inside an interpolation: up to the matching `)`.
        depth = 0
        while j < n:
            c = text[j]
            if c == "(":
                depth += 1
            elif c == ")":
                if depth == 0:
                    return j + 1
                depth -= 1
            elif c == '"' or (c == "#" and re.match(r'#+"', text[j:j + 8])):
                j = skip_string(j)
                continue
            j += 1
        return n

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth += 1
                    j += 2
                elif text.startswith("*/", j):
                    depth -= 1
                    j += 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c == '"' or (c == "#" and re.match(r'#+"', text[i:i + 8])):
            j = skip_string(i)
            blank(i, j)
            i = j
        else:
            i += 1
    return "".join(out)


def labels_of(params):
    """The argument labels of a parameter clause's text (inside its parentheses)."""
    parts, depth, current = [], 0, ""
    for c in params.replace("->", "  "):
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += c
    if current.strip():
        parts.append(current)
    labels = []
    for part in parts:
        head = part.split(":", 1)
        if len(head) < 2:
            labels.append("_")  # an enum case's unlabelled associated value
            continue
        names = head[0].split()
        labels.append(names[0] if names else "_")
    return tuple(labels)


def balanced(code, i):
    """The text inside the parentheses opening at code[i], and the index after them."""
    depth = 0
    for j in range(i, len(code)):
        if code[j] == "(":
            depth += 1
        elif code[j] == ")":
            depth -= 1
            if depth == 0:
                return code[i + 1:j], j + 1
    return code[i + 1:], len(code)


TYPE_DECL = re.compile(r"\b(struct|class|enum|protocol|actor|extension)\s+(" + IDENT + r"(?:\." + IDENT + r")*)")
DECL = re.compile(r"\b(?:(func)\s+(" + IDENT + r"|[^\s(<]+)\s*(?:<[^>{]*>)?\s*(?=\()"
                  r"|(init)\s*[?!]?\s*(?:<[^>{]*>)?\s*(?=\()"
                  r"|(subscript)\s*(?:<[^>{]*>)?\s*(?=\()"
                  r"|(var|let)\s+(" + IDENT + r")"
                  r"|(case)\s+(" + IDENT + r")"
                  r"|(typealias|associatedtype)\s+(" + IDENT + r")"
                  r"|(struct|class|enum|protocol|actor)\s+(" + IDENT + r"))")


class Index:
    def __init__(self):
        self.types = set()          # simple names of declared types
        self.members = {}           # type simple name -> {name: set(label tuples or None)}
        self.top = {}               # name -> set(label tuples or None), top level or any type's member

    def add(self, owner, name, labels):
        table = self.members.setdefault(owner, {}) if owner else None
        for where in ([table] if table is not None else []) + [self.top]:
            where.setdefault(name, set()).add(labels)

    def scan_header(self, text):
        """A C header's functions and variables (a module map's names, like ``shim_o_path``)."""
        code = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
        for m in re.finditer(r"\b(" + IDENT + r")\s*(?:\(|;|\[)", code):
            self.add(None, m.group(1), None)

    def scan(self, text):
        code = strip(text)
        # The scope opened by each `{`: a type (its simple name) or code.
        events = []
        last = 0
        for m in re.finditer(r"[{};]", code):
            if m.group() == "{":
                header = code[last:m.start()]
                t = None
                tm = None
                for tm in TYPE_DECL.finditer(header):
                    pass
                if tm and tm.group(2).split(".")[-1] not in KEYWORDS and not re.search(r"\b(func|init|var|let|subscript)\b", header[tm.end():]):
                    t = tm.group(2).split(".")[-1]
                events.append((m.start(), "{", t))
            elif m.group() == "}":
                events.append((m.start(), "}", None))
            last = m.end()
        decls = []
        for m in DECL.finditer(code):
            g = m.groups()
            if g[0]:
                _, after = None, m.end()
                params, _ = balanced(code, after)
                decls.append((m.start(), g[1], labels_of(params)))
            elif g[2]:
                params, _ = balanced(code, m.end())
                decls.append((m.start(), "init", labels_of(params)))
            elif g[3]:
                params, _ = balanced(code, m.end())
                decls.append((m.start(), "subscript", labels_of(params)))
            elif g[4]:
                decls.append((m.start(), g[5], None))
                # `var a, b` / `let (a, b)` are rare; the first name is enough here.
            elif g[6]:
                # `case a, b(x: Int), c`: every name of the list.
                rest = code[m.start() + 4:]
                end = len(rest)
                for stop in ("\n", ";", "}", "{"):
                    k = rest.find(stop)
                    if k >= 0:
                        end = min(end, k)
                line = rest[:end]
                j = 0
                while j < len(line):
                    nm = re.match(r"\s*(" + IDENT + r")\s*", line[j:])
                    if not nm:
                        break
                    name = nm.group(1)
                    j += nm.end()
                    labels = None
                    if j < len(line) and line[j] == "(":
                        params, j2 = balanced(line, j)
                        labels = labels_of(params)
                        j = j2
                    eq = re.match(r"\s*=\s*[^,]*", line[j:])
                    if eq:
                        j += eq.end()
                    decls.append((m.start(), name, labels))
                    comma = re.match(r"\s*,", line[j:])
                    if not comma:
                        break
                    j += comma.end()
            elif g[8]:
                decls.append((m.start(), g[9], None))
            elif g[10]:
                decls.append((m.start(), g[11], None))
                self.types.add(g[11])
        # Walk both in order: a declaration belongs to the type whose body it is
        # directly in; one in code (a function's body, an accessor) is a local.
        stack = []
        ei = 0
        for at, name, labels in sorted(decls, key=lambda d: d[0]):
            while ei < len(events) and events[ei][0] < at:
                _, kind, t = events[ei]
                if kind == "{":
                    stack.append(t)
                elif stack:
                    stack.pop()
                ei += 1
            if not stack:
                self.add(None, name, labels)
            elif stack[-1] is not None:
                self.add(stack[-1], name, labels)

    def has(self, table, name, labels):
        """labels: None for a bare name (any declaration of it), else the tuple wanted."""
        found = table.get(name)
        if not found:
            return False
        if labels is None:
            return True
        if labels == ():
            return () in found or (None in found and name not in ("init", "subscript"))
        return labels in found


LINK = re.compile(r"``([^`\s]+)``")
PART = re.compile(r"^(" + IDENT + r"|[^(]+?)(?:\(([^)]*)\))?(?:-[A-Za-z0-9_.]+)?$")


def parse_part(part):
    m = PART.match(part)
    if not m:
        return part, None
    name, sig = m.group(1), m.group(2)
    if sig is None:
        return name, None
    labels = tuple(x for x in sig.split(":") if x != "") if sig else ()
    return name, labels


def resolves(index, link, targets):
    parts = link.split("/")
    if len(parts) > 1 and parts[0] in targets:
        parts = parts[1:]
    parsed = [parse_part(p) for p in parts]
    if len(parsed) == 1:
        name, labels = parsed[0]
        return (labels is None and name in index.types) or index.has(index.top, name, labels)
    first, first_labels = parsed[0]
    if first not in index.types or first_labels is not None:
        return False
    owner = first
    for k, (name, labels) in enumerate(parsed[1:]):
        table = index.members.get(owner, {})
        if not index.has(table, name, labels):
            return False
        owner = name
    return True


# The documents a reader opens (issue 60): the README and its pages in docs/,
# linked both ways, and the other top-level documents they link to.
MARKDOWN_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def heading_anchors(text):
    """The anchors GitHub gives a Markdown file's headings: lower case, each
    character but letters, digits, `_`, `-` and spaces dropped, spaces made
    `-`; a repeated anchor numbered -1, -2, ...; headings in code blocks skipped."""
    anchors, seen, fence = set(), {}, False
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^#{1,6} (.*)$", line)
        if not m:
            continue
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        if slug in seen:
            seen[slug] += 1
            slug = f"{slug}-{seen[slug]}"
        else:
            seen[slug] = 0
        anchors.add(slug)
    return anchors


def markdown_files():
    docs = os.path.join(ROOT, "docs")
    pages = sorted(os.path.join(docs, n) for n in os.listdir(docs) if n.endswith(".md")) if os.path.isdir(docs) else []
    return [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "BENCHMARKS.md")] + pages


def broken_markdown_links():
    """Prints, as file:line, each relative link of the README, BENCHMARKS.md and
    docs/*.md whose file does not exist or whose #anchor is no heading of it
    (links in code blocks and code spans are not links; URLs with a scheme are
    not checked). Returns how many."""
    texts = {}

    def text_of(path):
        if path not in texts:
            with open(path, encoding="utf-8") as f:
                texts[path] = f.read()
        return texts[path]

    broken = 0
    for path in markdown_files():
        if not os.path.exists(path):
            continue
        fence = False
        for number, line in enumerate(text_of(path).split("\n"), 1):
            if line.lstrip().startswith("```"):
                fence = not fence
            if fence:
                continue
            prose = re.sub(r"`[^`]*`", "", line)
            for m in MARKDOWN_LINK.finditer(prose):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue
                file, _, anchor = target.partition("#")
                resolved = path if not file else os.path.normpath(os.path.join(os.path.dirname(path), file))
                why = None
                if not os.path.exists(resolved):
                    why = "no such file"
                elif anchor and resolved.endswith(".md") and anchor not in heading_anchors(text_of(resolved)):
                    why = f"no heading of {os.path.relpath(resolved, ROOT)} has the anchor #{anchor}"
                if why:
                    print(f"{os.path.relpath(path, ROOT)}:{number}: ({target}): {why}")
                    broken += 1
    return broken


def main():
    broken = broken_markdown_links()
    if broken:
        print(f"check-doc-links: {broken} broken link(s) between the README and its pages", file=sys.stderr)
    targets = set(os.listdir(SOURCES))
    files = []
    headers = []
    for folder, _, names in os.walk(SOURCES):
        files += [os.path.join(folder, n) for n in names if n.endswith(".swift")]
        headers += [os.path.join(folder, n) for n in names if n.endswith(".h")]
    files.sort()
    index = Index()
    for path in headers:
        with open(path, encoding="utf-8", errors="replace") as f:
            index.scan_header(f.read())
    texts = {}
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            texts[path] = f.read()
        index.scan(texts[path])
    stale = 0
    for path in files:
        for number, line in enumerate(texts[path].split("\n"), 1):
            if not line.lstrip().startswith("///"):
                continue
            for m in LINK.finditer(line):
                if not resolves(index, m.group(1), targets):
                    print(f"{os.path.relpath(path, ROOT)}:{number}: ``{m.group(1)}`` names nothing declared in Sources/")
                    stale += 1
    if stale:
        print(f"check-doc-links: {stale} stale symbol link(s): name what is declared, or write it in single backticks", file=sys.stderr)
    return 1 if stale or broken else 0


if __name__ == "__main__":
    sys.exit(main())
