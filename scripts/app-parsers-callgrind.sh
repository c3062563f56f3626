#!/usr/bin/env bash
# Instructions per message of the whole daemon (every thread: receive, parse, classify,
# encode, HEC output) with and without the 20 never-matching local applications of
# scripts/fixtures/app-parsers-20 (issue 22: at most 5 % more per event). Each side runs
# under callgrind twice, receiving N1 and N2 loggen lines over UDP at 2,000/s, and the
# difference of the totals over N2 - N1 is the per-message cost, so start-up (loading the
# applications, the corpora) cancels out. Unlike CPU time, the count does not depend on
# the machine's load; scripts/app-parsers-cost.sh measures the same at 200k/s in CPU time.
#
#   scripts/app-parsers-callgrind.sh [OUT_DIR]
#
# Environment: SLUICE_BIN (use this binary instead of building), N1 (4000), N2 (24000).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
N1=${N1:-4000}
N2=${N2:-24000}
out=${1:-$repo/target/bench-results/app-parsers-callgrind-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
out=$(cd "$out" && pwd)

# shellcheck source=scripts/lib/measure.sh
. scripts/lib/measure.sh

need valgrind:valgrind loggen:syslog-ng-core
build_sluice

measure_tmp app-parsers-callgrind

# A HEC stand-in that accepts everything (the daemon's output thread runs as in service).
sink_port=$(free_port)
accepting_hec "$sink_port"
pids+=("$hec_pid")

# One run: $1 side (with|without), $2 lines; prints the instructions of every thread.
run() {
    local side=$1 n=$2 dir=$out/$1.$2 port status var apps rx
    rm -rf "$dir"; mkdir -p "$dir"
    port=$(free_port); status=$(free_port); var=$(mktemp -d "$tmp/var.XXXXXX")
    apps=$repo/scripts/fixtures/app-parsers-20
    [ "$side" = with ] || { apps=$var/no-apps; mkdir -p "$apps"; }
    (
        sluice_env "$status" "$var" "$sink_port"
        export SC4S_LISTEN_DEFAULT_UDP_PORT=$port SC4S_LISTEN_DEFAULT_TCP_PORT=disabled \
            SLUICE_APP_PARSERS_DIR=$apps
        cd "$var"
        exec valgrind --tool=callgrind --separate-threads=yes \
            --callgrind-out-file="$dir/callgrind.%p" "$bin" run
    ) >"$dir/rx.log" 2>&1 &
    rx=$!
    wait_listen "$port" udp "$rx" "$dir/rx.log" 120 || return 1
    sleep 2
    loggen -D -r 2000 -I 100 -n "$n" -s 800 127.0.0.1 "$port" >"$dir/loggen.log" 2>&1 || true
    sleep 5
    kill -INT "$rx"; wait "$rx" 2>/dev/null || true
    if [ "$side" = with ] && ! grep -q 'applications=20' "$dir/rx.log"; then
        echo "the 20 applications did not load:" >&2; cat "$dir/rx.log" >&2; return 1
    fi
    cat "$dir"/callgrind.*-* | awk '/^totals:/ {s += $2} END {print s}'
}

declare -A total
for side in without with; do
    for n in "$N1" "$N2"; do
        say "$side, $n lines"
        total[$side.$n]=$(run "$side" "$n")
    done
done

say "result"
python3 - "$(git log -1 --format=%h)" "$N1" "$N2" \
    "${total[without.$N1]}" "${total[without.$N2]}" "${total[with.$N1]}" "${total[with.$N2]}" \
    <<'PY' | tee "$out/result.md"
import sys
commit, n1, n2, wo1, wo2, wi1, wi2 = sys.argv[1], *map(int, sys.argv[2:])
wo = (wo2 - wo1) / (n2 - n1)
wi = (wi2 - wi1) / (n2 - n1)
print(f"sluice {commit}: the daemon under callgrind, loggen UDP lines at 2,000/s, every thread")
print("| side | instructions per message |")
print("|---|---|")
print(f"| without apps | {wo:,.0f} |")
print(f"| 20 non-matching apps | {wi:,.0f} |")
print(f"\nwith - without: {wi - wo:+,.0f} instructions ({(wi / wo - 1) * 100:+.2f} %, target <= +5 %)")
PY
