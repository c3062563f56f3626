#!/usr/bin/env bash
# Instructions per message of the daemon's per-message path (parse → classify → encode) with
# every vendor and with SLUICE_VENDORS=none, from callgrind: each case runs twice with a
# different number of iterations and the difference is divided by the extra messages, so
# start-up (building the classifier, reading the corpora) cancels out. Instruction counts
# do not depend on the machine's load, unlike wall or CPU time.
#
#   scripts/nomatch-callgrind.sh [BENCH_BINARY] [CASES...]
#
# BENCH_BINARY defaults to the newest target/*/deps/nomatch-*; build it with
# `cargo bench --bench nomatch --no-run` (or `--profile dev`). CASES default to
# nix-all nix-none other-all other-none loggen-all loggen-none mix-all mix-none.
# Set KEEP=dir to keep the callgrind.out files of the larger runs (for callgrind_annotate).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
if [[ -z "$bin" ]]; then
  bin=$(ls -t target/*/deps/nomatch-* 2>/dev/null | grep -v '\.d$' | head -n1 || true)
  [[ -n "$bin" ]] || { echo "no nomatch bench binary: cargo bench --bench nomatch --no-run" >&2; exit 1; }
else
  shift
fi
cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=(nix-all nix-none other-all other-none loggen-all loggen-none mix-all mix-none)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count() { # case iters out-file -> "instructions lines-per-iteration"
  SLUICE_NOMATCH_CASE=$1 SLUICE_NOMATCH_ITERS=$2 valgrind --tool=callgrind \
    --callgrind-out-file="$3" "$bin" >"$3.stdout" 2>"$3.log"
  echo "$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$3.log") $(sed -n 's/^lines=//p' "$3.stdout")"
}

printf '%-12s %10s %10s\n' case messages instr/msg
for c in "${cases[@]}"; do
  # The corpus mix is about a thousand lines per iteration.
  if [[ $c == mix-* ]]; then lo=2; hi=12; else lo=1000; hi=21000; fi
  read -r a lines < <(count "$c" "$lo" "$tmp/$c.lo")
  read -r b _ < <(count "$c" "$hi" "$tmp/$c.hi")
  n=$(( (hi - lo) * lines ))
  printf '%-12s %10d %10.1f\n' "$c" "$n" "$(echo "($b - $a) / $n" | bc -l)"
  if [[ -n "${KEEP:-}" ]]; then mkdir -p "$KEEP"; cp "$tmp/$c.hi" "$KEEP/callgrind.out.$c"; fi
done
