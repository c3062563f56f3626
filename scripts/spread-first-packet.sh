#!/usr/bin/env bash
# How a freshly started daemon spreads the first datagrams of one sender over its sockets.
#
#   scripts/spread-first-packet.sh [BALANCE [RUNS [COUNT]]]   (default ebpf, 5 runs, 40000)
#
# Per run: a watcher waits (busy-polling /proc/net/udp) for the port to appear, then one
# `sluice loggen` connection sends COUNT datagrams as fast as it can; meanwhile `sluice run`
# starts with 4 sockets and SLUICE_UDP_BALANCE=BALANCE. Once all COUNT arrived, the daemon's
# per-socket sluice_udp_datagrams_total are printed with the spread, (max - min) / mean.
# Balancing that is attached only after the sockets bind sends everything that arrives in
# between (while the eBPF object loads) to the one socket the kernel's hash picks.
# SLUICE_BIN uses that binary instead of building one (e.g. an older build, for a before/after).
# The load average is printed with each run: the figures depend on how busy the machine is.
set -euo pipefail
cd "$(dirname "$0")/.."
balance=${1:-ebpf}
runs=${2:-5}
count=${3:-40000}
if [ -n "${SLUICE_BIN:-}" ]; then
    bin=$SLUICE_BIN
else
    cargo build --quiet --release -p sluice --bin sluice
    bin=$PWD/target/release/sluice
fi
work=$(mktemp -d)
daemon=
watcher=
cleanup() {
    [ -n "$watcher" ] && kill "$watcher" 2>/dev/null || true
    [ -n "$daemon" ] && kill "$daemon" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() {
    while :; do
        local p=$((20000 + RANDOM % 30000))
        local hex
        hex=$(printf ':%04X ' "$p")
        if ! grep -q "$hex" /proc/net/udp /proc/net/udp6 /proc/net/tcp /proc/net/tcp6; then
            echo "$p"
            return
        fi
    done
}

for run in $(seq 1 "$runs"); do
    port=$(free_port)
    status=$(free_port)
    hex=$(printf '%04X' "$port")
    (
        until grep -q ":$hex " /proc/net/udp; do :; done
        exec "$bin" loggen "127.0.0.1:$port" --rate 0 --count "$count" --size 200 --quiet
    ) >"$work/loggen.log" 2>&1 &
    watcher=$!
    env -i PATH="$PATH" SLUICE_LOG=warn \
        SC4S_LISTEN_DEFAULT_UDP_PORT="$port" SC4S_LISTEN_DEFAULT_TCP_PORT=disabled \
        SC4S_LISTEN_DEFAULT_RFC5426_PORT=disabled SC4S_LISTEN_DEFAULT_RFC6587_PORT=disabled \
        SC4S_LISTEN_STATUS_PORT="$status" SLUICE_LISTEN_ADDRESS=127.0.0.1 \
        SC4S_SOURCE_LISTEN_UDP_SOCKETS=4 SLUICE_UDP_BALANCE="$balance" \
        SLUICE_OUTPUT_FILE="$work/events.jsonl" \
        "$bin" run 2>"$work/daemon.log" &
    daemon=$!
    wait "$watcher" || { cat "$work/loggen.log" >&2; exit 1; }
    watcher=
    counts=
    for _ in $(seq 1 200); do
        metrics=$(curl -s "http://127.0.0.1:$status/metrics" 2>/dev/null || true)
        counts=$(printf '%s\n' "$metrics" |
            awk -v p="port=\"$port\"" '/^sluice_udp_datagrams_total\{/ && index($0, p) { printf "%s ", $NF }')
        total=$(echo "$counts" | awk '{ s = 0; for (i = 1; i <= NF; i++) s += $i; print s }')
        [ "${total:-0}" -ge "$count" ] && break
        sleep 0.05
    done
    mode=$(printf '%s\n' "$metrics" | grep -o "sluice_udp_balance_info{port=\"$port\",mode=\"[a-z]*\"" | grep -o 'mode="[a-z]*"' || true)
    echo "$counts" | awk -v run="$run" -v mode="$mode" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" '{
        min = $1; max = $1; s = 0
        for (i = 1; i <= NF; i++) { s += $i; if ($i < min) min = $i; if ($i > max) max = $i }
        printf "run %d %s per-socket=[%s] total=%d spread=%.1f%% loadavg=%s\n", run, mode, $0, s, (max - min) / (s / NF) * 100, load
    }'
    kill "$daemon"
    wait "$daemon" || true
    daemon=
done
