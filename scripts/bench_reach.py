#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The reachability scan's speed: a heap of MIB MiB (tests/bench/reach_heap.c).

Usage: scripts/bench_reach.py [--mib N] [--scans N]

Runs the workload under `memleakbpf -c` (room for its blocks), and once it is
ready sends SIGUSR2 SCANS times: each a scan of its roots and 1 KiB blocks,
each block pointing to 8 random others. Prints, per scan, how long the
target was held (memleakbpf's own line, and the hold it said to expect
before the scan) and the CPU memleakbpf used meanwhile
(its report of the scan included), then the medians. Figures only: it writes
no document.
"""

import os
import re
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
TRACER = os.path.join(ROOT, "memleakbpf")
SRC = os.path.join(ROOT, "tests", "bench", "reach_heap.c")
BIN = os.path.join(ROOT, ".output", "bench", "reach_heap")
EXPECTED = re.compile(r"the target will be held about ([\d.]+) s")
HELD = re.compile(r"reachability of pid \d+: held ([\d.]+) ms \(the scan ([\d.]+) ms\)")


def cpu_s(pid):
	with open("/proc/%d/stat" % pid) as f:
		fields = f.read().rsplit(")", 1)[1].split()
	return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait(cond, what, timeout=300):
	end = time.monotonic() + timeout
	while not cond():
		if time.monotonic() > end:
			sys.exit("bench_reach: no %s within %d s" % (what, timeout))
		time.sleep(0.1)


def main(argv):
	mib, scans = 1024, 3
	while argv:
		a = argv.pop(0)
		if a == "--mib":
			mib = int(argv.pop(0))
		elif a == "--scans":
			scans = int(argv.pop(0))
		else:
			sys.exit(__doc__)
	os.makedirs(os.path.dirname(BIN), exist_ok=True)
	subprocess.run(["gcc", "-O2", "-o", BIN, SRC], check=True)
	err = open("/tmp/bench_reach.%d.err" % os.getpid(), "w+")
	out = open("/tmp/bench_reach.%d.out" % os.getpid(), "w+")
	blocks = mib * 1024 * 2 + 65536
	p = subprocess.Popen([TRACER, "--max-allocs", str(blocks), "-c", "%s %d" % (BIN, mib), "3600"],
			     stdin=subprocess.PIPE, stdout=out, stderr=err)
	try:
		wait(lambda: "READY" in open(out.name).read(), "READY")
		rows = []
		for n in range(1, scans + 1):
			c0 = cpu_s(p.pid)
			p.send_signal(signal.SIGUSR2)
			wait(lambda: len(HELD.findall(open(err.name).read())) >= n, "scan")
			time.sleep(1)	# the report that follows the scan
			text = open(err.name).read()
			held, scan = map(float, HELD.findall(text)[-1])
			said = EXPECTED.findall(text)
			rows.append((held, cpu_s(p.pid) - c0))
			print("scan %d: held %.0f ms (said beforehand: %s), memleakbpf's CPU %.0f ms"
			      % (n, held, "about %s s" % said[-1] if len(said) >= n else "nothing",
				 rows[-1][1] * 1e3))
		print("%d MiB: held %.0f ms, CPU %.0f ms (medians of %d); load average %s" %
		      (mib, statistics.median(r[0] for r in rows),
		       statistics.median(r[1] for r in rows) * 1e3, scans,
		       open("/proc/loadavg").read().split()[0]))
	finally:
		p.stdin.close()
		p.wait(timeout=60)
		for f in (out, err):
			os.unlink(f.name)


if __name__ == "__main__":
	main(sys.argv[1:])
