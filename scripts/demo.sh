#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make demo`: trace the bundled leaky example with one report a second, then
# the final report; the JSON and folded reports are written to .output/demo/.
set -eu
cd "$(dirname "$0")/.."

out=.output/demo
victim=.output/victims/demo_leaky

for f in ./memleakbpf "$victim"; do
	if [ ! -x "$f" ]; then
		echo "demo: $f is not built: run 'make demo'" >&2
		exit 1
	fi
done

# uprobes and BPF maps need root. Under sudo, memleakbpf still runs the
# victim as the invoking user.
if [ "$(id -u)" -eq 0 ]; then
	as_root=""
elif command -v sudo >/dev/null 2>&1; then
	as_root="sudo"
	echo "demo: tracing needs root: running memleakbpf with sudo"
else
	echo "demo: tracing needs root, and there is no sudo: run 'make demo' as root" >&2
	exit 1
fi

# Made by us, not root, so that 'make clean' can remove it.
mkdir -p "$out"
rm -f "$out/report.json" "$out/leaks.folded"

echo "demo: $ ${as_root:+$as_root }./memleakbpf --json $out/report.json --folded $out/leaks.folded -c $victim 1"
status=0
$as_root ./memleakbpf --json "$out/report.json" --folded "$out/leaks.folded" \
	-c "$victim" 1 || status=$?
if [ "$status" -ne 0 ]; then
	echo "demo: memleakbpf failed (exit $status)" >&2
	exit "$status"
fi
if [ -n "$as_root" ]; then
	$as_root chown "$(id -u):$(id -g)" "$out/report.json" "$out/leaks.folded"
fi

cat <<MSG

demo: the leak is the request header that parse_header() allocates and
demo: handle_request() never frees: 200 x 512 bytes, growing with every batch.
demo: The response cache stayed small while the demo ran and was freed at exit.
demo: JSON report:   $out/report.json
demo: folded stacks: $out/leaks.folded (flamegraph.pl $out/leaks.folded > leaks.svg)
MSG
