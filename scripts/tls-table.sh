#!/usr/bin/env bash
# TLS throughput: sluice against syslog-ng 3.38 configured like SC4S's TLS source, in one
# invocation, with the same sender, certificate, message size and HEC sink; then PARALLELIZE
# on one plain TCP connection (off vs on).
#
#   scripts/tls-table.sh [OUT_DIR]
#
# 1. A certificate for localhost is made with openssl (ECDSA P-256, CA:FALSE).
# 2. sluice (this checkout's release build) runs with SC4S_SOURCE_TLS_ENABLE=yes and that
#    certificate, its HEC output pointed at the sink `sluice bench` starts; `sluice bench
#    --target` drives its TLS port with $CONNECTIONS connections as fast as the sender goes
#    ($RATES, default max) for $DURATION s, and counts what the sink received.
# 3. The same for syslog-ng with scripts/syslog-ng-stream.conf: SC4S's TLS source
#    (network(transport("tls")) with SC4S's ssl-options and cipher-suite) and SC4S's http()
#    destination.
# 4. PARALLELIZE: `sluice bench` in daemon mode on plain TCP, 1 connection at max rate, with
#    SC4S_ENABLE_PARALLELIZE=no and =yes (SC4S_PARALLELIZE_NO_PARTITION=$PARTITIONS): the
#    receiver's CPU column shows whether one connection uses more than one core.
#
# Environment: SENDER (loggen = syslog-ng's `loggen -U`, LF framing, the default; sluice =
# sluice's own rustls sender, RFC 5425 octet counting, which needs less CPU; with it syslog-ng
# gets the syslog() driver instead of network()), CONNECTIONS (10), RATES (max), DURATION (20),
# PARTITIONS (2), LOAD_MAX (1.5: wait while the 1-minute load average is above it; the machine
# is shared), LOAD_WAIT (900 s at most), SLUICE_BIN (use this binary instead of building one),
# CARGO_TARGET_DIR.
#
# loggen is capped at TLS 1.2 through OPENSSL_CONF (MaxProtocol=TLSv1.2) for both receivers:
# syslog-ng 3.38 sends TLS 1.3 session tickets, and loggen closing with one unread resets the
# connection before the receiver has read its tail (sluice sends none, so it is not affected).
#
# Writes OUT_DIR/{sluice.json,syslog-ng.json,parallelize.json,table.txt,*.log,syslog-ng.conf}.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

SENDER=${SENDER:-loggen}
CONNECTIONS=${CONNECTIONS:-10}
RATES=${RATES:-max}
DURATION=${DURATION:-20}
PARTITIONS=${PARTITIONS:-2}
LOAD_MAX=${LOAD_MAX:-1.5}
LOAD_WAIT=${LOAD_WAIT:-900}
out=${1:-$repo/target/bench-results/tls-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# shellcheck source=scripts/lib/measure.sh
. scripts/lib/measure.sh  # the cd above made the checkout the working directory

say "packages"
missing=()
command -v loggen >/dev/null 2>&1 || missing+=(syslog-ng-core)
command -v syslog-ng >/dev/null 2>&1 || missing+=(syslog-ng-core)
ls /usr/lib/syslog-ng/*/libhttp.so >/dev/null 2>&1 || missing+=(syslog-ng-mod-http)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
syslog-ng --version | head -1 >&2

build_sluice  # sets bin

tmp=$(mktemp -d /tmp/tls-table.XXXXXX)
sluice_pid=""
sng_pid=""
stop() {
    local pid=$1
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
}
cleanup() {
    stop "$sluice_pid"
    stop "$sng_pid"
    rm -rf "$tmp"
}
trap cleanup EXIT

wait_listen() {
    local port=$1 pid=$2 log=$3
    for _ in $(seq 100); do
        [ -n "$(ss -Hltn "sport = :$port")" ] && return 0
        kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
        sleep 0.1
    done
    echo "nothing listens on $port" >&2
    cat "$log" >&2
    exit 1
}

say "certificate"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -addext basicConstraints=critical,CA:FALSE \
    -keyout "$tmp/server.key" -out "$tmp/server.pem" 2>/dev/null
printf 'openssl_conf = default_conf\n[default_conf]\nssl_conf = ssl_sect\n[ssl_sect]\nsystem_default = system_default_sect\n[system_default_sect]\nMaxProtocol = TLSv1.2\n' \
    >"$tmp/openssl-tls12.cnf"
export OPENSSL_CONF=$tmp/openssl-tls12.cnf

token=00000000-0000-0000-0000-000000000000
common=(--transport tls --sender "$SENDER" --connections "$CONNECTIONS" --rates "$RATES"
    --duration "$DURATION" --size 800 --drain-timeout 180 --json --no-plot --sink-token "$token")

say "1/3 sluice, TLS"
port=$(free_port); rfc=$(free_port); status=$(free_port); sink_port=$(free_port)
(
    for v in $(env | grep -oE '^(SC4S|SLUICE)_[A-Z0-9_]*'); do unset "$v"; done
    export SLUICE_LISTEN_ADDRESS=127.0.0.1 SC4S_LISTEN_STATUS_PORT=$status \
        SC4S_LISTEN_DEFAULT_UDP_PORT=disabled SC4S_LISTEN_DEFAULT_TCP_PORT=disabled \
        SC4S_LISTEN_DEFAULT_RFC5426_PORT=disabled SC4S_LISTEN_DEFAULT_RFC6587_PORT=disabled \
        SC4S_SOURCE_TLS_ENABLE=yes SC4S_TLS=$tmp \
        SC4S_LISTEN_DEFAULT_TLS_PORT=$port SC4S_LISTEN_DEFAULT_RFC5425_PORT=$rfc \
        SC4S_DEST_SPLUNK_HEC_DEFAULT_URL=http://127.0.0.1:$sink_port \
        SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN=$token
    exec "$bin" run
) >"$out/sluice.log" 2>&1 &
sluice_pid=$!
wait_listen "$port" "$sluice_pid" "$out/sluice.log"
# The sender's framing decides the port: LF to the TLS port, octet counting to RFC 5425.
target=$port; [ "$SENDER" = sluice ] && target=$rfc
quiet_machine
"$bin" bench "${common[@]}" --label "sluice, TLS" --target "127.0.0.1:$target" \
    --metrics "http://127.0.0.1:$status/metrics" --pid "$sluice_pid" \
    --sink-listen "127.0.0.1:$sink_port" >"$out/sluice.json"
stop "$sluice_pid"; sluice_pid=""

say "2/3 syslog-ng, TLS (SC4S config)"
port=$(free_port); sink_port=$(free_port)
driver=network; [ "$SENDER" = sluice ] && driver=syslog
sed -e "s|@PORT@|$port|g" -e "s|@TRANSPORT@|tls|g" -e "s|@DRIVER@|$driver|g" -e "s|@TLS_DIR@|$tmp|g" \
    -e "s|@HEC_URL@|http://127.0.0.1:$sink_port/services/collector/event|g" \
    -e "s|@HEC_TOKEN@|$token|g" -e "s|@DISKBUF@|1073741824|g" -e "s|@STATE_DIR@|$tmp|g" \
    scripts/syslog-ng-stream.conf >"$out/syslog-ng.conf"
syslog-ng --syntax-only -f "$out/syslog-ng.conf"
syslog-ng -F --no-caps -f "$out/syslog-ng.conf" -R "$tmp/syslog-ng.persist" \
    -p "$tmp/syslog-ng.pid" -c "$tmp/syslog-ng.ctl" >"$out/syslog-ng.log" 2>&1 &
sng_pid=$!
wait_listen "$port" "$sng_pid" "$out/syslog-ng.log"
quiet_machine
"$bin" bench "${common[@]}" --label "syslog-ng 3.38, TLS (SC4S config)" \
    --target "127.0.0.1:$port" --pid "$sng_pid" --sink-listen "127.0.0.1:$sink_port" \
    >"$out/syslog-ng.json"
stop "$sng_pid"; sng_pid=""

say "3/3 PARALLELIZE on one TCP connection"
quiet_machine
"$bin" bench --transport tcp --sender "$SENDER" --connections 1 --rates max \
    --duration "$DURATION" --size 800 --drain-timeout 180 --json --no-plot \
    --variant "serial:SC4S_ENABLE_PARALLELIZE=no" \
    --variant "parallelize $PARTITIONS:SC4S_ENABLE_PARALLELIZE=yes,SC4S_PARALLELIZE_NO_PARTITION=$PARTITIONS" \
    --daemon-log "$out" >"$out/parallelize.json"

say "result"
{
    "$bin" bench --merge "$out/sluice.json" --merge "$out/syslog-ng.json" --no-plot
    echo
    "$bin" bench --merge "$out/parallelize.json" --no-plot
} 2>&1 | tee "$out/table.txt"
echo "load average at the end: $(cat /proc/loadavg)" | tee -a "$out/table.txt"
echo "results in $out" >&2
