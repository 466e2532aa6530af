#!/usr/bin/env bash
# Vendors PDF.js, the page's PDF viewer, from the npm package pdfjs-dist (pinned here) into
# docqa/web/vendor/pdfjs at build time (`make setup`); docqa serves it from there and never fetches it at run
# time. npm checks the package against the registry's integrity hash. Without npm the page still works and
# shows a cited chunk's text instead of the PDF page.
set -euo pipefail
VERSION=6.5.438
cd "$(dirname "$0")/.."
dest=docqa/web/vendor/pdfjs
if [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$VERSION" ]; then exit 0; fi
if ! command -v npm >/dev/null 2>&1; then
    echo "note: npm not found: the web page shows cited text instead of the PDF page (apt-get install npm; make setup)" >&2
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "pdfjs-dist@$VERSION" >/dev/null)
tar -xzf "$tmp/pdfjs-dist-$VERSION.tgz" -C "$tmp" package/build/pdf.min.mjs package/build/pdf.worker.min.mjs \
    package/LICENSE package/cmaps package/standard_fonts
rm -rf "$dest" && mkdir -p "$dest"
cp "$tmp/package/build/pdf.min.mjs" "$tmp/package/build/pdf.worker.min.mjs" "$tmp/package/LICENSE" "$dest/"
cp -r "$tmp/package/cmaps" "$tmp/package/standard_fonts" "$dest/"
echo "$VERSION" > "$dest/VERSION"
echo "vendored pdfjs-dist $VERSION into $dest"
