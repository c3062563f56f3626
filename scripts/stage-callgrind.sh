#!/usr/bin/env bash
# Instructions per message of the whole daemon on TCP, split by pipeline stage, for two
# binaries side by side: where a CPU difference between two commits comes from, in a count
# that does not depend on the machine's load (scripts/before-after.sh measures the CPU time).
#
# Each binary runs under callgrind twice, receiving N1 and N2 copies of before-after.sh's
# 800-byte nix:syslog line (an sshd login no vendor takes) over 10 TCP connections in bursts
# of 200 lines per connection, so reads are full as at high rates; the default configuration
# (disk buffer on, every vendor). The difference of the two runs over N2 - N1 is the cost per
# message, so start-up (loading the vendor tables) cancels out. Stages are inclusive costs of
# the functions that carry them: framing (`Decoder::decode`), parse (`parse::parse`),
# classify (`classify::classify`), encode (`encode_event`), batch (`append_chunk`, the
# connection's chunk copied into the shared batch); "other" is the rest (reads, the HEC
# output, the disk buffer, the runtime). Callgrind counts each byte of glibc's `rep movsb`
# copy as an instruction, so copies weigh more here than in CPU time.
#
#   scripts/stage-callgrind.sh BASE_BIN HEAD_BIN [OUT_DIR]
#
# Environment: N1 (20000), N2 (120000); BASE_ENV and HEAD_ENV, settings for one side only
# (`HEAD_ENV="SLUICE_VENDORS=none"` with one binary twice: what the vendors cost).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
[ $# -ge 2 ] || { sed -n '2,20p' "$0" >&2; exit 2; }
base_bin=$(realpath "$1")
head_bin=$(realpath "$2")
N1=${N1:-20000}
N2=${N2:-120000}
out=${3:-$repo/target/bench-results/stage-callgrind-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# shellcheck source=scripts/lib/measure.sh
. scripts/lib/measure.sh

need valgrind:valgrind curl:curl

measure_tmp stage-callgrind

# A HEC stand-in that accepts everything (the daemon's output runs as in service).
sink_port=$(free_port)
accepting_hec "$sink_port"
pids+=("$hec_pid")

# One run: $1 binary, $2 side name, $3 lines. Leaves $out/$2.$3/cg.out.
run() {
    local bin=$1 side=$2 n=$3 dir=$out/$2.$3 port status var rx i d=0
    rm -rf "$dir"; mkdir -p "$dir"
    port=$(free_port); status=$(free_port); var=$(mktemp -d "$tmp/var.XXXXXX")
    (
        sluice_env "$status" "$var" "$sink_port"
        export SC4S_LISTEN_DEFAULT_TCP_PORT=$port SC4S_LISTEN_DEFAULT_UDP_PORT=disabled
        # shellcheck disable=SC2086
        [ "$side" = base ] && [ -n "${BASE_ENV:-}" ] && export ${BASE_ENV}
        # shellcheck disable=SC2086
        [ "$side" = head ] && [ -n "${HEAD_ENV:-}" ] && export ${HEAD_ENV}
        cd "$var"
        exec valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" "$bin" run
    ) >"$dir/rx.log" 2>&1 &
    rx=$!
    wait_listen "$port" tcp "$rx" "$dir/rx.log" 120 || return 1
    sleep 2
    python3 - "$port" "$n" <<'PY'
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
line = ("<38>Nov 28 12:00:00 host1 sshd[1234]: Accepted publickey for alice from 10.0.0.1 "
        "port 52222 ssh2: RSA SHA256:4Mfq3X0d2Q ")
line += "PADD" * ((799 - len(line)) // 4)
line = (line[:799] + "\n").encode()
conns = [socket.create_connection(("127.0.0.1", port)) for _ in range(10)]
per, sent = n // 10, 0
while sent < per:
    k = min(200, per - sent)
    for c in conns:
        c.sendall(line * k)
    sent += k
    time.sleep(0.05)
for c in conns:
    c.close()
PY
    # Every event delivered before the daemon stops, so the output's work is counted too.
    for i in $(seq 1200); do
        d=$(curl -s "http://127.0.0.1:$status/metrics" \
            | awk '/^sluice_delivered_total/ {s += $NF} END {printf "%d", s}')
        [ "${d:-0}" -ge "$n" ] && break
        sleep 0.5
    done
    [ "${d:-0}" -ge "$n" ] || { echo "$side: $d of $n delivered" >&2; return 1; }
    kill -INT "$rx"; wait "$rx" 2>/dev/null || true
}

for n in "$N1" "$N2"; do
    say "base, $n lines"; run "$base_bin" base "$n"
    say "head, $n lines"; run "$head_bin" head "$n"
done

say "result"
# Inclusive instructions of the stage functions of one run: "total framing parse ...".
stages() {
    callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null | python3 -c '
import re, sys
want = {"framing": r"Decoder::decode$", "parse": r"::parse::parse$",
        "classify": r"::classify::classify$", "encode": r"::encode_event$",
        "batch": r"::append_chunk$"}
got = dict.fromkeys(want, 0)
total = 0
for line in sys.stdin:
    m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?\S*?:(\S+)\s", line)
    if not m:
        t = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?PROGRAM TOTALS", line)
        if t:
            total = int(t.group(1).replace(",", ""))
        continue
    ir, fn = int(m.group(1).replace(",", "")), m.group(2)
    for k, pat in want.items():
        # The largest entry of a stage: its own function (not an inlined copy of it).
        if re.search(pat, fn):
            got[k] = max(got[k], ir)
print(total, *got.values())
'
}
python3 - "$N1" "$N2" "$(basename "$base_bin")${BASE_ENV:+ $BASE_ENV}" \
    "$(basename "$head_bin")${HEAD_ENV:+ $HEAD_ENV}" \
    "$(stages "$out/base.$N1/cg.out")" "$(stages "$out/base.$N2/cg.out")" \
    "$(stages "$out/head.$N1/cg.out")" "$(stages "$out/head.$N2/cg.out")" \
    <<'PY' | tee "$out/result.md"
import sys
n1, n2 = int(sys.argv[1]), int(sys.argv[2])
base_name, head_name = sys.argv[3], sys.argv[4]
b1, b2, h1, h2 = ([int(x) for x in a.split()] for a in sys.argv[5:9])
per = lambda lo, hi: [(h - l) / (n2 - n1) for l, h in zip(lo, hi)]
b, h = per(b1, b2), per(h1, h2)
names = ["framing", "parse", "classify", "encode", "batch"]
rows = list(zip(names, b[1:], h[1:]))
rows.append(("other", b[0] - sum(b[1:]), h[0] - sum(h[1:])))
rows.append(("**total**", b[0], h[0]))
print(f"Instructions per message, daemon under callgrind, TCP 10 connections, 800-byte nix:syslog line ({n2 - n1:,} messages)\n")
print(f"| stage | base {base_name} | head {head_name} | head - base |")
print("|---|---:|---:|---:|")
for name, x, y in rows:
    print(f"| {name} | {x:,.0f} | {y:,.0f} | {y - x:+,.0f} |")
PY
