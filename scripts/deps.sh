#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Install the Debian packages memleakbpf needs to build, demo and test, when
# they are missing. Silent when all are present: `make test` runs it first.
set -eu

# clang/llvm: `clang -target bpf`; bpftool: the skeleton; libc6-dbg: names and
# lines for glibc frames; python3: the e2e runner; tcmalloc/jemalloc: the
# allocator tests; google-perftools (google-pprof) and golang-go (go tool
# pprof): the readers the --pprof and --snapshot-dir tests check against;
# redis-server, redis-tools, heaptrack (with gdb for its -p) and bpftrace: the
# real server and the peers of `make bench`; python3-torch: the training job
# of the PyTorch tests and bench; jq, sqlite3, gawk: real programs whose
# figures the tests compare with valgrind's (peak, reachability); libfst-tools:
# OpenFST's tools, C++ on the standard containers, for `make bench`.
PACKAGES="make gcc g++ clang llvm libbpf-dev bpftool libelf-dev libdw-dev \
zlib1g-dev pkg-config libc6-dev libc6-dbg python3 libtcmalloc-minimal4 \
libjemalloc2 valgrind google-perftools golang-go redis-server redis-tools \
heaptrack gdb bpftrace python3-torch jq sqlite3 gawk chromium libfst-tools"

missing_packages()
{
	for p in $PACKAGES; do
		# "install ok installed"; anything else (absent, config-files,
		# half-installed) needs an install.
		case $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true) in
		*" installed") ;;
		*) printf '%s ' "$p" ;;
		esac
	done
}

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps: not a Debian system (no dpkg-query); install the equivalents of:" >&2
	echo "deps:   $PACKAGES" >&2
	exit 0
fi

missing=$(missing_packages)
missing=${missing% }
[ -n "$missing" ] || exit 0

if [ "$(id -u)" -eq 0 ]; then
	as_root=""
elif command -v sudo >/dev/null 2>&1; then
	as_root="sudo"
else
	echo "deps: missing packages: $missing" >&2
	echo "deps: not root and no sudo: as root, run apt-get install $missing" >&2
	exit 1
fi
echo "deps: installing missing packages: $missing"

# sudo resets the environment: pass DEBIAN_FRONTEND through env(1).
$as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
# $missing is a word list on purpose.
# shellcheck disable=SC2086
$as_root env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --no-install-recommends $missing

missing=$(missing_packages)
missing=${missing% }
if [ -n "$missing" ]; then
	echo "deps: still missing after apt-get install: $missing" >&2
	exit 1
fi
