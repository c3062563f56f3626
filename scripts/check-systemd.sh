#!/usr/bin/env bash
# Checks the systemd units: `systemd-analyze verify` (syntax, the commands exist, the man
# page in Documentation= resolves) and `systemd-analyze security` exposure at most $MAX
# (default 3.0) for config/sluice.service.
#
#   scripts/check-systemd.sh [SLUICE_BINARY]     (default target/debug/sluice)
#
# The units name /usr/bin/sluice, where the .deb installs it; the check verifies copies whose
# commands point at SLUICE_BINARY instead, so it runs without installing anything.
set -euo pipefail
cd "$(dirname "$0")/.."
MAX=${MAX:-3.0}
bin=$(realpath "${1:-${CARGO_TARGET_DIR:-target}/debug/sluice}")
[ -x "$bin" ] || { echo "check-systemd: $bin is not built" >&2; exit 1; }
command -v systemd-analyze >/dev/null || { echo "check-systemd: systemd-analyze missing (apt-get install systemd)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/man/man8"
cp docs/man/sluice.8 "$tmp/man/man8/"
for unit in sluice.service sluice-container.service; do
    sed "s|/usr/bin/sluice|$bin|g" "config/$unit" >"$tmp/$unit"
    # verify prints nothing and exits 0 for a clean unit.
    out=$(MANPATH=$tmp/man systemd-analyze verify "$tmp/$unit" 2>&1) || true
    if [ -n "$out" ]; then
        echo "check-systemd: systemd-analyze verify $unit:" >&2
        echo "$out" >&2
        exit 1
    fi
done
exposure=$(systemd-analyze security --offline=yes "$tmp/sluice.service" 2>/dev/null \
    | sed -n 's/.*Overall exposure level for sluice.service: \([0-9.]*\).*/\1/p')
[ -n "$exposure" ] || { echo "check-systemd: no exposure figure from systemd-analyze security" >&2; exit 1; }
if awk "BEGIN{exit !($exposure > $MAX)}"; then
    echo "check-systemd: exposure $exposure is above $MAX:" >&2
    systemd-analyze security --offline=yes "$tmp/sluice.service" 2>/dev/null | grep '^✗' >&2
    exit 1
fi
echo "check-systemd: verify clean (sluice.service, sluice-container.service); exposure $exposure (limit $MAX)"
