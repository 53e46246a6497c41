#!/usr/bin/env bash
# Records the Debian corpus (tools/debian-corpus.sh) with the zopt extension into
# bench-data/recordings/, the input of the benches. Not committed: it is large.
#   tools/record-corpus.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-data/recordings}
cargo build --release -p zopt -p zopt-php
mapfile -t dirs < <(tools/debian-corpus.sh)
rm -rf "$out"
for d in "${dirs[@]}"; do
  target/release/zopt record --debug-level 0 -o "$out/$(basename "$d")" "$d"
done
echo "recordings: $(find "$out" -name '*.zop' | wc -l) files, $(du -sh "$out" | cut -f1)"
