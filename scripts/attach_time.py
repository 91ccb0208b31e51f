#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""How long `memleakbpf -p PID` takes to say it is tracing (docs/PERFORMANCE.md,
"Attaching").

  scripts/attach_time.py [--runs N] [--settle S] [--tracer PATH] -- COMMAND [ARGS...]

Starts COMMAND, waits S seconds (default 3: long enough for `import torch`),
then runs `memleakbpf -p PID` N times (default 5), each from its exec to its
"memleakbpf: tracing pid" line, then `memleakbpf -v -p PID` N times, until
-v says its unwind tables are all loaded; ends each with SIGINT, and COMMAND
at the end. Prints every run and the medians. Needs root, like memleakbpf.
"""

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACING = "memleakbpf: tracing pid"
READY = "memleakbpf: unwind tables ready "


def one_run(tracer, pid, until):
	"""Seconds from the tracer's start to its first line starting with until, or None."""
	t0 = time.monotonic()
	argv = [tracer] + (["-v"] if until == READY else []) + ["-p", str(pid), "100"]
	p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
	got = None
	for line in p.stderr:
		if line.startswith(until):
			got = time.monotonic() - t0
			break
		if time.monotonic() > t0 + 60:
			break
	p.send_signal(signal.SIGINT)
	try:
		p.communicate(timeout=10)
	except subprocess.TimeoutExpired:
		p.kill()
		p.communicate()
	return got


def main():
	ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
	ap.add_argument("--runs", type=int, default=5)
	ap.add_argument("--settle", type=float, default=3.0)
	ap.add_argument("--tracer", default=os.path.join(ROOT, "memleakbpf"))
	ap.add_argument("command", nargs="+")
	args = ap.parse_args()
	target = subprocess.Popen(args.command, stdout=subprocess.DEVNULL)
	try:
		time.sleep(args.settle)
		if target.poll() is not None:
			sys.exit("%s exited (%s) before the runs" % (args.command[0], target.returncode))
		for until, what in ((TRACING, "tracing"), (READY, "-v: unwind tables ready")):
			got = []
			for i in range(args.runs):
				t = one_run(args.tracer, target.pid, until)
				if t is None:
					sys.exit("run %d: no %r line" % (i, until))
				got.append(t)
				print("run %d: %s after %.3f s" % (i, what, t))
				time.sleep(0.5)
			print("median of %d: %s after %.3f s" % (len(got), what, statistics.median(got)))
	finally:
		target.kill()
		target.wait()


if __name__ == "__main__":
	main()
