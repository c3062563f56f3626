#!/usr/bin/env bash
# Where the sluice daemon's CPU goes under UDP load: runs `sluice bench` at one rate and
# attaches `perf record` to the daemon while it is under load.
#
#   scripts/perf-udp.sh [RATE [SECS [OUT_DIR]]]      (default 200000 events/s for 20 s)
#
# The daemon runs with SC4S defaults and SC4S_ENABLE_EBPF=yes; the sender is syslog-ng's
# loggen (one connection), like scripts/udp-loss-table.sh, or with SENDER=sluice sluice's own
# (sendmmsg: less CPU, so the offered rate gets closer to RATE on a small box). From 2 s after
# the first message until 2 s before the last, `perf record` samples the daemon at 999 Hz
# (flat: the cheapest, least perturbing mode; PERF_CALLGRAPH=dwarf adds DWARF call graphs
# and perf-callers.txt) while `perf stat` counts its recvmmsg calls, context switches and
# CPU time. Writes OUT_DIR/{bench.json,bench.txt,perf.data,perf-threads.txt,
# perf-symbols.txt,perf-stat.txt}. SLUICE_BIN uses that binary instead of building one.
# Needs perf (apt-get install linux-perf) and root (or kernel.perf_event_paranoid ≤ 1).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
rate=${1:-200000}
secs=${2:-20}
out=${3:-$repo/target/bench-results/perf-udp-$rate-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

command -v perf >/dev/null || {
    echo "perf-udp.sh: perf is not installed (apt-get install linux-perf)" >&2
    exit 2
}
# shellcheck source=scripts/lib/measure.sh
. scripts/lib/measure.sh  # the cd above made the checkout the working directory
build_sluice

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/load.txt" >&2
"$bin" bench --sender "${SENDER:-loggen}" --rates "$rate" --duration "$secs" --env SC4S_ENABLE_EBPF=yes \
    --no-plot --json >"$out/bench.json" 2>"$out/bench.txt" &
bench=$!
# The "== label — sluice daemon, pid N" line is printed right before the first step starts.
for _ in $(seq 600); do
    grep -q 'sluice daemon, pid' "$out/bench.txt" && break
    kill -0 "$bench" 2>/dev/null || { cat "$out/bench.txt" >&2; exit 1; }
    sleep 0.1
done
dpid=$(grep -o 'sluice daemon, pid [0-9]*' "$out/bench.txt" | head -1 | awk '{print $4}')
sleep 2
window=$((secs > 6 ? secs - 4 : 2))
graph=()
[ "${PERF_CALLGRAPH:-}" = dwarf ] && graph=(--call-graph dwarf,16384)
perf stat -e task-clock,context-switches,syscalls:sys_enter_recvmmsg -p "$dpid" \
    -o "$out/perf-stat.txt" -- sleep "$window" &
stat=$!
perf record -q -F 999 "${graph[@]}" -p "$dpid" -o "$out/perf.data" -- sleep "$window" 2>/dev/null
wait "$stat" || true
wait "$bench"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.txt" >&2
cat "$out/bench.txt" >&2

perf report -i "$out/perf.data" --no-children --sort comm --stdio -g none 2>/dev/null \
    | grep -v '^$' >"$out/perf-threads.txt"
perf report -i "$out/perf.data" --no-children --sort symbol --stdio -g none \
    --percent-limit 0.4 2>/dev/null | grep -v '^$' >"$out/perf-symbols.txt"
if [ ${#graph[@]} -gt 0 ]; then
    perf report -i "$out/perf.data" --children --sort symbol --stdio -g none \
        --percent-limit 3 2>/dev/null | grep -v '^$' >"$out/perf-callers.txt"
fi
echo "--- perf stat over ${window}s" >&2
grep -E 'task-clock|context-switches|recvmmsg' "$out/perf-stat.txt" >&2 || true
echo "--- CPU by thread" >&2
grep -v '^#' "$out/perf-threads.txt" | head -20 >&2
echo "--- top functions (self)" >&2
grep -v '^#' "$out/perf-symbols.txt" | head -40 >&2
echo "results in $out" >&2
