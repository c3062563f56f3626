#!/usr/bin/env bash
# Builds the .deb (`cargo deb -p sluice`) and checks it: the file list against the expected
# one, the control fields, the maintainer scripts. With --chroot ROOTFS (a debootstrap'ed
# Debian, e.g. the one scripts/docker-smoke.sh makes) it also installs the package into a
# copy of ROOTFS and checks the result: the `sluice` user, /opt/sc4s/env_file, the unit,
# `sluice run --check`, then purges it.
#
#   scripts/check-deb.sh [--profile release|dev] [--no-build] [--chroot ROOTFS]
#
# .ci/run calls it with `--profile dev --no-build` after the tests built the dev binary:
# the package layout is what is checked, and the release build would cost minutes.
# Needs cargo-deb (`cargo install cargo-deb --locked`, installed here when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
build=1
rootfs=
while [ $# -gt 0 ]; do
    case $1 in
        --profile) profile=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        --chroot) rootfs=$2; shift 2 ;;
        *) echo "usage: $0 [--profile P] [--no-build] [--chroot ROOTFS]" >&2; exit 2 ;;
    esac
done

fail() { echo "check-deb: FAIL: $*" >&2; exit 1; }

command -v cargo-deb >/dev/null 2>&1 || cargo install cargo-deb --locked --quiet
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
deb=$out/sluice.deb
args=(-p sluice --profile "$profile" -o "$deb" --quiet)
[ "$build" = 1 ] || args+=(--no-build)
# cargo-deb warns that dev is not a release profile; that is the point of the cheap check.
cargo deb "${args[@]}" >/dev/null 2> >(grep -v -e 'dev profile is not supported' -e 'To enable debug symbols' >&2)

# Regular files only, sorted; directories follow from them.
actual=$(dpkg-deb -c "$deb" | awk '$1 !~ /^d/ {print $6}' | sed 's|^\./|/|' | sort)
expected=$(sort <<'EOF'
/usr/bin/sluice
/usr/lib/systemd/system/sluice.service
/usr/share/doc/sluice/README.md
/usr/share/doc/sluice/copyright
/usr/share/doc/sluice/env_file
/usr/share/doc/sluice/sluice-container.service
/usr/share/doc/sluice/sluice.toml
/usr/share/man/man8/sluice.8.gz
/usr/share/sluice/env_file
EOF
)
if [ "$actual" != "$expected" ]; then
    diff <(echo "$expected") <(echo "$actual") | sed 's/^/  /' >&2 || true
    fail "the package's files differ from the expected list (< expected, > in the package)"
fi
mode=$(dpkg-deb -c "$deb" | awk '$6 == "./usr/bin/sluice" {print $1}')
[ "$mode" = "-rwxr-xr-x" ] || fail "/usr/bin/sluice has mode $mode"

control=$(dpkg-deb -f "$deb")
grep -q '^Package: sluice$' <<<"$control" || fail "Package is not sluice"
grep -q '^Depends:.*adduser' <<<"$control" || fail "Depends lacks adduser (postinst uses it)"
scripts=$out/control
dpkg-deb -e "$deb" "$scripts"
grep -q 'adduser --system' "$scripts/postinst" || fail "postinst does not create the sluice user"
grep -q '/opt/sc4s/env_file' "$scripts/postinst" || fail "postinst does not provide /opt/sc4s/env_file"
! grep -q '#DEBHELPER#' "$scripts/postinst" || fail "#DEBHELPER# was not expanded in postinst"
sh -n "$scripts/postinst" && sh -n "$scripts/postrm" || fail "a maintainer script has a syntax error"
# The unit in the package is the repository's, pointing at the packaged binary.
dpkg-deb --fsys-tarfile "$deb" | tar -xO ./usr/lib/systemd/system/sluice.service \
    | cmp -s - config/sluice.service || fail "the packaged unit differs from config/sluice.service"
grep -Eq '^ExecStart=/usr/bin/sluice run( |$)' config/sluice.service || fail "the unit does not run /usr/bin/sluice"
echo "check-deb: $(dpkg-deb -f "$deb" Package Version | tr '\n' ' '): $(wc -l <<<"$actual") files as expected"

if [ -n "$rootfs" ]; then
    [ "$(id -u)" -eq 0 ] || fail "--chroot needs root"
    [ -x "$rootfs/bin/sh" ] || fail "$rootfs is not a root filesystem"
    root=$out/root
    cp -a "$rootfs" "$root"
    cp "$deb" "$root/tmp/sluice.deb"
    mount -t proc proc "$root/proc"
    trap 'umount "$root/proc" 2>/dev/null || true; rm -rf "$out"' EXIT
    in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
    # adduser may be missing from a minbase root; dpkg then says so, and apt fetches it.
    if ! in_root dpkg -i /tmp/sluice.deb >"$out/dpkg.log" 2>&1; then
        in_root apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive in_root apt-get install -y -qq -f >>"$out/dpkg.log" 2>&1 \
            || { cat "$out/dpkg.log" >&2; fail "the package does not install"; }
    fi
    in_root dpkg -s sluice | grep -q '^Status: install ok installed' || fail "dpkg does not list sluice as installed"
    in_root getent passwd sluice | grep -q ':/var/lib/sluice:/usr/sbin/nologin$' \
        || fail "no sluice system user: $(in_root getent passwd sluice)"
    [ -f "$root/opt/sc4s/env_file" ] || fail "/opt/sc4s/env_file was not created"
    perms=$(in_root stat -c '%a %G' /opt/sc4s/env_file)
    [ "$perms" = "640 sluice" ] || fail "/opt/sc4s/env_file is $perms, not 640 group sluice"
    in_root /usr/bin/sluice --version
    in_root /bin/sh -c 'cd /tmp && /usr/bin/sluice run --check --env-file /opt/sc4s/env_file' >"$out/check.txt" \
        || fail "sluice run --check fails in the chroot: $(cat "$out/check.txt")"
    grep -q 'the configuration is valid' "$out/check.txt" || fail "run --check said: $(cat "$out/check.txt")"
    in_root man -w sluice >/dev/null 2>&1 || [ -f "$root/usr/share/man/man8/sluice.8.gz" ] \
        || fail "the man page is not installed"
    # An existing env_file (an SC4S installation's) survives a reinstall untouched.
    echo "SC4S_DEST_SPLUNK_HEC_DEFAULT_TOKEN=keep-me" >"$root/opt/sc4s/env_file"
    in_root dpkg -i /tmp/sluice.deb >/dev/null 2>&1 || fail "reinstall fails"
    grep -q keep-me "$root/opt/sc4s/env_file" || fail "a reinstall overwrote /opt/sc4s/env_file"
    in_root dpkg --purge sluice >/dev/null 2>&1 || fail "purge fails"
    [ ! -e "$root/usr/bin/sluice" ] || fail "purge left /usr/bin/sluice"
    echo "check-deb: installed into a copy of $rootfs: user, env_file, unit, run --check, reinstall, purge OK"
fi
