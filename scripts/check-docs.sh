#!/usr/bin/env bash
# Checks the documents' shape: README.md is a front page (<= 15 KB), BENCHMARKS.md <= 20 KB,
# every relative link in README.md, DESIGN.md and docs/*.md points at a file that exists, and
# (given OLD_REV, a commit whose README.md held everything) every SC4S_*/SLUICE_* name that
# README named is still findable in README.md + docs/*.md.
#   scripts/check-docs.sh [OLD_REV]
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
size() { stat -c %s "$1"; }
[ "$(size README.md)" -le 15360 ] || { echo "README.md is $(size README.md) bytes (> 15 KB)"; fail=1; }
[ "$(size BENCHMARKS.md)" -le 20480 ] || { echo "BENCHMARKS.md is $(size BENCHMARKS.md) bytes (> 20 KB)"; fail=1; }
for f in README.md DESIGN.md BENCHMARKS.md docs/*.md; do
    dir=$(dirname "$f")
    # [text](target) where target is not a URL; drop the #anchor
    while IFS= read -r t; do
        t=${t%%#*}
        [ -z "$t" ] && continue
        [ -e "$dir/$t" ] || { echo "$f: link to missing $t"; fail=1; }
    done < <(grep -o '\]([^)]*)' "$f" | sed 's/^](//; s/)$//' | grep -v '^[a-z]*://' || true)
done
if [ $# -ge 1 ]; then
    missing=0
    now=$(cat README.md docs/*.md)
    for name in $(git show "$1:README.md" | grep -o '\b\(SC4S\|SLUICE\)_[A-Z0-9_]*' | sort -u); do
        grep -qF -- "$name" <<<"$now" || { echo "setting $name (in $1:README.md) is in no document now"; missing=1; }
    done
    [ $missing = 0 ] && echo "every SC4S_/SLUICE_ name of $1:README.md is in README.md or docs/"
    fail=$((fail | missing))
fi
[ $fail = 0 ] && echo "documents: README $(size README.md) B, BENCHMARKS $(size BENCHMARKS.md) B, links resolve"
exit $fail
