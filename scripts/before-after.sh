#!/usr/bin/env bash
# Before/after: a baseline commit and this checkout, built and measured in one invocation,
# alternating, on the paths operators run, each with the default configuration (disk buffer
# on in normal mode, every vendor parser on), with syslog-ng 3.38 configured like SC4S beside
# them. Prints one table (the one BENCHMARKS.md opens with).
#
#   scripts/before-after.sh BASE [OUT_DIR]        (root: raises net.core.rmem_max for syslog-ng)
#
# BASE is any commit-ish (e.g. c9181ed, main~5, a tag). Both sides are release builds of their
# own tree (`cargo build --release --locked -p sluice`, one target dir, the binary copied out
# after each build). The measuring tool is always this checkout's `sluice bench`, in target
# mode: the script starts each receiver itself, with a fresh SC4S_VAR (so a fresh disk buffer)
# and its HEC output pointed at the sink `sluice bench` runs, and `sluice bench` reads the
# receiver's CPU from /proc (including the drain) and counts what the sink accepted.
#
# Scenarios ($SCENARIOS, default all four):
#   udp-nix  800-byte nix:syslog lines (an sshd login, which no vendor parser takes) from
#            sluice's own sender at $UDP_RATE/s for $DURATION s, 4 sockets. Not loggen: SC4S
#            has a parser for loggen's `prg00000` lines (syslogng:loggen, rendered as JSON),
#            so since the catalogue landed loggen measures a vendor match, not nix:syslog
#   udp-loggen  one loggen sender, 800-byte lines, $UDP_RATE/s (syslogng:loggen at HEAD)
#   udp-mix  the raw messages of both SC4S vendor corpora replayed over UDP at $UDP_RATE/s
#            (sluice's own sender: loggen cannot loop a file at an exact rate); one message per
#            datagram; the multi-part cases are left out
#   tcp      10 loggen connections offering $TCP_RATE/s each, LF framing, port 514's settings
#            (loggen lines: syslogng:loggen at HEAD, as for udp-loggen)
#   tcp-nix  the nix:syslog line of udp-nix from sluice's sender over 10 connections at
#            $TCP_RATE/s each
#   tls      10 loggen connections (-U, TLS 1.2) as fast as they go, SC4S_SOURCE_TLS_ENABLE=yes
# Each scenario runs $ROUNDS rounds of base then this checkout, the order swapped every round
# (base, head, head, base, ...), then syslog-ng once (not for udp-mix: syslog-ng configured
# like SC4S here has no vendor parsers, so a mix costs it what nix lines cost).
#
# Environment: ROUNDS (2), DURATION (20), UDP_RATE (200000), TCP_RATE (100000 per connection),
# CONNECTIONS (10), SCENARIOS ("udp-nix udp-mix tcp tls"; also udp-loggen, tcp-nix), PEER (yes: measure
# syslog-ng too), RCVBUF (syslog-ng's so-rcvbuf, 67108864), LOAD_MAX (1.5: wait while the 1-minute load average
# is above it), LOAD_WAIT (600 s at most), BASE_BIN / HEAD_BIN (use these binaries instead of
# building), BASE_ENV / HEAD_ENV (space-separated VAR=value settings for one side only: with one
# binary twice, `HEAD_ENV=SC4S_DEST_SPLUNK_HEC_DEFAULT_DISKBUFF_ENABLE=no` is what the buffer
# costs), CARGO_TARGET_DIR (default target/before-after).
#
# Writes OUT_DIR/{table.md,*.json,*.log,bin/}; the table goes to stdout too.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

base_ref=${1:?usage: scripts/before-after.sh BASE [OUT_DIR]}
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-20}
UDP_RATE=${UDP_RATE:-200000}
TCP_RATE=${TCP_RATE:-100000}
CONNECTIONS=${CONNECTIONS:-10}
SCENARIOS=${SCENARIOS:-udp-nix udp-mix tcp tls}
PEER=${PEER:-yes}
RCVBUF=${RCVBUF:-67108864}
LOAD_MAX=${LOAD_MAX:-1.5}
LOAD_WAIT=${LOAD_WAIT:-600}
BASE_ENV=${BASE_ENV:-}
HEAD_ENV=${HEAD_ENV:-}
# A word without `=` would be exported empty and measured as if it were a setting.
for kv in $BASE_ENV $HEAD_ENV; do
    [[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*=.*$ ]] || { echo "BASE_ENV/HEAD_ENV: '$kv' is not VAR=value" >&2; exit 2; }
done
out=${2:-$repo/target/bench-results/before-after-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out/bin"
out=$(cd "$out" && pwd)
# The table reads every result in OUT_DIR: an earlier run's would be counted as rounds of this one.
rm -f "$out"/*.json "$out"/*.log "$out"/table.md

# shellcheck source=scripts/lib/measure.sh
. scripts/lib/measure.sh

base_commit=$(git rev-parse --short "$base_ref^{commit}")
head_commit=$(git rev-parse --short HEAD)
dirty=""; [ -n "$(git status --porcelain --untracked-files=no)" ] && dirty="+dirty"

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

tmp=$(mktemp -d /tmp/before-after.XXXXXX)
rx_pid=""
old_rmem=$(sysctl -n net.core.rmem_max 2>/dev/null || echo "")
stop_rx() {
    if [ -n "$rx_pid" ] && kill -0 "$rx_pid" 2>/dev/null; then
        kill "$rx_pid" 2>/dev/null || true
        wait "$rx_pid" 2>/dev/null || true
    fi
    rx_pid=""
}
cleanup() {
    stop_rx
    [ -n "$old_rmem" ] && [ "$(id -u)" -eq 0 ] && sysctl -q -w net.core.rmem_max="$old_rmem" || true
    git -C "$repo" worktree remove --force "$tmp/base-tree" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT

# Builds (or takes) one side's binary into $out/bin/$1.
side_binary() {
    local side=$1 given=$2 tree=$3
    if [ -n "$given" ]; then
        cp "$given" "$out/bin/$side"
        return
    fi
    say "build $side ($(git -C "$tree" log -1 --format='%h %s'))"
    (cd "$tree" && CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$repo/target/before-after} \
        cargo build --release --locked -p sluice >&2)
    cp "${CARGO_TARGET_DIR:-$repo/target/before-after}/release/sluice" "$out/bin/$side"
}
if [ -z "${BASE_BIN:-}" ]; then
    git worktree add --detach "$tmp/base-tree" "$base_commit" >&2
fi
side_binary base "${BASE_BIN:-}" "$tmp/base-tree"
side_binary head "${HEAD_BIN:-}" "$repo"
tool=$out/bin/head   # the one measuring tool for every run

say "inputs"
python3 - "$out/mix.txt" crates/sluice-proto/tests/corpus/sc4s-vendors*.jsonl <<'EOF'
import json, sys
n = 0
with open(sys.argv[1], "w") as w:
    for path in sys.argv[2:]:
        for line in open(path):
            if not line.strip():
                continue
            case = json.loads(line)
            raw = case.get("raw")
            # Multi-part cases need one connection in order; a datagram each would not join.
            if raw is None or "\n" in raw:
                continue
            w.write(raw + "\n")
            n += 1
print(f"{n} vendor messages in the mix", file=sys.stderr)
EOF
python3 - "$out/nix.txt" <<'EOF'
import sys
line = ("<38>Nov 28 12:00:00 host1 sshd[1234]: Accepted publickey for alice from 10.0.0.1 "
        "port 52222 ssh2: RSA SHA256:4Mfq3X0d2Q ")
line += "PADD" * ((799 - len(line)) // 4)
open(sys.argv[1], "w").write(line[:799] + "\n")
EOF
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
    -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
    -addext basicConstraints=critical,CA:FALSE \
    -keyout "$tmp/server.key" -out "$tmp/server.pem" 2>/dev/null
# loggen -U closes with TLS 1.3 session tickets unread and resets the connection (see
# scripts/tls-table.sh); both receivers get TLS 1.2 senders.
printf 'openssl_conf = default_conf\n[default_conf]\nssl_conf = ssl_sect\n[ssl_sect]\nsystem_default = system_default_sect\n[system_default_sect]\nMaxProtocol = TLSv1.2\n' \
    >"$tmp/openssl-tls12.cnf"
token=00000000-0000-0000-0000-000000000000

# The bench arguments of a scenario (sender side only).
scenario_args() {
    case $1 in
        udp-nix) echo "--transport udp --sender sluice --replay $out/nix.txt --rates $UDP_RATE" ;;
        udp-loggen) echo "--transport udp --sender loggen --size 800 --rates $UDP_RATE" ;;
        udp-mix) echo "--transport udp --sender sluice --replay $out/mix.txt --rates $UDP_RATE" ;;
        tcp-nix) echo "--transport tcp --sender sluice --replay $out/nix.txt --rates ${CONNECTIONS}x$TCP_RATE" ;;
        tcp) echo "--transport tcp --sender loggen --size 800 --rates ${CONNECTIONS}x$TCP_RATE" ;;
        tls) echo "--transport tls --sender loggen --size 800 --connections $CONNECTIONS --rates max" ;;
    esac
}

# Starts sluice binary $1 for scenario $2; sets rx_pid, port, status, sink_port.
start_sluice() {
    local bin=$1 scenario=$2 log=$3 extra=$4 var
    port=$(free_port); status=$(free_port); sink_port=$(free_port)
    var=$(mktemp -d "$tmp/var.XXXXXX")
    (
        for v in $(env | grep -oE '^(SC4S|SLUICE)_[A-Z0-9_]*'); do unset "$v"; done
        export SLUICE_LISTEN_ADDRESS=127.0.0.1 SC4S_LISTEN_STATUS_PORT=$status SC4S_VAR=$var \
            SC4S_DEST_SPLUNK_HEC_DEFAULT_URL=http://127.0.0.1:$sink_port \
            SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN=$token \
            SC4S_LISTEN_DEFAULT_RFC5426_PORT=disabled SC4S_LISTEN_DEFAULT_RFC6587_PORT=disabled
        case $scenario in
            udp-*) export SC4S_LISTEN_DEFAULT_UDP_PORT=$port SC4S_LISTEN_DEFAULT_TCP_PORT=disabled ;;
            tcp|tcp-nix) export SC4S_LISTEN_DEFAULT_TCP_PORT=$port SC4S_LISTEN_DEFAULT_UDP_PORT=disabled ;;
            # A UDP port nobody sends to: commits before the TLS-only listener (c9181ed)
            # refuse a configuration without a UDP or TCP port.
            tls) export SC4S_LISTEN_DEFAULT_UDP_PORT=$(free_port) SC4S_LISTEN_DEFAULT_TCP_PORT=disabled \
                    SC4S_SOURCE_TLS_ENABLE=yes SC4S_TLS=$tmp SC4S_LISTEN_DEFAULT_TLS_PORT=$port \
                    SC4S_LISTEN_DEFAULT_RFC5425_PORT=disabled ;;
        esac
        # BASE_ENV / HEAD_ENV: this side's own settings, over the defaults above.
        for kv in $extra; do export "${kv?}"; done
        cd "$var"
        exec "$bin" run
    ) >"$log" 2>&1 &
    rx_pid=$!
    case $scenario in udp-*) wait_listen "$port" udp "$rx_pid" "$log" ;; *) wait_listen "$port" tcp "$rx_pid" "$log" ;; esac
}

start_syslog_ng() {
    local scenario=$1 log=$2 conf=$out/syslog-ng-$1.conf
    port=$(free_port); sink_port=$(free_port)
    local state; state=$(mktemp -d "$tmp/sng.XXXXXX")
    case $scenario in
        udp-*) sed -e "s|@PORT@|$port|g" -e "s|@RCVBUF@|$RCVBUF|g" scripts/syslog-ng-sc4s.conf ;;
        tcp|tcp-nix) sed -e '/# TLS-BEGIN/,/# TLS-END/d' -e "s|@TRANSPORT@|tcp|g" -e "s|@DRIVER@|network|g" \
                -e "s|@PORT@|$port|g" scripts/syslog-ng-stream.conf ;;
        tls) sed -e "s|@TRANSPORT@|tls|g" -e "s|@DRIVER@|network|g" -e "s|@TLS_DIR@|$tmp|g" \
                -e "s|@PORT@|$port|g" scripts/syslog-ng-stream.conf ;;
    esac | sed -e "s|@HEC_URL@|http://127.0.0.1:$sink_port/services/collector/event|g" \
        -e "s|@HEC_TOKEN@|$token|g" -e "s|@DISKBUF@|1073741824|g" -e "s|@STATE_DIR@|$state|g" >"$conf"
    syslog-ng --syntax-only -f "$conf"
    syslog-ng -F --no-caps -f "$conf" -R "$state/persist" -p "$state/pid" -c "$state/ctl" >"$log" 2>&1 &
    rx_pid=$!
    case $scenario in udp-*) wait_listen "$port" udp "$rx_pid" "$log" ;; *) wait_listen "$port" tcp "$rx_pid" "$log" ;; esac
}

# One measurement: receiver $1 (base|head|syslog-ng), scenario $2, round $3.
measure() {
    local who=$1 scenario=$2 round=$3 name=$2.$1.$3 label
    case $who in
        syslog-ng) start_syslog_ng "$scenario" "$out/$name.log" || exit 1; label="syslog-ng 3.38 (SC4S config)" ;;
        *) label="$who"
           # A baseline older than the feature (c9181ed has no TLS listener) leaves its
           # cells empty; the head and syslog-ng must listen.
           local extra=$BASE_ENV
           [ "$who" = head ] && extra=$HEAD_ENV
           if ! start_sluice "$out/bin/$who" "$scenario" "$out/$name.log" "$extra"; then
               stop_rx
               [ "$who" = base ] || exit 1
               echo "base has no $scenario listener: its cells stay empty" >&2
               return 0
           fi ;;
    esac
    local metrics=()
    [ "$who" != syslog-ng ] && metrics=(--metrics "http://127.0.0.1:$status/metrics")
    quiet_machine
    # shellcheck disable=SC2046
    OPENSSL_CONF=$tmp/openssl-tls12.cnf "$tool" bench $(scenario_args "$scenario") \
        --duration "$DURATION" --drain-timeout 180 --json --no-plot --label "$label" \
        --target "127.0.0.1:$port" --pid "$rx_pid" "${metrics[@]}" \
        --sink-listen "127.0.0.1:$sink_port" --sink-token "$token" \
        >"$out/$name.json" 2>>"$out/$name.bench.log"
    stop_rx
}

if [ "$PEER" = yes ] && [ "$(id -u)" -eq 0 ] && [ -n "$old_rmem" ] && [ "$old_rmem" -lt "$RCVBUF" ]; then
    sysctl -q -w net.core.rmem_max="$RCVBUF"
fi

for scenario in $SCENARIOS; do
    for round in $(seq "$ROUNDS"); do
        if [ $((round % 2)) -eq 1 ]; then order="base head"; else order="head base"; fi
        for who in $order; do
            say "$scenario round $round: $who"
            measure "$who" "$scenario" "$round"
        done
    done
    if [ "$PEER" = yes ] && [ "$scenario" != udp-mix ]; then
        say "$scenario: syslog-ng"
        measure syslog-ng "$scenario" 1
    fi
done

say "table"
python3 - "$out" "$base_commit${BASE_ENV:+ $BASE_ENV}" "$head_commit$dirty${HEAD_ENV:+ $HEAD_ENV}" "$DURATION" "$SCENARIOS" <<'EOF' | tee "$out/table.md"
import glob, json, os, statistics, sys
out, base, head, duration, scenarios = sys.argv[1:6]
titles = {
    "udp-nix": "UDP nix:syslog, offered {r}/s",
    "udp-loggen": "UDP loggen lines, offered {r}/s",
    "udp-mix": "UDP vendor mix, offered {r}/s",
    "tcp": "TCP 10 connections",
    "tcp-nix": "TCP nix:syslog, 10 connections",
    "tls": "TLS 10 connections",
}
def steps(scenario, who):
    rows = []
    for path in sorted(glob.glob(os.path.join(out, f"{scenario}.{who}.*.json"))):
        with open(path) as f:
            doc = json.load(f)
        for cfg in doc["configs"]:
            rows.extend(cfg["steps"])
    return rows
MEASURES = ["delivered/s", "CPU-s per million", "loss %", "peak RSS, MiB"]
def cell(rows):
    if not rows:
        return ("—",) * len(MEASURES)
    rate = [r["delivered"] / r["send_secs"] for r in rows]
    cpu = [r["cpu_us_per_event"] for r in rows if r.get("cpu_us_per_event") is not None]
    loss = [r["loss_pct"] for r in rows]
    rss = [r["peak_rss_kib"] / 1024 for r in rows if r.get("peak_rss_kib") is not None]
    fmt = lambda xs, f: " / ".join(f.format(x) for x in xs) or "—"
    return (fmt(rate, "{:,.0f}"), fmt(cpu, "{:.2f}"), fmt(loss, "{:.2f}"), fmt(rss, "{:,.0f}"))
loads = []
for path in glob.glob(os.path.join(out, "*.json")):
    try:
        with open(path) as f:
            m = json.load(f)["machine"]
        loads += [m["load_start"][0], m["load_end"][0]]
    except Exception:
        pass
print(f"base {base}, head {head}; {duration} s per run; each cell lists the rounds (delivered/s = delivered events / seconds of sending)")
if loads:
    print(f"1-minute load average during the runs: {min(loads):.2f}–{max(loads):.2f}")
print()
print("| path | measure | base " + base + " | head " + head + " | syslog-ng 3.38 |")
print("|---|---|---|---|---|")
for s in scenarios.split():
    first = steps(s, "base") or steps(s, "head")
    r = first[0]["offered_rate"] if first else 0
    title = titles.get(s, s).format(r=f"{round(r, -3):,.0f}")
    b, h, p = cell(steps(s, "base")), cell(steps(s, "head")), cell(steps(s, "syslog-ng"))
    for i, name in enumerate(MEASURES):
        print(f"| {title if i == 0 else ''} | {name} | {b[i]} | {h[i]} | {p[i]} |")
    hr = [x["delivered"] / x["send_secs"] for x in steps(s, "head")]
    pr = [x["delivered"] / x["send_secs"] for x in steps(s, "syslog-ng")]
    if hr and pr:
        print(f"| | head ÷ syslog-ng delivered/s | | {statistics.median(hr) / statistics.median(pr):.2f}× | |")
EOF
echo "results in $out" >&2
