#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make bench, symbolization part: how long names, files and lines take.

Usage: scripts/bench_symbolize.py [--runs N] [--no-doc]

Runs .output/bench/symbolize (tests/bench/symbolize.c: no BPF, no root) N
times (default 5) and takes the median of each figure: the cold resolution
of 10,000 distinct frames over 50 object files, the first periodic report
over 10,000 stacks with a fresh symbolizer, and every later one. Prints them
against the targets (under 1 s and under 200 ms) and rewrites the
"Symbolization" section of docs/PERFORMANCE.md, between its markers; the
rest of that file belongs to scripts/bench.py and is left as it is.
Exit status 1 when a target is missed.
"""

import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
BENCH = os.path.join(ROOT, ".output", "bench", "symbolize")
DOC = os.path.join(ROOT, "docs", "PERFORMANCE.md")
BEGIN, END = "<!-- symbolize:begin -->", "<!-- symbolize:end -->"
TARGETS = {"cold_ms": 1000.0, "report_ms": 200.0}


def run_once():
	r = subprocess.run([BENCH], cwd=ROOT, stdout=subprocess.PIPE, check=True)
	figures, files = {}, []
	for line in r.stdout.decode().splitlines():
		key, _, value = line.partition("=")
		if key == "file":
			files.append(value)
		else:
			figures[key] = float(value)
	return figures, files


def machine():
	cpu = platform.processor() or platform.machine()
	try:
		with open("/proc/cpuinfo") as f:
			for line in f:
				if line.startswith("model name"):
					cpu = line.split(":", 1)[1].strip()
					break
	except OSError:
		pass
	return "%s, %d CPUs, Linux %s" % (cpu, os.cpu_count(), platform.release())


def libc_debug():
	"""Whether glibc's separate debug info (libc6-dbg) is there to be read."""
	r = subprocess.run(["dpkg-query", "-W", "-f", "${Status}", "libc6-dbg"],
			   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
	return b"install ok installed" in r.stdout


def write_doc(med, spread, runs, files):
	stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
	n = int(med["modules"])
	rows = [
		("{:,} distinct frames, {} files, cold".format(int(med["frames"]), n), "cold_ms",
		 "< 1,000 ms"),
		("the same frames again (cached)", "warm_ms", ""),
		("first report, {:,} stacks of {} frames".format(int(med["stacks"]), int(med["depth"])),
		 "report1_ms", ""),
		("every later report, the same stacks", "report_ms", "< 200 ms"),
	]
	lines = [BEGIN, "", "## Symbolization", "",
		 "Last `make bench`: %s, on %s; median of %d runs of `.output/bench/symbolize` "
		 "(tests/bench/symbolize.c), min..max in brackets." % (stamp, machine(), runs), "",
		 "| What | Time | Target |", "| --- | ---: | ---: |"]
	for what, key, target in rows:
		lines.append("| %s | %.1f ms (%.1f..%.1f) | %s |" % (
			what, med[key], spread[key][0], spread[key][1], target))
	lines += ["",
		  "The files are laid out as one process would have them loaded, without BPF: "
		  "the -g victims, glibc (with its separate debug info from "
		  "libc6-dbg: %s), libstdc++, and the largest shared libraries of this machine "
		  "(%s). The frames are return addresses spread evenly over each file's "
		  "functions; a report builds the aggregate, resolves every frame of every "
		  "stack and writes the text report. Cold means a fresh symbolizer: every file "
		  "opened, its symbol table sorted, its DWARF and separate debug file found, and "
		  "each compilation unit's function index built the first time a frame falls "
		  "in it. After that, a frame costs one hash lookup: reports stay cheap however "
		  "long the run, and a library loaded again (dlopen after dlclose, an exec) "
		  "or another copy with the same build id is not read twice. (Inlined frames "
		  "through dwarf_getscopes, which walks the whole compilation unit for every "
		  "address, made the cold figure about 850 ms here.)" % (
			  "installed" if libc_debug() else "not installed",
			  ", ".join(os.path.basename(f.split()[0]) for f in files[5:11]) + ", ..."),
		  "", END]
	text = open(DOC).read() if os.path.exists(DOC) else ""
	if BEGIN in text and END in text:
		head, rest = text.split(BEGIN, 1)
		text = head + "\n".join(lines) + rest.split(END, 1)[1]
	else:
		text = text + ("\n" if text else "") + "\n".join(lines) + "\n"
	with open(DOC, "w") as f:
		f.write(text)


def main(argv):
	runs, doc = 5, True
	args = list(argv)
	while args:
		a = args.pop(0)
		if a == "--runs":
			runs = int(args.pop(0))
		elif a == "--no-doc":
			doc = False
		else:
			print(__doc__.strip())
			return 0 if a in ("-h", "--help") else 2
	if not os.access(BENCH, os.X_OK):
		sys.stderr.write("bench_symbolize: %s not built (make %s)\n" % (
			BENCH, os.path.relpath(BENCH, ROOT)))
		return 2
	results, files = [], []
	for _ in range(runs):
		figures, files = run_once()
		results.append(figures)
	med = {k: statistics.median(r[k] for r in results) for k in results[0]}
	spread = {k: (min(r[k] for r in results), max(r[k] for r in results)) for k in results[0]}
	missed = [k for k, limit in TARGETS.items() if med[k] >= limit]
	print("symbolization: %d frames over %d files: cold %.1f ms (target < 1000); "
	      "report over %d stacks: first %.1f ms, then %.1f ms (target < 200)%s" % (
		      med["frames"], med["modules"], med["cold_ms"], med["stacks"],
		      med["report1_ms"], med["report_ms"],
		      "; MISSED: " + ", ".join(missed) if missed else ""))
	if doc:
		write_doc(med, spread, runs, files)
	return 1 if missed else 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
