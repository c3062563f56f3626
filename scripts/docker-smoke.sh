#!/usr/bin/env bash
# Docker smoke test: build sluice's image and run it the way an operator would, with
# syslog-ng's loggen sending in and a HEC stand-in (`sluice sink`) receiving out; then
# `docker stop` must end the container with exit 0 and every event must be at the sink.
#
#   scripts/docker-smoke.sh            (as root, on Debian; not part of .ci/run)
#
# Works without an image registry: Debian's docker.io (installed and started when missing),
# a base image made with debootstrap + `docker import`, and the sluice binary built on this
# host (prebuilt/sluice, see the Dockerfile) instead of a rust:* builder image.
#
# Environment: COUNT (messages per loggen run, default 20000), RATE (per second, 10000),
# SLUICE_BIN (use this binary instead of `cargo build --release -p sluice`),
# MIRROR (Debian mirror for debootstrap), BASE_IMAGE (default sluice-base:bookworm, built
# when missing), KEEP=1 (leave the container and the logs for inspection),
# EBPF_CHECK=0 (skip the capability checks).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

COUNT=${COUNT:-20000}
RATE=${RATE:-10000}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
BASE_IMAGE=${BASE_IMAGE:-sluice-base:bookworm}
IMAGE=sluice:smoke
NAME=sluice-smoke
TOKEN=11111111-2222-3333-4444-555555555555
work=${TMPDIR:-/var/tmp}/sluice-docker-smoke
mkdir -p "$work"

say() { printf '\n=== %s\n' "$*" >&2; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "run as root (it installs docker.io and starts dockerd when missing)"

say "packages"
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v loggen >/dev/null 2>&1 || missing+=(syslog-ng-core)
command -v curl >/dev/null 2>&1 || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

say "docker daemon"
if ! docker info >/dev/null 2>&1; then
    nohup dockerd >"$work/dockerd.log" 2>&1 &
    for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
    docker info >/dev/null 2>&1 || fail "dockerd did not start; see $work/dockerd.log"
fi
server=$(docker version --format '{{.Server.Version}}')
echo "docker server $server"

say "base image $BASE_IMAGE"
if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
    rootfs=$work/rootfs
    if [ ! -x "$rootfs/bin/sh" ]; then
        rm -rf "$rootfs"
        debootstrap --variant=minbase --include=ca-certificates,tzdata bookworm "$rootfs" "$MIRROR"
    fi
    tar -C "$rootfs" -c . | docker import - "$BASE_IMAGE"
fi

say "sluice binary"
if [ -n "${SLUICE_BIN:-}" ]; then
    bin=$SLUICE_BIN
else
    cargo build --release --locked -p sluice
    bin=${CARGO_TARGET_DIR:-$repo/target}/release/sluice
fi
mkdir -p prebuilt
install -m 0755 "$bin" prebuilt/sluice
strip prebuilt/sluice 2>/dev/null || true

say "image $IMAGE"
start=$(date +%s)
docker build -q -t "$IMAGE" \
    --build-arg BUILD_IMAGE="$BASE_IMAGE" --build-arg BASE_IMAGE="$BASE_IMAGE" . >/dev/null
rm -f prebuilt/sluice
echo "built in $(( $(date +%s) - start )) s: $(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.1f MB", $1/1e6}')"
docker image inspect -f 'stop signal {{.Config.StopSignal}}; exposed {{range $p, $_ := .Config.ExposedPorts}}{{$p}} {{end}}; volumes {{range $v, $_ := .Config.Volumes}}{{$v}} {{end}}' "$IMAGE"

# Free ports on this host (the container uses host networking, as SC4S recommends).
free_port() {
    local p
    while :; do
        p=$(( 20000 + RANDOM % 20000 ))
        if ! ss -Hlntu "( sport = :$p )" | grep -q .; then echo "$p"; return; fi
    done
}
syslog_port=$(free_port); frame_port=$(free_port); status_port=$(free_port); sink_port=$(free_port)

cleanup() {
    [ -n "${sink_pid:-}" ] && kill "$sink_pid" 2>/dev/null || true
    if [ "${KEEP:-0}" != 1 ]; then
        docker rm -f "$NAME" "$NAME-cap" >/dev/null 2>&1 || true
        docker volume rm "$NAME-var" >/dev/null 2>&1 || true
    fi
}
trap cleanup EXIT
docker rm -f "$NAME" "$NAME-cap" >/dev/null 2>&1 || true

say "HEC stand-in on 127.0.0.1:$sink_port"
"$bin" sink --listen "127.0.0.1:$sink_port" --token "$TOKEN" --json \
    >"$work/sink.json" 2>"$work/sink.log" &
sink_pid=$!
sleep 0.5
kill -0 "$sink_pid" 2>/dev/null || fail "the sink did not start: $(cat "$work/sink.log")"

cat >"$work/env_file" <<EOF
SC4S_DEST_SPLUNK_HEC_DEFAULT_URL=http://127.0.0.1:$sink_port
SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN=$TOKEN
SC4S_LISTEN_DEFAULT_UDP_PORT=$syslog_port
SC4S_LISTEN_DEFAULT_TCP_PORT=$syslog_port
SC4S_LISTEN_DEFAULT_RFC5426_PORT=$frame_port
SC4S_LISTEN_DEFAULT_RFC6587_PORT=$frame_port
SC4S_LISTEN_STATUS_PORT=$status_port
SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_LINES=7000
SC4S_DEST_SPLUNK_HEC_DEFAULT_BATCH_TIMEOUT=60000
EOF
# Batches of 7000 that are only flushed when full or after 60 s: at `docker stop` the tail of
# every run is still in an open batch, so only the drain on SIGTERM can deliver it.
# The capability checks need no HEC: they write to the JSON-lines file in the volume.
grep -v _DEST_SPLUNK_ "$work/env_file" >"$work/env_file.nohec"

say "run: docker run --network host --env-file … $IMAGE (syslog $syslog_port, status $status_port)"
docker run -d --name "$NAME" --network host --cap-add NET_ADMIN \
    --env-file "$work/env_file" -v "$NAME-var:/var/lib/syslog-ng" "$IMAGE" >/dev/null
for _ in $(seq 1 30); do
    "$bin" health --port "$status_port" >/dev/null 2>&1 && break
    sleep 0.5
done
"$bin" health --port "$status_port" || fail "not healthy: $(docker logs "$NAME" 2>&1 | tail -20)"
docker exec "$NAME" sluice health >/dev/null \
    || fail "the image's HEALTHCHECK command (sluice health, port from the env_file) fails"

say "loggen: $COUNT messages over UDP, then $COUNT over TCP, at $RATE/s"
# One run id per second: the runs are a second apart so their sequence numbers never mix.
loggen -i -D -r "$RATE" -n "$COUNT" -I 60 -s 400 127.0.0.1 "$syslog_port" 2>"$work/loggen-udp.log"
sleep 1.1
loggen -i -S -r "$RATE" -n "$COUNT" -I 60 -s 400 127.0.0.1 "$syslog_port" 2>"$work/loggen-tcp.log"
sent_udp=$(grep -o 'count=[0-9]*' "$work/loggen-udp.log" | tail -1 | cut -d= -f2)
sent_tcp=$(grep -o 'count=[0-9]*' "$work/loggen-tcp.log" | tail -1 | cut -d= -f2)
sent=$(( ${sent_udp:-0} + ${sent_tcp:-0} ))
echo "sent $sent (udp ${sent_udp:-?}, tcp ${sent_tcp:-?})"

sleep 1
metric() { curl -sf "http://127.0.0.1:$status_port/metrics" | awk -v m="$1" '$1 ~ "^"m"({|$)" {s += $2} END {printf "%d", s}'; }
received=$(metric sluice_received_total); delivered=$(metric sluice_delivered_total)
echo "before stop: received $received, delivered $delivered: $(( received - delivered )) held in open batches"
[ $(( received - delivered )) -gt 0 ] || echo "note: nothing was held at stop; the drain had nothing to do"

say "docker stop (default 10 s grace; the image's SLUICE_DRAIN_TIMEOUT is 8 s)"
t0=$(date +%s.%N)
docker stop "$NAME" >/dev/null
t1=$(date +%s.%N)
exit_code=$(docker inspect -f '{{.State.ExitCode}}' "$NAME")
oom=$(docker inspect -f '{{.State.OOMKilled}}' "$NAME")
printf 'stopped in %s s, exit code %s (OOM killed: %s)\n' "$(awk "BEGIN{printf \"%.2f\", $t1 - $t0}")" "$exit_code" "$oom"
docker logs "$NAME" >"$work/sluice.log" 2>&1
grep -E "stopping|stopped cleanly|not delivered|drain" "$work/sluice.log" | sed 's/^/  sluice: /' || true

sleep 0.5
kill -TERM "$sink_pid"
wait "$sink_pid" || true
sink_pid=
report=$(tail -1 "$work/sink.json")
echo "sink: $report"
num() { echo "$report" | grep -o "\"$1\":[0-9]*" | cut -d: -f2; }
distinct=$(num distinct); dups=$(num duplicates); missing=$(num missing)

ok=1
[ "$exit_code" = 0 ] || { echo "FAIL: exit code $exit_code after docker stop (137 = killed mid-drain)"; ok=0; }
[ "$sent" -gt 0 ] || { echo "FAIL: loggen sent nothing"; ok=0; }
[ "${distinct:-0}" = "$sent" ] || { echo "FAIL: sent $sent, the sink has ${distinct:-0} distinct events"; ok=0; }
[ "${missing:-1}" = 0 ] || { echo "FAIL: $missing sequence numbers missing"; ok=0; }

if [ "${EBPF_CHECK:-1}" = 1 ]; then
    say "capabilities for the eBPF balancer on docker $server"
    balance() {  # $@: extra docker run flags; prints the UDP balance mode sluice reports
        docker rm -f "$NAME-cap" >/dev/null 2>&1 || true
        if ! docker run -d --name "$NAME-cap" --network host "$@" --env-file "$work/env_file.nohec" \
            -e SC4S_ENABLE_EBPF=yes "$IMAGE" >/dev/null 2>"$work/cap.err"; then
            echo "refused: $(head -1 "$work/cap.err")"
            return
        fi
        for _ in $(seq 1 20); do
            m=$(curl -sf "http://127.0.0.1:$status_port/metrics" 2>/dev/null | grep '^sluice_udp_balance_info' | head -1) && [ -n "$m" ] && break
            sleep 0.5
        done
        echo "${m:-no metrics}" | grep -o 'mode="[a-z]*"' || echo "no metrics: $(docker logs "$NAME-cap" 2>&1 | tail -3)"
        docker stop -t 15 "$NAME-cap" >/dev/null
    }
    echo "no extra capability:       $(balance)"
    echo "--cap-add NET_ADMIN:       $(balance --cap-add NET_ADMIN)"
    echo "--cap-add BPF:             $(balance --cap-add BPF)"
    echo "--cap-add SYS_ADMIN:       $(balance --cap-add SYS_ADMIN)"
    echo "--privileged:              $(balance --privileged)"
fi

say "result"
if [ "$ok" = 1 ]; then
    echo "PASS: docker stop -> exit 0; sent $sent, delivered $distinct distinct, $dups duplicates, 0 missing"
else
    echo "logs: $work (sluice.log, sink.log, loggen-*.log); KEEP=1 keeps the container"
    exit 1
fi
