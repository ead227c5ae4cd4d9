#!/usr/bin/env bash
# Builds a throwaway package made from exactly the README's lines, as a new
# user would: its Package.swift is the block after `<!-- consumer: Package.swift`
# ("The library", below its snippet), its Sources/Ingest/main.swift the
# library snippet after `<!-- consumer: Sources/Ingest/main.swift` ("The
# library"). The README's `path: "../share-ingest"` reaches this checkout
# through a link, so the package resolves under whatever name the checkout's
# folder has (`name:` in the README's lines is what makes that work).
#
# usage: scripts/check-readme-package.sh     (part of scripts/test.sh)
# env:   SCRATCH=DIR   the consumer's build folder (default: a temporary one)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d /tmp/readme-package.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# The code block after the marker `<!-- consumer: FILE`, verbatim.
extract() {
    awk -v file="$1" '
        index($0, "<!-- consumer: " file) == 1 { found = 1; next }
        found && /^```/ { if (inside) exit; inside = 1; next }
        inside { print }
    ' "$root/README.md"
}

mkdir -p "$work/app/Sources/Ingest"
extract Package.swift > "$work/app/Package.swift"
extract Sources/Ingest/main.swift > "$work/app/Sources/Ingest/main.swift"
for file in Package.swift Sources/Ingest/main.swift; do
    [[ -s "$work/app/$file" ]] || { echo "check-readme-package: the README has no consumer block for $file" >&2; exit 1; }
done
ln -s "$root" "$work/share-ingest"
echo "check-readme-package: building the README's package (share-ingest is $(basename "$root") here)"
scratch="${SCRATCH:-$work/app/.build}"
# Built as a new user builds it: any warning about this package's flags is a
# failure (SwiftPM refuses flags a dependency's pkg-config gives, such as -pthread).
if ! swift build --package-path "$work/app" --scratch-path "$scratch" >"$work/build.log" 2>&1; then
    tail -n 20 "$work/build.log"
    exit 1
fi
grep -vE "warning: 'main': Source files" "$work/build.log" | tail -n 3
if grep -q "prohibited flag" "$work/build.log"; then
    echo "check-readme-package: building the README's package warns: $(grep -m1 'prohibited flag' "$work/build.log")" >&2
    exit 1
fi
[[ -x "$scratch/debug/Ingest" ]] || { echo "check-readme-package: no Ingest executable was built" >&2; exit 1; }
# The same lines with the path set to a clone whose folder has another name
# (as the README's comment says to do): the package graph still resolves,
# products named by `package: "share-ingest"` (a path dependency is otherwise
# known by its folder's name). Resolving the graph is where that fails.
other="clone-of-share-ingest-$$"
ln -s "$root" "$work/$other"
mkdir -p "$work/other/Sources/Ingest"
sed "s|path: \"../share-ingest\"|path: \"../$other\"|" "$work/app/Package.swift" > "$work/other/Package.swift"
cp "$work/app/Sources/Ingest/main.swift" "$work/other/Sources/Ingest/"
grep -q "../$other" "$work/other/Package.swift" || { echo "check-readme-package: the README's lines name no path ../share-ingest" >&2; exit 1; }
swift package --package-path "$work/other" --scratch-path "$work/other/.build" show-dependencies >/dev/null
echo "check-readme-package: the README's package builds, and resolves from a folder named $other too"
