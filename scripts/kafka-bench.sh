#!/usr/bin/env bash
# Kafka beside HEC: events/s and CPU-seconds per million events of sluice producing to a
# Kafka-protocol broker, and of the same sluice sending to the HEC stand-in, in one
# invocation with the same sender.
#
#   scripts/kafka-bench.sh [OUT_DIR]
#
# Each case: a release build of this checkout receives $N loggen messages ($SIZE bytes; with
# PROTO=tcp, the default, over $CONNS connections as fast as they are taken; with PROTO=udp,
# one sender at $RATE/s) and delivers them:
#   hec:   to `sluice sink` (the HEC stand-in), SC4S defaults (10 workers, gzip);
#   kafka: to tansu (the broker tests/e2e_kafka.rs uses: `.ci/run` installs it), the
#          default destination in SELECT mode, SLUICE_DEST_KAFKA_BENCH_* defaults
#          (acks=all, idempotent, lz4), topic sc4s-bench;
#   both:  HEC and Kafka together (every event to both).
# Measured: wall time from the first to the last delivered event (UDP: until the sender is
# done and nothing more arrives for 2 s; the loss is what the sender counted minus that) (sluice_delivered_total on
# /metrics, polled every 0.2 s), and sluice's own CPU (utime + stime from /proc) over the
# run. The broker, the HEC stand-in and loggen run on the same cores: the figures are
# sluice's share of a loaded 2-core machine, and the table records the load average.
#
# Environment: N (2000000), SIZE (300), CONNS (4), PROTO (tcp or udp), RATE (150000), LOAD_MAX (1.5), LOAD_WAIT (300),
# ONLY (subset of "hec kafka both"), EXTRA_ENV (more NAME=value settings for sluice), SLUICE_BIN, TANSU (path of the broker binary),
# CARGO_TARGET_DIR. Writes OUT_DIR/{table.txt,<case>-receiver.log,<case>-metrics.txt}.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

N=${N:-2000000}
SIZE=${SIZE:-300}
CONNS=${CONNS:-4}
PROTO=${PROTO:-tcp}
RATE=${RATE:-150000}
case $PROTO in tcp | udp) ;; *) echo "PROTO=$PROTO: tcp or udp" >&2; exit 2 ;; esac
LOAD_MAX=${LOAD_MAX:-1.5}
LOAD_WAIT=${LOAD_WAIT:-300}
ONLY=${ONLY:-hec kafka both}
out=${1:-$repo/target/bench-results/kafka-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# shellcheck source=scripts/lib/measure.sh
. scripts/lib/measure.sh

tansu=${TANSU:-$(command -v tansu || true)}
if [ -z "$tansu" ]; then
    echo "tansu is not installed (.ci/run installs it: see the tansu step there)" >&2
    exit 1
fi
command -v loggen >/dev/null || { echo "loggen (syslog-ng-core) is not installed" >&2; exit 1; }

build_sluice

pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Minor page faults: memory the kernel had to map (and zero) for sluice.
faults() { awk '{print $10}' "/proc/$1/stat"; }
delivered() {
    curl -s "http://127.0.0.1:$1/metrics" \
        | awk -v d="$2" '$1 ~ /^sluice_delivered_total\{/ && $1 ~ ("destination=\"" d "\"") {s += $2} END {print s + 0}'
}

run_case() {
    local case=$1
    say "$case"
    quiet_machine
    local work=$out/$case.d
    rm -rf "$work"; mkdir -p "$work"
    local port status sink_port broker_port
    port=$(free_port); status=$(free_port); sink_port=$(free_port); broker_port=$(free_port)
    local envs=(
        "SC4S_LISTEN_DEFAULT_TCP_PORT=$port" "SC4S_LISTEN_DEFAULT_UDP_PORT=$port"
        "SC4S_LISTEN_STATUS_PORT=$status" "SLUICE_LISTEN_ADDRESS=127.0.0.1"
        "SC4S_LISTEN_DEFAULT_RFC5426_PORT=disabled" "SC4S_LISTEN_DEFAULT_RFC6587_PORT=disabled"
        "SC4S_DEST_SPLUNK_SC4S_METRICS_HEC=no" "SLUICE_LISTEN_LOCK_DIR=$work/locks"
        "SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_DIR=$work/buffer"
        "SC4S_DEST_SPLUNK_HEC_DEFAULT_URL=http://127.0.0.1:$sink_port"
        "SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN=00000000-0000-0000-0000-000000000000"
        "SC4S_DEST_SPLUNK_HEC_DEFAULT_TLS_VERIFY=no"
    )
    local dests=()
    case $case in
        hec) dests=(default) ;;
        kafka) dests=(kafka_bench); envs+=("SC4S_DEST_SPLUNK_HEC_GLOBAL=no") ;;
        both) dests=(default kafka_bench) ;;
    esac
    if [ "$case" != hec ]; then
        "$tansu" broker --listener-url "tcp://127.0.0.1:$broker_port" \
            --advertised-listener-url "tcp://127.0.0.1:$broker_port" \
            --storage-engine memory://tansu/ >"$work/tansu.log" 2>&1 &
        pids+=($!)
        envs+=("SLUICE_DEST_KAFKA_BENCH_BROKERS=127.0.0.1:$broker_port"
               "SLUICE_DEST_KAFKA_BENCH_TOPIC=sc4s-bench")
    fi
    # shellcheck disable=SC2206
    envs+=(${EXTRA_ENV:-})
    "$bin" sink --listen "127.0.0.1:$sink_port" >"$work/sink.log" 2>&1 &
    pids+=($!)
    # exec: the pid is sluice's own, whatever the binary is called.
    (cd "$work" && exec env "${envs[@]}" "$bin" run >"$out/$case-receiver.log" 2>&1) &
    local rpid=$!
    pids+=($rpid)
    for _ in $(seq 100); do
        grep -q "sluice is running" "$out/$case-receiver.log" 2>/dev/null && break
        sleep 0.2
    done
    local spid=$rpid
    local t0 c0 f0 f1 first=""
    c0=$(cpu_ticks "$spid")
    f0=$(faults "$spid")
    t0=$(date +%s.%N)
    if [ "$PROTO" = tcp ]; then
        loggen -i -S -I 3600 -n "$((N / CONNS))" --active-connections "$CONNS" -s "$SIZE" \
            -r 10000000 127.0.0.1 "$port" >"$work/loggen.log" 2>&1 &
    else
        loggen -i -D -I 3600 -n "$N" -s "$SIZE" -r "$RATE" 127.0.0.1 "$port" \
            >"$work/loggen.log" 2>&1 &
    fi
    local lpid=$!
    local done_n=0 last prev=-1 still=0
    while :; do
        done_n=0
        for d in "${dests[@]}"; do
            done_n=$((done_n + $(delivered "$status" "$d" | cut -d. -f1)))
        done
        if [ -z "$first" ] && [ "$done_n" -gt 0 ]; then first=$(date +%s.%N); fi
        [ "$done_n" -ge $((N * ${#dests[@]})) ] && break
        # UDP: what was lost never arrives; done when the sender is and nothing moved for 2 s.
        if [ "$PROTO" = udp ] && ! kill -0 "$lpid" 2>/dev/null; then
            if [ "$done_n" -eq "$prev" ]; then still=$((still + 1)); else still=0; fi
            prev=$done_n
            [ "$still" -ge 10 ] && break
        fi
        if ! kill -0 "$spid" 2>/dev/null; then echo "sluice exited" >&2; break; fi
        last=$(date +%s.%N)
        if awk -v a="$t0" -v b="$last" 'BEGIN { exit !(b - a > 600) }'; then
            echo "$case: not done after 600 s ($done_n)" >&2; break
        fi
        sleep 0.2
    done
    local t1 c1
    t1=$(date +%s.%N)
    c1=$(cpu_ticks "$spid")
    f1=$(faults "$spid")
    wait "$lpid" 2>/dev/null || true
    curl -s "http://127.0.0.1:$status/metrics" >"$out/$case-metrics.txt" || true
    local hz sent=$N
    hz=$(getconf CLK_TCK)
    if [ "$PROTO" = udp ]; then
        sent=$(sed -n 's/.*count=\([0-9]*\).*/\1/p' "$work/loggen.log" | tail -n1)
        sent=${sent:-$N}
    fi
    # CPU per delivered event (per destination's copy: `both` counts each event once).
    awk -v c="$case/$PROTO" -v n="$sent" -v t0="$t0" -v t1="$t1" -v c0="$c0" -v c1="$c1" \
        -v hz="$hz" -v got="$done_n" -v k="${#dests[@]}" -v pf="$((f1 - f0))" \
        -v load="$(cut -d' ' -f1-3 /proc/loadavg)" \
        'BEGIN { wall = t1 - t0; cpu = (c1 - c0) / hz; ev = got / k;
                 printf "%-9s %9d events %7.1f s %9.0f events/s %6.2f CPU-s/M %6.1f faults/k  delivered %d/%d  load %s\n",
                        c, n, wall, ev / wall, cpu / ev * 1e6, pf / ev * 1000, got, n * k, load }' | tee -a "$out/table.txt"
    kill "$spid" 2>/dev/null || true
    cleanup
    pids=()
}

: >"$out/table.txt"
for c in $ONLY; do run_case "$c"; done
say "results ($out/table.txt)"
cat "$out/table.txt"
