#!/bin/sh
# Verify that the committed ebpf/reuseport_select.o is exactly what ebpf/reuseport_select.c
# compiles to. CI runs this; a non-zero exit means the source and the object drifted apart.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

if ! "$here/build.sh" "$tmp" >/dev/null; then
    echo "ebpf/check.sh: FAILED: could not rebuild the eBPF object (see the error above)" >&2
    exit 2
fi
if ! cmp -s "$tmp/reuseport_select.o" "$here/reuseport_select.o"; then
    echo "ebpf/check.sh: FAILED: ebpf/reuseport_select.o does not match ebpf/reuseport_select.c." >&2
    echo "  committed: $(md5sum < "$here/reuseport_select.o" | cut -d' ' -f1) ($(wc -c < "$here/reuseport_select.o") bytes)" >&2
    echo "  rebuilt:   $(md5sum < "$tmp/reuseport_select.o" | cut -d' ' -f1) ($(wc -c < "$tmp/reuseport_select.o") bytes)" >&2
    echo "  Run ebpf/build.sh with the toolchain in ebpf/README.md and commit the object," >&2
    echo "  or check that your clang is the version the README names (other versions emit different bytes)." >&2
    exit 1
fi
echo "ebpf/check.sh: OK: reuseport_select.o matches its source ($(md5sum < "$here/reuseport_select.o" | cut -d' ' -f1))"
