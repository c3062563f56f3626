#!/usr/bin/env bash
# UDP loss table: sluice against syslog-ng 3.38 configured like SC4S, in one invocation, with
# the same sender, the same message size and the same HEC sink.
#
#   scripts/udp-loss-table.sh [OUT_DIR]          (run as root: it raises net.core.rmem_max)
#
# For each receiver, `sluice bench` starts the in-process HEC test sink, drives syslog-ng's
# `loggen -i -D -s 800` (the tool SC4S's performance docs use; the same sender for both
# receivers; SENDER=sluice switches both to sluice's own) at every rate of $RATES for $DURATION s, waits for the pipeline to drain, and
# counts the distinct loggen sequence numbers the sink received:
#   1. sluice (this checkout's release build), SC4S defaults (4 UDP sockets, its own 16 MiB
#      receive buffer unless SLUICE_RCVBUF is set), SC4S_ENABLE_EBPF=yes;
#   2. syslog-ng 3.38 (Debian) with scripts/syslog-ng-sc4s.conf: 4 so-reuseport network()
#      sources, so-rcvbuf($RCVBUF), syslog-parser, SC4S's http() HEC destination. 3.38 has no
#      ebpf() plugin, so the kernel's 4-tuple hash spreads the datagrams.
# Then prints both side by side and plots loss against offered load.
#
# Environment: SENDER (loggen = syslog-ng's loggen, the default; sluice = sluice's own
# sendmmsg-based loggen, which needs less CPU and so reaches higher rates on a small box), RATES (default "50000,120000,200000,max,4x40000": `max` is one loggen sender
# as fast as it goes, `4x40000` four senders at 40k/s each), DURATION (20), RCVBUF (syslog-ng's
# so-rcvbuf, 67108864), SLUICE_RCVBUF (unset = sluice's default), LOAD_MAX (1.5: wait while the
# 1-minute load average is above it, the machine is shared), LOAD_WAIT (900 s at most),
# CARGO_TARGET_DIR, SLUICE_BIN (use this sluice binary instead of building one).
#
# Writes OUT_DIR/{sluice.json,syslog-ng.json,table.txt,udp-loss.svg,syslog-ng.conf,*.log}.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

RATES=${RATES:-50000,120000,200000,max,4x40000}
DURATION=${DURATION:-20}
RCVBUF=${RCVBUF:-67108864}
LOAD_MAX=${LOAD_MAX:-1.5}
LOAD_WAIT=${LOAD_WAIT:-900}
out=${1:-$repo/target/bench-results/udp-loss-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# shellcheck source=scripts/lib/measure.sh
. scripts/lib/measure.sh  # the cd above made the checkout the working directory

if [ "$(id -u)" -ne 0 ]; then
    echo "udp-loss-table.sh: run as root: it sets net.core.rmem_max for the ${RCVBUF}-byte buffers and restores it" >&2
    exit 2
fi

say "packages"
missing=()
command -v loggen >/dev/null 2>&1 || missing+=(syslog-ng-core)
command -v syslog-ng >/dev/null 2>&1 || missing+=(syslog-ng-core)
ls /usr/lib/syslog-ng/*/libhttp.so >/dev/null 2>&1 || missing+=(syslog-ng-mod-http)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
syslog-ng --version | head -1 >&2

build_sluice  # sets bin

tmp=$(mktemp -d /tmp/udp-loss-table.XXXXXX)
old_rmem=$(sysctl -n net.core.rmem_max)
sng_pid=""
cleanup() {
    if [ -n "$sng_pid" ] && kill -0 "$sng_pid" 2>/dev/null; then
        kill "$sng_pid" 2>/dev/null || true
        wait "$sng_pid" 2>/dev/null || true
    fi
    sysctl -q -w net.core.rmem_max="$old_rmem" || true
    rm -rf "$tmp"
}
trap cleanup EXIT
if [ "$old_rmem" -lt "$RCVBUF" ]; then
    sysctl -q -w net.core.rmem_max="$RCVBUF"
    echo "net.core.rmem_max $old_rmem -> $RCVBUF (restored on exit)" >&2
fi

SENDER=${SENDER:-loggen}
common=(--sender "$SENDER" --size 800 --duration "$DURATION" --rates "$RATES" --drain-timeout 180 --json --no-plot)

say "1/2 sluice (SC4S_ENABLE_EBPF=yes)"
sluice_env=(--env SC4S_ENABLE_EBPF=yes)
label="sluice, eBPF, 4 sockets"
if [ -n "${SLUICE_RCVBUF:-}" ]; then
    sluice_env+=(--env "SC4S_SOURCE_UDP_SO_RCVBUFF=$SLUICE_RCVBUF")
    label="$label, rcvbuf $SLUICE_RCVBUF"
fi
quiet_machine
"$bin" bench "${common[@]}" --label "$label" "${sluice_env[@]}" --daemon-log "$out" \
    >"$out/sluice.json"

say "2/2 syslog-ng (SC4S config)"
port=$(free_port)
sink_port=$(free_port)
token=00000000-0000-0000-0000-000000000000
sed -e "s|@PORT@|$port|g" \
    -e "s|@RCVBUF@|$RCVBUF|g" \
    -e "s|@HEC_URL@|http://127.0.0.1:$sink_port/services/collector/event|g" \
    -e "s|@HEC_TOKEN@|$token|g" \
    -e "s|@DISKBUF@|1073741824|g" \
    -e "s|@STATE_DIR@|$tmp|g" \
    scripts/syslog-ng-sc4s.conf >"$out/syslog-ng.conf"
syslog-ng --syntax-only -f "$out/syslog-ng.conf"
syslog-ng -F --no-caps -f "$out/syslog-ng.conf" -R "$tmp/syslog-ng.persist" \
    -p "$tmp/syslog-ng.pid" -c "$tmp/syslog-ng.ctl" >"$out/syslog-ng.log" 2>&1 &
sng_pid=$!
for _ in $(seq 100); do
    [ "$(ss -Hlun "sport = :$port" | wc -l)" -ge 4 ] && break
    kill -0 "$sng_pid" 2>/dev/null || { cat "$out/syslog-ng.log" >&2; exit 1; }
    sleep 0.1
done
ss -Hlun "sport = :$port" >&2
quiet_machine
"$bin" bench "${common[@]}" --label "syslog-ng 3.38, SC4S config" \
    --target "127.0.0.1:$port" --pid "$sng_pid" \
    --sink-listen "127.0.0.1:$sink_port" --sink-token "$token" \
    >"$out/syslog-ng.json"
syslog-ng-ctl stats -c "$tmp/syslog-ng.ctl" >"$out/syslog-ng-stats.csv" 2>/dev/null || true
kill "$sng_pid"
wait "$sng_pid" 2>/dev/null || true
sng_pid=""

say "result"
"$bin" bench --merge "$out/sluice.json" --merge "$out/syslog-ng.json" \
    --plot "$out/udp-loss.svg" --title "UDP loss: sluice vs syslog-ng 3.38 (SC4S config)" \
    | tee "$out/table.txt"
echo "results in $out" >&2
