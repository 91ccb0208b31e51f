#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make bench, the tracer's own costs: its start-up and its reports (issue 27).

Usage: scripts/bench_tracer.py [--rounds N] [--only startup,reports] [--no-doc]
       scripts/bench.py --only startup,reports (the same, from make bench's script)

startup   `memleakbpf -c /bin/true` from exec to exit, beside /bin/true alone
          and `heaptrack /bin/true`, rounds interleaved: the wall time, the
          CPU time (user + system, the kernel's verifier included) and the
          maximum RSS (getrusage of the waited-for process: memleakbpf's own,
          the windows of its BPF tables included; heaptrack's launcher and what it
          waits for). From memleakbpf -v, the time loading the BPF programs
          took and the instructions the verifier checked.
reports   the CPU time of the periodic reports at many stacks: memleakbpf -v
          traces tests/victims/v_stacks (churn from 2^BITS * 8 distinct
          stacks, more than the stack table holds, so that reclaiming retires
          stacks as a torch import does) with a report every second; each
          report's CPU time (the report thread's, as -v says it) against the
          stacks it read (its stack cache's, from -v's memory line), and the
          tracer's peak RSS (that line's too). Then `v_stacks ... keep`, whose
          churn blocks live until their stack comes back: up to 262,144 stacks
          hold blocks at once, as a torch job's 210,000 do, and each report
          lists them all (the CPU time against the stacks it lists).

Prints the tables and rewrites the "Tracer" section of docs/PERFORMANCE.md.
"""

import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from bench_torch import markdown, plain

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
TRACER = os.path.join(ROOT, "memleakbpf")
HEAPTRACK = "/usr/bin/heaptrack"
V_STACKS = os.path.join(ROOT, ".output", "victims", "v_stacks")
DOC = os.path.join(ROOT, "docs", "PERFORMANCE.md")
BEGIN, END = "<!-- bench-tracer:begin -->", "<!-- bench-tracer:end -->"
ROUNDS = 7
STACK_BITS = 15		# 8 * 2^15 = 262,144 distinct stacks: the default table's room, reclaimed
STACK_ROUNDS = 120	# 0.1 s apart: about 12 reports
LIVE_ROUNDS = 12	# "keep": 8 * 2^15 stacks live from the 8th round on
TIMEOUT = 600
START_MODES = ("untraced", "memleakbpf", "heaptrack")
BUILT = re.compile(r"memleakbpf: (final )?report built in (\d+) ms, (\d+) ms on the CPU .*?, (\d+) stacks")
PEAK = re.compile(r"our memory: RSS ([\d.]+ \w+) \(peak ([\d.]+) (\w+)\)")
# The stacks the report read (the stack cache's, after it): the built line counts those it shows.
READ = re.compile(r"our memory: .*?stack cache [\d.]+ \w+ \((\d+) stacks\)")
LOADED = re.compile(r"BPF programs loaded in (\d+) ms, (\d+) ms of it on the CPU"
		    r"(?:: the kernel's verifier (\d+) ms)?.*checked:(.*)")


def say(msg):
	sys.stderr.write("bench-tracer: %s\n" % msg)
	sys.stderr.flush()


def waited(argv, log):
	"""(wall s, CPU s, max RSS KiB) of argv, from its exec to its exit (wait4's figures)."""
	t0 = time.monotonic()
	p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
	_, status, ru = os.wait4(p.pid, 0)
	wall = time.monotonic() - t0
	p.returncode = os.waitstatus_to_exitcode(status)
	if p.returncode:
		raise RuntimeError("%s exited with %d" % (argv[0], p.returncode))
	return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def start_argv(mode, work):
	if mode == "untraced":
		return ["/bin/true"]
	if mode == "heaptrack":
		return [HEAPTRACK, "-o", os.path.join(work, "true.heaptrack"), "/bin/true"]
	return [TRACER, "-v", "-c", "/bin/true"]


def startup(rounds):
	"""{mode: [(wall, cpu, rss KiB)]}, {mode: why not}, the -v load lines."""
	vals, errors, loads = {}, {}, []
	work = tempfile.mkdtemp(prefix="memleakbpf-start-")
	try:
		for i in range(rounds):
			for mode in START_MODES:
				if mode == "heaptrack" and not os.path.exists(HEAPTRACK):
					errors[mode] = "%s is not installed" % HEAPTRACK
					continue
				log_path = os.path.join(work, mode + ".log")
				try:
					with open(log_path, "wb") as log:
						vals.setdefault(mode, []).append(waited(start_argv(mode, work), log))
				except (RuntimeError, OSError) as e:
					errors[mode] = str(e)
				if mode == "memleakbpf" and os.path.exists(log_path):
					m = LOADED.search(open(log_path, errors="replace").read())
					if m:
						loads.append((int(m.group(1)), int(m.group(2)),
							      int(m.group(3) or 0), m.group(4).strip()))
	finally:
		subprocess.run(["rm", "-rf", work])
	return vals, errors, loads


def startup_rows(vals, errors):
	rows = [("start-up", "wall s (min..max)", "CPU s", "max RSS MiB")]
	for mode in START_MODES:
		runs = vals.get(mode)
		if not runs:
			rows.append((mode, "n/a: " + errors.get(mode, "not run")[:60], "", ""))
			continue
		walls = [r[0] for r in runs]
		name = {"untraced": "/bin/true", "heaptrack": "heaptrack /bin/true"}.get(
			mode, "memleakbpf -c /bin/true")
		rows.append((name, "%.3f (%.3f..%.3f)" % (statistics.median(walls), min(walls), max(walls)),
			     "%.3f" % statistics.median(r[1] for r in runs),
			     "%.0f" % (statistics.median(r[2] for r in runs) / 1024)))
	return rows


def reports(live=False):
	"""[(stacks read, report CPU ms, wall ms)] of each periodic report, the final one, peak RSS.
	live: v_stacks keeps its churn blocks, and the stacks are those each report lists."""
	command = "%s %d %d" % (V_STACKS, STACK_BITS, LIVE_ROUNDS if live else STACK_ROUNDS)
	argv = [TRACER, "-v", "-c", command + (" keep" if live else ""), "1"]
	with tempfile.TemporaryFile() as log:
		subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
			       timeout=TIMEOUT, check=True)
		log.seek(0)
		text = log.read().decode("utf-8", "replace")
	periodic, final, peak = [], None, None
	for m in BUILT.finditer(text):
		read = READ.search(text, m.end())
		stacks = int(m.group(4)) if live else int(read.group(1)) if read else 0
		row = (stacks, int(m.group(3)), int(m.group(2)))
		if m.group(1):
			final = row
		else:
			periodic.append(row)
	peaks = PEAK.findall(text)
	if peaks:
		peak = "%s %s" % peaks[-1][1:]
	return periodic, final, peak


def report_lines(periodic, final, peak, live=False):
	if not periodic:
		return ["no periodic report was made (see memleakbpf -v)"]
	most = max(periodic)
	cpus = [r[1] for r in periodic]
	lines = ["periodic reports of `v_stacks %d %d%s` (a report every second): %d, at up to %s "
		 "stacks %s; their CPU time %d ms median, %d..%d ms; at the most stacks (%s) %d ms "
		 "(target: 200 ms at 210,000 stacks: %s)" % (
			 STACK_BITS, LIVE_ROUNDS if live else STACK_ROUNDS, " keep" if live else "",
			 len(periodic), "{:,}".format(most[0]),
			 "listed (live)" if live else "read",
			 statistics.median(cpus), min(cpus), max(cpus), "{:,}".format(most[0]), most[1],
			 ("met" if most[1] <= 200 else "not met") if most[0] >= 210000 else
			 "not judged, fewer stacks")]
	if final:
		lines.append("final report: %d ms of CPU at %s stacks" % (final[1], "{:,}".format(final[0])))
	if peak:
		lines.append("the tracer's peak RSS on it: %s (the BPF tables are read through 4 MiB windows: their kernel memory is not in it, -v gives it)" % peak)
	return lines


def write_doc(rows, lines, rounds, load):
	stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
	section = [BEGIN, "", "Last run: %s; %d interleaved rounds of the start-up, medians; the "
		   "machine's load average was %.1f as it began." % (stamp, rounds, load), ""]
	if rows:
		section += [markdown(rows), ""]
	section += ["- " + l for l in lines] + ["", END]
	text = open(DOC).read() if os.path.exists(DOC) else ""
	if BEGIN in text and END in text:
		head, rest = text.split(BEGIN, 1)
		text = head + "\n".join(section) + rest.split(END, 1)[1]
	else:
		text += "\n" + "\n".join(section) + "\n"
	with open(DOC, "w") as f:
		f.write(text)


def bench(rounds=ROUNDS, parts=("startup", "reports"), doc=True):
	load = os.getloadavg()[0]
	rows, lines, failed = None, [], False
	if "startup" in parts:
		vals, errors, loads = startup(rounds)
		rows = startup_rows(vals, errors)
		print(plain(rows))
		if loads:
			wall = statistics.median(l[0] for l in loads)
			cpu = statistics.median(l[1] for l in loads)
			verifier = statistics.median(l[2] for l in loads)
			lines.append("memleakbpf -c /bin/true: loading the BPF programs took %d ms median, "
				     "%d ms of it on the CPU, the kernel's verifier %d ms (its own "
				     "statistics), the rest libbpf's (the kernel's BTF read, the maps "
				     "made); instructions checked:%s"
				     % (wall, cpu, verifier, " " + loads[-1][3]))
		for mode, why in sorted(errors.items()):
			say("%s: %s" % (mode, why))
			failed = True
	if "reports" in parts:
		if not os.path.exists(V_STACKS):
			say("reports: %s is missing: make victims" % V_STACKS)
			failed = True
		else:
			lines += report_lines(*reports())
			lines += report_lines(*reports(live=True), live=True)
	for line in lines:
		print("tracer: " + line)
	if doc and rounds >= ROUNDS and not failed and len(parts) == 2:
		write_doc(rows, lines, rounds, load)
		say("results written to %s" % os.path.relpath(DOC, ROOT))


def main(argv):
	rounds, doc, parts = ROUNDS, True, ("startup", "reports")
	args = list(argv)
	while args:
		a = args.pop(0)
		if a == "--rounds":
			rounds = int(args.pop(0))
		elif a == "--only":
			parts = tuple(args.pop(0).split(","))
		elif a == "--no-doc":
			doc = False
		else:
			print(__doc__.strip())
			return 0 if a in ("-h", "--help") else 2
	if os.geteuid() != 0:
		say("needs root (memleakbpf loads BPF programs)")
		return 1
	bench(rounds, parts, doc)
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
