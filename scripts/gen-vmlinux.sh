#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Regenerate vmlinux/<arch>/vmlinux.h from the running kernel's BTF. The result
# is checked in: CO-RE relocations make one header good for every kernel.
set -eu
arch=$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
btf=${BTF:-/sys/kernel/btf/vmlinux}
out=$(dirname "$0")/../vmlinux/$arch/vmlinux.h
[ -r "$btf" ] || { echo "gen-vmlinux: $btf not readable: kernel built without BTF?" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "gen-vmlinux: wrote $out"
