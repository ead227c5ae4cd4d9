#!/usr/bin/env python3
"""The sizes of the code (issue 60, size and form): every function, initializer
and deinitializer in Sources/**/*.swift longer than 80 lines, and every file of
Sources/ShareIngestCore longer than 500 lines. Usage and output:
scripts/code-sizes.sh."""
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

MAX_FUNCTION = 80
MAX_FILE = 500

# A declaration with a body: `func name`, `init`, `init?`, `init!`, `deinit`.
DECLARATION = re.compile(r"\b(?:func\s+([^\s(<]+)|(init)\s*[?!]?\s*[(<]|(deinit)\b)")
# What ends a signature without a body (a protocol's requirement): the next
# declaration, or the end of the type.
NOT_A_BODY = re.compile(r"\b(?:func|init|deinit|var|let|case|subscript|associatedtype|typealias)\b")


def body_start(code, i):
    """The index of the `{` opening the body of the declaration whose signature
    starts at i, or None when it has none (parentheses, brackets and angle
    brackets skipped, so a default argument's closure is not taken for it)."""
    depth = 0
    n = len(code)
    while i < n:
        c = code[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0:
            if c == "{":
                return i
            if c in "};":
                return None
            if c.isalpha() and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] in "_.")):
                if NOT_A_BODY.match(code, i):
                    return None
        i += 1
    return None


def body_end(code, i):
    """The index of the `}` closing the `{` at i."""
    depth = 0
    for j in range(i, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def functions(code):
    """(name, first line, line count) of each declaration with a body, counted
    from the declaration's line to its closing brace's."""
    found = []
    for m in DECLARATION.finditer(code):
        if m.start() > 0 and (code[m.start() - 1].isalnum() or code[m.start() - 1] in "_.@"):
            continue
        name = m.group(1) or m.group(2) or m.group(3)
        start = body_start(code, m.end() - (1 if m.group(2) else 0))
        if start is None:
            continue
        end = body_end(code, start)
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, end) + 1
        found.append((name, first, last - first + 1))
    return found


def main():
    os.chdir(ROOT)
    findings = []
    for folder, dirs, names in os.walk("Sources"):
        dirs.sort()
        for name in sorted(names):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
            if path.startswith(os.path.join("Sources", "ShareIngestCore", "")) and lines > MAX_FILE:
                findings.append(f"{path}: file of {lines} lines (over {MAX_FILE})")
            for function, first, count in functions(strip(text)):
                if count > MAX_FUNCTION:
                    findings.append(f"{path}:{first}: {function} of {count} lines (over {MAX_FUNCTION})")
    for finding in findings:
        print(finding)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
