# Shared by the measurement scripts (the tables of BENCHMARKS.md and the callgrind counts):
# sourced, not run. Expects LOAD_MAX and LOAD_WAIT to be set by the caller.

say() { printf '\n=== %s\n' "$*" >&2; }

# Waits while the 1-minute load average is above LOAD_MAX (other users' builds), at most
# LOAD_WAIT seconds; then measures anyway, and the caller's table records the load.
quiet_machine() {
    local waited=0 load
    while :; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        if awk -v l="$load" -v m="$LOAD_MAX" 'BEGIN { exit !(l <= m) }'; then
            echo "load average $(cut -d' ' -f1-3 /proc/loadavg): go" >&2
            return 0
        fi
        if [ "$waited" -ge "$LOAD_WAIT" ]; then
            echo "load average still $load after ${waited}s; measuring anyway (the report records it)" >&2
            return 0
        fi
        echo "load average $load > $LOAD_MAX; waiting" >&2
        sleep 20
        waited=$((waited + 20))
    done
}

# A port free for both UDP and TCP (receivers listen on both).
free_port() {
    local p
    for p in $(shuf -i 20000-60000 -n 200); do
        if [ -z "$(ss -Hlun "sport = :$p")" ] && [ -z "$(ss -Hltn "sport = :$p")" ]; then
            echo "$p"
            return 0
        fi
    done
    echo "no free port" >&2
    return 1
}

# Sets `bin`: $SLUICE_BIN when given, else a release build of this checkout (run from its root).
build_sluice() {
    say "build"
    if [ -n "${SLUICE_BIN:-}" ]; then
        bin=$SLUICE_BIN
    else
        export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
        cargo build --release --locked -p sluice
        bin=$CARGO_TARGET_DIR/release/sluice
    fi
    git log -1 --format='sluice commit %h %s' >&2 || true
}

# Installs the Debian packages of the missing commands: `need valgrind:valgrind loggen:syslog-ng-core`.
need() {
    local missing=() spec SUDO=""
    for spec in "$@"; do
        command -v "${spec%%:*}" >/dev/null 2>&1 || missing+=("${spec#*:}")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

# Starts a HEC stand-in on 127.0.0.1:$1 that answers every request with success, so the
# daemon's output runs as in service at almost no cost of its own; sets hec_pid.
accepting_hec() {
    python3 - "$1" <<'PY' &
import http.server, socketserver, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        b = b'{"text":"Success","code":0}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    do_GET = do_POST
    def log_message(self, *a):
        pass
socketserver.ThreadingTCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
    hec_pid=$!
}

# A temporary directory in $tmp and, in $pids, background processes killed on exit.
measure_tmp() {
    tmp=$(mktemp -d "/tmp/$1.XXXXXX")
    pids=()
    trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
}

# In the subshell that starts sluice: no inherited SC4S_*/SLUICE_* setting, then the ones
# every measurement shares (loopback, the status port $1, SC4S_VAR $2, the HEC stand-in on
# port $3, no RFC 5426/6587 listeners). The caller adds its listener and execs sluice.
sluice_env() {
    local v
    for v in $(env | grep -oE '^(SC4S|SLUICE)_[A-Z0-9_]*'); do unset "$v"; done
    export SLUICE_LISTEN_ADDRESS=127.0.0.1 SC4S_LISTEN_STATUS_PORT=$1 SC4S_VAR=$2 \
        SC4S_DEST_SPLUNK_HEC_DEFAULT_URL=http://127.0.0.1:$3 \
        SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN=00000000-0000-0000-0000-000000000000 \
        SC4S_LISTEN_DEFAULT_RFC5426_PORT=disabled SC4S_LISTEN_DEFAULT_RFC6587_PORT=disabled
}

# Waits until something listens on port $1 ($2: udp or tcp) while process $3 lives, at most
# $5 seconds (15); on failure prints $3's log $4 and returns 1.
wait_listen() {
    local i
    for i in $(seq $(( ${5:-15} * 10 ))); do
        if [ "$2" = udp ]; then [ -n "$(ss -Hlun "sport = :$1")" ] && return 0
        else [ -n "$(ss -Hltn "sport = :$1")" ] && return 0; fi
        kill -0 "$3" 2>/dev/null || { cat "$4" >&2; return 1; }
        sleep 0.1
    done
    echo "nothing listens on $1/$2" >&2; cat "$4" >&2; return 1
}
