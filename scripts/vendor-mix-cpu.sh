#!/usr/bin/env bash
# Receiver CPU per million events for a mixed vendor stream (issue 11's end-to-end figure),
# beside nix:syslog-only lines of the same size, in one invocation:
#
#   scripts/vendor-mix-cpu.sh [OUT_DIR]
#
# The mix is the `raw` of every case of the SC4S vendor corpus
# (crates/sluice-proto/tests/corpus/sc4s-vendors.jsonl), one message per line. `sluice bench`
# starts the daemon on its SC4S defaults (4 UDP sockets, every vendor parser, the disk buffer
# in normal mode) with its in-process HEC sink, then sends at $RATES over UDP for $DURATION s:
#   1. mix: `--replay` of the corpus lines (in a loop);
#   2. nix: generated loggen-style lines of the mix's average size (nix:syslog).
# The receiver's CPU is read from /proc before the step and after the sink saw the last
# event, so it includes the drain; `µs/event` in the table is CPU-seconds per million events.
#
# Environment: RATES (default 50000), DURATION (20), SENDER (sluice = the in-process sender,
# the default; loggen = syslog-ng's, `-R FILE --loop-reading -d` for the mix), LOAD_MAX (1.5:
# wait while the 1-minute load average is above it), LOAD_WAIT (600 s at most), SLUICE_BIN
# (use this binary instead of building a release one), CARGO_TARGET_DIR.
#
# Writes OUT_DIR/{mix.txt,mix.json,nix.json,table.txt}.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

RATES=${RATES:-50000}
DURATION=${DURATION:-20}
SENDER=${SENDER:-sluice}
LOAD_MAX=${LOAD_MAX:-1.5}
LOAD_WAIT=${LOAD_WAIT:-600}
out=${1:-$repo/target/bench-results/vendor-mix-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# shellcheck source=scripts/lib/measure.sh
. scripts/lib/measure.sh

build_sluice  # sets bin

say "the mix"
corpus=crates/sluice-proto/tests/corpus/sc4s-vendors.jsonl
# `sluice` has no JSON tool of its own to spare; python3 is on every Debian with loggen.
python3 - "$corpus" "$out/mix.txt" <<'EOF'
import json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as w:
    for line in f:
        if line.strip():
            raw = json.loads(line)["raw"]
            # One message per line: a raw message never holds a newline in this corpus,
            # but say so rather than split one silently.
            if "\n" in raw:
                sys.exit("a corpus message holds a newline; it cannot be replayed line by line")
            w.write(raw + "\n")
EOF
lines=$(grep -c . "$out/mix.txt")
size=$(awk '{ n += length($0) + 1 } END { printf "%d", (n + NR - 1) / NR }' "$out/mix.txt")
echo "$lines messages, $size bytes on average" >&2

common=(--rates "$RATES" --duration "$DURATION" --sender "$SENDER" --no-plot --json)
say "mix"
quiet_machine
"$bin" bench "${common[@]}" --label mix --replay "$out/mix.txt" > "$out/mix.json"
say "nix:syslog lines of $size bytes"
quiet_machine
"$bin" bench "${common[@]}" --label nix --size "$size" > "$out/nix.json"

"$bin" bench --merge "$out/mix.json" --merge "$out/nix.json" --no-plot 2>&1 | tee "$out/table.txt"
