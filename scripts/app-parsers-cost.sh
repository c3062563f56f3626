#!/usr/bin/env bash
# What 20 local applications that never match cost on the nix:syslog UDP path (issue 22:
# at most 5 % more CPU per event). One release build of this checkout runs with and without
# SLUICE_APP_PARSERS_DIR pointing at scripts/fixtures/app-parsers-20 (20 applications in
# varied contexts and filter kinds, none matching loggen's lines), alternating
# (without, with, with, without, ...), each round one loggen sender at $UDP_RATE/s of
# 800-byte lines for $DURATION s, measured by this checkout's `sluice bench` in target mode
# (CPU of the receiver from /proc, drain included). Prints CPU-s per million events for each
# side per round, the medians and their ratio (with ÷ without; target <= 1.05).
#
#   scripts/app-parsers-cost.sh [OUT_DIR]
#
# Environment: ROUNDS (3), DURATION (20), UDP_RATE (200000), LOAD_MAX (1.5: wait while the
# 1-minute load average is above it), LOAD_WAIT (600 s at most), SLUICE_BIN (use this binary
# instead of building), CARGO_TARGET_DIR (default target).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-20}
UDP_RATE=${UDP_RATE:-200000}
LOAD_MAX=${LOAD_MAX:-1.5}
LOAD_WAIT=${LOAD_WAIT:-600}
apps=$repo/scripts/fixtures/app-parsers-20
out=${1:-$repo/target/bench-results/app-parsers-cost-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# shellcheck source=scripts/lib/measure.sh
. scripts/lib/measure.sh

need loggen:syslog-ng-core
build_sluice

tmp=$(mktemp -d /tmp/app-parsers-cost.XXXXXX)
rx_pid=""
stop_rx() {
    if [ -n "$rx_pid" ] && kill -0 "$rx_pid" 2>/dev/null; then
        kill "$rx_pid" 2>/dev/null || true
        wait "$rx_pid" 2>/dev/null || true
    fi
    rx_pid=""
}
cleanup() { stop_rx; rm -rf "$tmp"; }
trap cleanup EXIT
token=00000000-0000-0000-0000-000000000000

# Starts sluice; $1 = with|without; sets rx_pid, port, status, sink_port.
start_sluice() {
    local side=$1 log=$2 var
    port=$(free_port); status=$(free_port); sink_port=$(free_port)
    var=$(mktemp -d "$tmp/var.XXXXXX")
    (
        sluice_env "$status" "$var" "$sink_port"
        export SC4S_LISTEN_DEFAULT_UDP_PORT=$port SC4S_LISTEN_DEFAULT_TCP_PORT=disabled
        # An empty directory on the other side: both read a directory, only one has apps.
        if [ "$side" = with ]; then
            export SLUICE_APP_PARSERS_DIR=$apps
        else
            mkdir -p "$var/no-apps"
            export SLUICE_APP_PARSERS_DIR=$var/no-apps
        fi
        cd "$var"
        exec "$bin" run
    ) >"$log" 2>&1 &
    rx_pid=$!
    local i
    for i in $(seq 150); do
        [ -n "$(ss -Hlun "sport = :$port")" ] && return 0
        kill -0 "$rx_pid" 2>/dev/null || { cat "$log" >&2; return 1; }
        sleep 0.1
    done
    echo "nothing listens on $port/udp" >&2; cat "$log" >&2; return 1
}

for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) -eq 1 ]; then order="without with"; else order="with without"; fi
    for side in $order; do
        say "round $round: $side"
        start_sluice "$side" "$out/$side.$round.log"
        if [ "$side" = with ]; then
            grep -q 'applications=20' "$out/$side.$round.log" || sleep 1
            grep -q 'applications=20' "$out/$side.$round.log" \
                || { echo "the 20 applications did not load:" >&2; cat "$out/$side.$round.log" >&2; exit 1; }
        fi
        quiet_machine
        "$bin" bench --transport udp --sender loggen --size 800 --rates "$UDP_RATE" \
            --duration "$DURATION" --drain-timeout 180 --json --no-plot --label "$side" \
            --target "127.0.0.1:$port" --pid "$rx_pid" --metrics "http://127.0.0.1:$status/metrics" \
            --sink-listen "127.0.0.1:$sink_port" --sink-token "$token" \
            >"$out/$side.$round.json" 2>>"$out/$side.$round.bench.log"
        stop_rx
    done
done

say "result"
python3 - "$out" "$(git log -1 --format=%h)" <<'PY' | tee "$out/result.md"
import glob, json, os, statistics, sys
out, commit = sys.argv[1:3]
def rows(side):
    r, loads = [], []
    for p in sorted(glob.glob(os.path.join(out, f"{side}.*.json"))):
        doc = json.load(open(p))
        m = doc.get("machine", {})
        loads += [m.get("load_start", [None])[0], m.get("load_end", [None])[0]]
        for cfg in doc["configs"]:
            r.extend(cfg["steps"])
    return r, [l for l in loads if l is not None]
w, lw = rows("with")
n, ln = rows("without")
cpu = lambda rs: [x["cpu_us_per_event"] for x in rs if x.get("cpu_us_per_event") is not None]
loss = lambda rs: [x["loss_pct"] for x in rs]
print(f"sluice {commit}: UDP nix:syslog (loggen, 800 bytes), rounds alternating")
if lw + ln:
    print(f"1-minute load average during the runs: {min(lw + ln):.2f}-{max(lw + ln):.2f}")
print("| side | CPU-s per million (rounds) | median | loss % |")
print("|---|---|---|---|")
for name, rs in (("without apps", n), ("20 non-matching apps", w)):
    c = cpu(rs)
    print(f"| {name} | {' / '.join(f'{x:.2f}' for x in c)} | {statistics.median(c):.2f} | {' / '.join(f'{x:.2f}' for x in loss(rs))} |" if c else f"| {name} | - | - | - |")
if cpu(w) and cpu(n):
    ratio = statistics.median(cpu(w)) / statistics.median(cpu(n))
    print(f"\nratio with / without: {ratio:.3f} (target <= 1.05)")
PY
