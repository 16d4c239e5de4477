#!/bin/sh
# Compiles agentjail-init for the build machine's architecture; called by launcher/pom.xml.
# usage: build.sh OUTPUT_DIR SOURCE...
set -eu
output_dir=$1
shift
cc=${CC:-cc}

if ! command -v "$cc" >/dev/null 2>&1; then
    echo "agentjail: building agentjail-init needs a C compiler ('$cc' not found); install gcc (Debian: apt-get install gcc libc6-dev) or set CC" >&2
    exit 1
fi

case "$(uname -m)" in
    x86_64 | amd64) arch=x86_64 ;;
    aarch64 | arm64) arch=aarch64 ;;
    *) echo "agentjail: unsupported architecture $(uname -m) (x86_64 and aarch64 are supported)" >&2; exit 1 ;;
esac

mkdir -p "$output_dir"
output="$output_dir/agentjail-init-linux-$arch"
# Hardened as distributions build their packages: stack protector, position-independent (so ASLR moves it too),
# relocations read-only and bound at start-up.
flags="-O2 -Wall -Wextra -Werror -std=c11 -D_FORTIFY_SOURCE=2 -fstack-protector-strong -fPIE -Wl,-z,relro,-z,now"

# Static first (a static PIE): the binary then needs nothing from the jail's /usr. A libc without static archives
# falls back to a dynamic PIE, which works because the jail binds /usr and /lib* read-only.
if ! "$cc" $flags -static-pie -o "$output" "$@" 2>/dev/null; then
    echo "agentjail: static link of agentjail-init failed, building it dynamically" >&2
    "$cc" $flags -pie -o "$output" "$@"
fi
strip "$output" 2>/dev/null || true
chmod 0755 "$output"
