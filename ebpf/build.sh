#!/bin/sh
# Rebuild the committed eBPF object from its C source.
#
#   ebpf/build.sh [OUT_DIR]     (default: the ebpf/ directory itself)
#
# The build is byte-reproducible: -fdebug-prefix-map rewrites the source directory recorded in
# the DWARF/BTF to ".", so the object does not depend on where the checkout lives.
# Toolchain: Debian 12 clang 14 (apt-get install -y clang libbpf-dev). See ebpf/README.md.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
clang=${CLANG:-clang}
multiarch=$(gcc -dumpmachine 2>/dev/null || echo "$(uname -m)-linux-gnu")

if ! command -v "$clang" >/dev/null 2>&1; then
    echo "ebpf/build.sh: '$clang' not found; install it with: apt-get install -y clang libbpf-dev" >&2
    exit 2
fi
if [ ! -f /usr/include/bpf/bpf_helpers.h ]; then
    echo "ebpf/build.sh: /usr/include/bpf/bpf_helpers.h not found; install it with: apt-get install -y libbpf-dev" >&2
    exit 2
fi

mkdir -p "$out"
# Compile from inside the source directory so the recorded file name is relative too.
cd "$here"
"$clang" -O2 -g -target bpf \
    -I"/usr/include/$multiarch" \
    -fdebug-prefix-map="$here"=. \
    -c reuseport_select.c -o "$out/reuseport_select.o"
echo "built $out/reuseport_select.o ($(wc -c < "$out/reuseport_select.o") bytes, $("$clang" --version | head -n 1))"
