#!/usr/bin/env bash
# HEC outage table: sluice's disk buffer against syslog-ng 3.38's disk-buffer() configured
# like SC4S, normal and reliable mode each, in one invocation, with the same sender, the same
# outage and the same HEC stand-in.
#
#   scripts/buffer-outage-table.sh [OUT_DIR]
#
# The scenario is tests/e2e_buffer.rs scenario 1: loggen -i -D -s 300 at $RATE/s over UDP for
# $DURATION s; the HEC stand-in (`sluice sink --refuse-from --refuse-until`) answers 503
# "Server is busy" from $REFUSE_FROM s to $REFUSE_UNTIL s after the first event it accepts
# (the sender's start plus the receiver's batch timeout, 0.3 s for both). It stops once no
# event has arrived for $IDLE_EXIT s after the outage (syslog-ng retries only every
# time_reopen(10) s), or after $DRAIN_MAX s, and reports the distinct loggen sequence
# numbers it received and the duplicates. Four receivers, one after the other:
#   1. syslog-ng 3.38 (Debian) with scripts/syslog-ng-sc4s.conf, disk-buffer(compaction(yes)
#      reliable(no) disk-buf-size(<SC4S's per-worker size>)) as SC4S renders it;
#   2. the same with disk-buffer(compaction(yes) mem-buf-size($MEMBUF) reliable(yes) ...);
#   3. sluice (this checkout's release build), SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_RELIABLE=no;
#   4. sluice with ..._DISKBUFF_RELIABLE=yes.
# Sizes as SC4S computes them: disk-buf-size = (size of the buffer's filesystem - 5 GB) /
# workers per worker (sluice: the same total), mem-buf-size = 163840000 / workers.
#
# Environment: RATE (20000), DURATION (80), REFUSE_FROM (10), REFUSE_UNTIL (70), SIZE (300),
# IDLE_EXIT (30), DRAIN_MAX (900), ONLY (a space-separated subset of "sng-normal sng-reliable
# sluice-normal sluice-reliable"), LOAD_MAX (1.5: wait while the 1-minute load average is
# above it; the machine is shared), LOAD_WAIT (300 s at most), SLUICE_BIN (use this binary
# instead of building one), CARGO_TARGET_DIR.
#
# Writes OUT_DIR/{table.txt,<case>.json,<case>-sink.log,<case>-receiver.log,<case>.loggen,
# syslog-ng-*.conf,<case>-stats.txt}.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

RATE=${RATE:-20000}
DURATION=${DURATION:-80}
REFUSE_FROM=${REFUSE_FROM:-10}
REFUSE_UNTIL=${REFUSE_UNTIL:-70}
SIZE=${SIZE:-300}
IDLE_EXIT=${IDLE_EXIT:-30}
DRAIN_MAX=${DRAIN_MAX:-900}
ONLY=${ONLY:-sng-normal sng-reliable sluice-normal sluice-reliable}
LOAD_MAX=${LOAD_MAX:-1.5}
LOAD_WAIT=${LOAD_WAIT:-300}
WORKERS=10
out=${1:-$repo/target/bench-results/buffer-outage-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# shellcheck source=scripts/lib/measure.sh
. scripts/lib/measure.sh  # the cd above made the checkout the working directory

say "packages"
missing=()
command -v loggen >/dev/null 2>&1 || missing+=(syslog-ng-core)
command -v syslog-ng >/dev/null 2>&1 || missing+=(syslog-ng-core)
ls /usr/lib/syslog-ng/*/libhttp.so >/dev/null 2>&1 || missing+=(syslog-ng-mod-http)
command -v jq >/dev/null 2>&1 || missing+=(jq)
if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
syslog-ng --version | head -1 >&2

build_sluice
commit=$(git -C "$repo" log -1 --format='%h' 2>/dev/null || echo unknown)
echo "sluice commit $commit" >&2

tmp=$(mktemp -d /tmp/buffer-outage.XXXXXX)
recv_pid=""
sink_pid=""
old_rmem=$(sysctl -n net.core.rmem_max)
stop() {
    local pid=$1
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
}
cleanup() {
    stop "$recv_pid"
    stop "$sink_pid"
    [ "$(id -u)" -ne 0 ] || sysctl -q -w net.core.rmem_max="$old_rmem" || true
    rm -rf "$tmp"
}
trap cleanup EXIT
# syslog-ng's so-rcvbuf(64 MiB) as in scripts/udp-loss-table.sh (sluice forces its own 16 MiB
# as root); as another user syslog-ng gets what net.core.rmem_max allows.
if [ "$(id -u)" -eq 0 ] && [ "$old_rmem" -lt 67108864 ]; then
    sysctl -q -w net.core.rmem_max=67108864
    echo "net.core.rmem_max $old_rmem -> 67108864 (restored on exit)" >&2
fi

# CPU seconds (user + system) a process has used so far.
cpu_secs() {
    awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/$1/stat" 2>/dev/null || echo "?"
}

# SC4S's per-worker disk-buf-size for a buffer in $1: (filesystem size - 5 GB) / workers,
# 5 GB / workers when the filesystem is smaller (dest_hec/plugin.py).
disk_buf_per_worker() {
    local total
    total=$(df -B1 --output=size "$1" | tail -1 | tr -d ' ')
    total=$((total - 5000000000))
    [ "$total" -lt 0 ] && total=5000000000
    echo $((total / WORKERS))
}
MEMBUF=${MEMBUF:-$((163840000 / WORKERS))}

token=00000000-0000-0000-0000-000000000000

# Starts the HEC stand-in on $1 writing $2.json / $2-sink.log.
start_sink() {
    "$bin" sink --listen "127.0.0.1:$1" --token "$token" \
        --refuse-from "$REFUSE_FROM" --refuse-until "$REFUSE_UNTIL" \
        --idle-exit "$IDLE_EXIT" --duration "$DRAIN_MAX" --json \
        >"$out/$2.json" 2>"$out/$2-sink.log" &
    sink_pid=$!
    for _ in $(seq 100); do
        [ -n "$(ss -Hltn "sport = :$1")" ] && return 0
        sleep 0.1
    done
    echo "the HEC stand-in did not start: $(cat "$out/$2-sink.log")" >&2
    exit 1
}

start_syslog_ng() { # case port sink_port reliable
    local case=$1 port=$2 sink_port=$3 reliable=$4 state=$tmp/$1 per_worker disk
    mkdir -p "$state"
    per_worker=$(disk_buf_per_worker "$state")
    if [ "$reliable" = yes ]; then
        disk="compaction(yes) mem-buf-size($MEMBUF) reliable(yes)"
    else
        disk="compaction(yes) reliable(no)"
    fi
    sed -e "s|@PORT@|$port|g" \
        -e "s|@RCVBUF@|67108864|g" \
        -e "s|@HEC_URL@|http://127.0.0.1:$sink_port/services/collector/event|g" \
        -e "s|@HEC_TOKEN@|$token|g" \
        -e "s|@DISKBUF@|$per_worker|g" \
        -e "s|@STATE_DIR@|$state|g" \
        -e "s|^\( *\)reliable(no)$|\1$disk|" \
        scripts/syslog-ng-sc4s.conf >"$out/syslog-ng-$case.conf"
    grep -q "$disk" "$out/syslog-ng-$case.conf" || { echo "disk-buffer() not rewritten" >&2; exit 1; }
    syslog-ng --syntax-only -f "$out/syslog-ng-$case.conf"
    syslog-ng -F --no-caps -f "$out/syslog-ng-$case.conf" -R "$state/syslog-ng.persist" \
        -p "$state/syslog-ng.pid" -c "$state/syslog-ng.ctl" >"$out/$case-receiver.log" 2>&1 &
    recv_pid=$!
    for _ in $(seq 100); do
        [ "$(ss -Hlun "sport = :$port" | wc -l)" -ge 4 ] && return 0
        kill -0 "$recv_pid" 2>/dev/null || { cat "$out/$case-receiver.log" >&2; exit 1; }
        sleep 0.1
    done
    echo "syslog-ng did not open its sockets" >&2
    exit 1
}

start_sluice() { # case port sink_port reliable
    local case=$1 port=$2 sink_port=$3 reliable=$4 state=$tmp/$1
    mkdir -p "$state"
    status_port=$(free_port)
    # Only these settings: no SC4S_/SLUICE_ variable leaks in from the caller.
    (cd "$state" && exec env -i PATH="$PATH" HOME="${HOME:-/root}" \
        SC4S_LISTEN_DEFAULT_UDP_PORT="$port" \
        SC4S_LISTEN_DEFAULT_TCP_PORT=disabled \
        SC4S_LISTEN_DEFAULT_RFC5426_PORT=disabled \
        SC4S_LISTEN_DEFAULT_RFC6587_PORT=disabled \
        SC4S_LISTEN_STATUS_PORT="$status_port" \
        SLUICE_LISTEN_ADDRESS=127.0.0.1 \
        SLUICE_LISTEN_LOCK_DIR="$state/locks" \
        SC4S_DEST_SPLUNK_SC4S_METRICS_HEC=no \
        SC4S_DEST_SPLUNK_HEC_DEFAULT_URL="http://127.0.0.1:$sink_port" \
        SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN="$token" \
        SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_ENABLE=yes \
        SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_RELIABLE="$reliable" \
        SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR="$state/buffer" \
        SLUICE_LOG=info \
        "$bin" run) >"$out/$case-receiver.log" 2>&1 &
    recv_pid=$!
    for _ in $(seq 300); do
        grep -q "sluice is running" "$out/$case-receiver.log" && return 0
        kill -0 "$recv_pid" 2>/dev/null || { cat "$out/$case-receiver.log" >&2; exit 1; }
        sleep 0.1
    done
    echo "sluice did not start" >&2
    exit 1
}

rows=()
run_case() { # case receiver reliable label
    local case=$1 receiver=$2 reliable=$3 label=$4 port sink_port sent load_before load_after cpu
    say "$label"
    port=$(free_port)
    sink_port=$(free_port)
    start_sink "$sink_port" "$case"
    if [ "$receiver" = syslog-ng ]; then
        start_syslog_ng "$case" "$port" "$sink_port" "$reliable"
    else
        start_sluice "$case" "$port" "$sink_port" "$reliable"
    fi
    quiet_machine
    load_before=$(cut -d' ' -f1 /proc/loadavg)
    loggen -i -D -r "$RATE" -I "$DURATION" -s "$SIZE" 127.0.0.1 "$port" >"$out/$case.loggen" 2>&1 || true
    load_after=$(cut -d' ' -f1 /proc/loadavg)
    sent=$(grep -o 'count=[0-9]*' "$out/$case.loggen" | tail -1 | cut -d= -f2)
    [ -n "$sent" ] || { echo "no count in loggen's output: $(cat "$out/$case.loggen")" >&2; exit 1; }
    echo "loggen sent $sent; waiting for the stand-in to go idle" >&2
    wait "$sink_pid" || true
    sink_pid=""
    cpu=$(cpu_secs "$recv_pid")
    if [ "$receiver" = syslog-ng ]; then
        syslog-ng-ctl stats -c "$tmp/$case/syslog-ng.ctl" >"$out/$case-stats.txt" 2>/dev/null || true
    else
        curl -s "http://127.0.0.1:$status_port/metrics" >"$out/$case-stats.txt" 2>/dev/null || true
    fi
    stop "$recv_pid"
    recv_pid=""
    local distinct dups last
    distinct=$(jq -r .distinct "$out/$case.json")
    dups=$(jq -r .duplicates "$out/$case.json")
    last=$(jq -r '.last_event_after_first_s // 0' "$out/$case.json")
    rows+=("$(printf '%-38s %9s %9s %9s %7s %10s %9.0f %7s %9s' \
        "$label" "$sent" "$distinct" "$((sent - distinct))" \
        "$(awk -v s="$sent" -v d="$distinct" 'BEGIN { printf "%.2f", 100 * (s - d) / s }')" \
        "$dups" "$last" "$cpu" "$load_before/$load_after")")
}

for c in $ONLY; do
    case $c in
    sng-normal) run_case "$c" syslog-ng no "syslog-ng 3.38 (SC4S), reliable(no)" ;;
    sng-reliable) run_case "$c" syslog-ng yes "syslog-ng 3.38 (SC4S), reliable(yes)" ;;
    sluice-normal) run_case "$c" sluice no "sluice, DISKBUFF_RELIABLE=no" ;;
    sluice-reliable) run_case "$c" sluice yes "sluice, DISKBUFF_RELIABLE=yes" ;;
    *) echo "unknown case $c" >&2; exit 2 ;;
    esac
done

say "result"
{
    echo "HEC outage: loggen -i -D -s $SIZE at $RATE/s UDP for $DURATION s; HEC answers 503 from t=$REFUSE_FROM s to t=$REFUSE_UNTIL s"
    echo "sluice commit $commit (checkout at the start; SLUICE_BIN=${SLUICE_BIN:-unset})"
    printf '%-38s %9s %9s %9s %7s %10s %9s %7s %9s\n' receiver sent delivered lost "lost %" duplicates "last at s" "CPU s" "load"
    printf '%s\n' "${rows[@]}"
} | tee "$out/table.txt"
echo "results in $out" >&2
