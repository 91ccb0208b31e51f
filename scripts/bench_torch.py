#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make bench, a real training job: PyTorch, import included.

Usage: scripts/bench_torch.py [--rounds N] [--steps N] [--no-doc] [--cold]
       scripts/bench.py --only torch (the same, from make bench's script)

The whole job, the fixed tests/victims/python/torch_train.py (`loss.item()`)
under Debian's /usr/bin/python3 and python3-torch, from the interpreter's
first instruction through `import torch` and the loop to its exit, in each
mode, rounds interleaved so that drift of the machine spreads over all alike:
  untraced     the job alone
  memleakbpf   ./memleakbpf -c with the default options (-v besides, which
               only names the unwind tables it builds)
  sample-512K  the same with --sample 512K (issue 26: no slower than heaptrack)
  floor        the same with BPF programs that return at once
               (MEMLEAKBPF_BENCH_FLOOR=1): what the uprobes alone cost
  heaptrack    the in-process peer (LD_PRELOAD, trace written to a file)
Each run is timed by tests/bench/stamp.so (LD_PRELOADed) from the
interpreter's first constructor to its exit, with the job's own CPU time
split in user (its code) and system (the kernel for it: page faults, and the
uprobe traps with their BPF programs, which run in its context); the rest of
its time it was off the CPU, either runnable and waiting for a core (its
main thread's run-queue delay: the tracer and anything else running on this
machine's two cores) or stopped and blocked (for the tracer under -c at each
library it maps, until that library's unwind table is built; reading its
files). Beside it, the tracer's whole run (load, attach, reports, the final
report), the CPU time the tracer itself used and its peak RSS (its VmHWM,
with the windows of the BPF tables it has mapped, from the memory line -v
prints after each report, whose kernel memory -v gives beside it; heaptrack's own memory is the job's, not apart), the CPU time
of each report it built (the periodic ones at the default interval, and the
final one: -v's "report built in" lines), and the training
loop alone as the job times it ("N steps in S s": the job without its
import, model and data, but traced since its first instruction). So where the time goes:
floor against untraced is the traps; memleakbpf against the floor, its BPF
programs, stack walks and stops.

The unwind tables: the tracer keeps them across runs (--unwind-cache), so
a run's stops at the job's dlopens depend on what earlier runs left. The
bench gives its runs a cache of their own, warmed before the first round
by one traced run of the job with --steps 1 (not counted): every run it
times is a second run, as a user's is after the first, and each says how
many files it read through the cache and how many from their CFI. --cold
runs them all with --unwind-cache off (every table read at every stop).

Prints the table and rewrites the torch section of docs/PERFORMANCE.md.
"""

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
TRACER = os.path.join(ROOT, "memleakbpf")
STAMP = os.path.join(ROOT, ".output", "bench", "stamp.so")
PYTHON = "/usr/bin/python3"
JOB = os.path.join(ROOT, "tests", "victims", "python", "torch_train.py")
HEAPTRACK = "/usr/bin/heaptrack"
DOC = os.path.join(ROOT, "docs", "PERFORMANCE.md")
BEGIN, END = "<!-- bench-torch:begin -->", "<!-- bench-torch:end -->"
MODES = ("untraced", "memleakbpf", "sample-512K", "floor", "heaptrack")
ROUNDS = 3		# a traced job takes about a minute here
STEPS = 1000		# torch_train.py's default: the loop is a second of the job untraced
RUN_TIMEOUT = 900
UNWIND_TABLE = "memleakbpf: unwind table "
THROUGH_CACHE = re.compile(r"^memleakbpf: unwind table .*, through the cache \(", re.M)
CACHE_WRITTEN = re.compile(r"unwind cache \S+: \d+ tables written .*")
# memleakbpf -v's account of its memory after each report: its VmHWM, the mapped tables in it.
OUR_PEAK = re.compile(r"our memory: RSS [\d.]+ \w+ \(peak ([\d.]+) (\w+)\)")
# memleakbpf -v's line after each report: its CPU time and the stacks it read.
REPORT_CPU = re.compile(r"memleakbpf: (final )?report built in \d+ ms, (\d+) ms on the CPU .*?, (\d+) stacks")
# The job's own timing of its training loop (after the import, the model and the data).
LOOP = re.compile(rb"torch_train: \d+ steps in ([\d.]+) s")


def say(msg):
	sys.stderr.write("bench-torch: %s\n" % msg)
	sys.stderr.flush()


def torch_missing():
	"""Why the job cannot run here, or None."""
	for path in (PYTHON, STAMP, TRACER):
		if not os.path.exists(path):
			return "%s is missing" % path
	r = subprocess.run([PYTHON, "-c", "import torch"], stdout=subprocess.PIPE,
			   stderr=subprocess.STDOUT)
	if r.returncode:
		tail = r.stdout.decode("utf-8", "replace").strip().splitlines()
		return "import torch fails under %s (python3-torch): %s" % (
			PYTHON, tail[-1] if tail else r.returncode)
	return None


def command(mode, steps, out, cache):
	"""(argv, env) of one run; the job's own LD_PRELOAD goes through env(1) under -c."""
	job = [PYTHON, JOB, "--steps", str(steps)]
	env = dict(os.environ, BENCH_STAMP=out + ".result", BENCH_STAMP_EXE=os.path.realpath(PYTHON))
	for k in ("LD_PRELOAD", "PYTHONMALLOC", "MEMLEAKBPF_BENCH_FLOOR",
		  "MEMLEAKBPF_PROBE_AT_ENTRY", "MEMLEAKBPF_BENCH_NO_PYTHON"):
		env.pop(k, None)
	stamped = ["/usr/bin/env", "LD_PRELOAD=" + STAMP] + job
	if mode == "untraced":
		return stamped, env
	if mode == "heaptrack":
		env["LD_PRELOAD"] = STAMP	# heaptrack puts its own library first
		return [HEAPTRACK, "-o", out + ".heaptrack"] + job, env
	if mode == "floor":
		env["MEMLEAKBPF_BENCH_FLOOR"] = "1"
	sample = ["--sample", mode.split("-", 1)[1]] if mode.startswith("sample-") else []
	return [TRACER, "-v", "--json", out + ".json", "--unwind-cache", cache] + sample + \
		["-c", " ".join(stamped)], env


def warm_up(cache, steps, work):
	"""One traced run of the job with --steps 1 into cache, before the rounds: its -v line of what it wrote."""
	log = os.path.join(work, "warm-up.log")
	job = " ".join([PYTHON, JOB, "--steps", str(steps)])
	with open(log, "wb") as f:
		subprocess.run([TRACER, "-v", "--unwind-cache", cache, "-c", job], stdin=subprocess.DEVNULL,
			       stdout=subprocess.DEVNULL, stderr=f, timeout=RUN_TIMEOUT)
	with open(log, errors="replace") as f:
		m = CACHE_WRITTEN.search(f.read())
	return m.group(0) if m else "nothing written (see the tracer's -v)"


def cache_use(path):
	"""(files read through the unwind cache, files read from their CFI) in a run's -v log."""
	with open(path, errors="replace") as f:
		text = f.read()
	cached = len(THROUGH_CACHE.findall(text))
	return cached, len(re.findall(r"^" + UNWIND_TABLE, text, re.M)) - cached


def read_kv(path):
	with open(path) as f:
		return {k: float(v) for k, v in (x.split("=", 1) for x in f.read().split())}


def children_cpu():
	ru = resource.getrusage(resource.RUSAGE_CHILDREN)
	return ru.ru_utime + ru.ru_stime


def tables(path):
	"""(files, rows, KiB) of the unwind tables memleakbpf -v built, from its stderr."""
	files, last = 0, None
	with open(path, errors="replace") as f:
		for line in f:
			if line.startswith(UNWIND_TABLE):
				files += 1
				last = line
	if not last:
		return None
	rows, kib = last.rsplit("all tables: ", 1)[1].split(" rows, ")
	return files, int(rows), int(kib.split()[0])


def tracer_peak(path):
	"""The tracer's peak RSS in MiB, from the last memory line of its -v log, or None."""
	with open(path, errors="replace") as f:
		found = OUR_PEAK.findall(f.read())
	if not found:
		return None
	value, unit = found[-1]
	return float(value) * {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024}.get(unit, 1)


def run(mode, steps, work, cache):
	"""One run's figures (s): job, user, sys, wait, stopped, whole, tracer_cpu; allocs, tables."""
	out = os.path.join(work, mode)
	for f in (out + ".result", out + ".json"):
		if os.path.exists(f):
			os.unlink(f)
	argv, env = command(mode, steps, out, cache)
	cpu0, t0 = children_cpu(), time.monotonic()
	with open(out + ".log", "wb") as log, open(out + ".out", "wb+") as said:
		p = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=said,
				   stderr=log, timeout=RUN_TIMEOUT)
		said.seek(0)
		loop = LOOP.search(said.read())
	whole, cpu = time.monotonic() - t0, children_cpu() - cpu0
	if not os.path.exists(out + ".result"):
		raise RuntimeError("%s: no timing (exit status %d; see %s.log)" % (mode, p.returncode, out))
	if not loop:
		raise RuntimeError("%s: the job did not time its loop (see %s.out)" % (mode, out))
	kv = read_kv(out + ".result")
	job, user, sys_ = kv["ns"] / 1e9, kv["user_ns"] / 1e9, kv["sys_ns"] / 1e9
	r = {"job": job, "user": user, "sys": sys_, "wait": kv["wait_ns"] / 1e9,
	     "stopped": job - user - sys_ - kv["wait_ns"] / 1e9, "whole": whole,
	     "tracer_cpu": cpu - user - sys_, "loop": float(loop.group(1))}
	if mode in ("memleakbpf", "floor"):
		with open(out + ".json") as f:
			r["allocs"] = json.load(f)["totals"]["allocs"]
		r["tables"] = tables(out + ".log")
		r["cache"] = cache_use(out + ".log")
		r["peak_mib"] = tracer_peak(out + ".log")
		r["reports"] = report_cpu(out + ".log")
	return r


def report_cpu(path):
	"""[(final, CPU ms, stacks)] of each report the run built (its -v lines)."""
	with open(path, errors="replace") as f:
		return [(bool(m.group(1)), int(m.group(2)), int(m.group(3)))
			for m in REPORT_CPU.finditer(f.read())]


def measure(rounds, steps, cold=False):
	"""{mode: [figures of each round]}, {mode: why it failed}; the warm-up's line."""
	vals, errors = {}, {}
	work = tempfile.mkdtemp(prefix="memleakbpf-torch-")
	cache, warmed = "off", "none: --cold, every run reads every table from its CFI"
	try:
		if not cold:
			cache = os.path.join(work, "unwind-cache")
			say("warm-up: the job with --steps 1, traced, to fill the unwind cache")
			warmed = warm_up(cache, 1, work)
		for i in range(rounds):
			say("round %d of %d" % (i + 1, rounds))
			for mode in MODES:
				if mode == "heaptrack" and not os.path.exists(HEAPTRACK):
					errors[mode] = "%s is not installed" % HEAPTRACK
					continue
				try:
					vals.setdefault(mode, []).append(run(mode, steps, work, cache))
				except (RuntimeError, OSError, subprocess.TimeoutExpired, KeyError,
					ValueError) as e:
					errors[mode] = str(e)
	finally:
		subprocess.run(["rm", "-rf", work])
	return vals, errors, warmed


def med(runs, key):
	return statistics.median(r[key] for r in runs)


def table(vals, errors):
	rows = [("mode", "job s (min..max)", "x untraced", "loop s (x untraced)", "user s", "system s",
		 "waiting for a core s", "stopped or blocked s", "whole run s", "tracer CPU s",
		 "tracer peak RSS MiB")]
	base = med(vals["untraced"], "job") if vals.get("untraced") else None
	for mode in MODES:
		runs = vals.get(mode)
		if not runs:
			rows.append((mode, "n/a", errors.get(mode, "not run")[:60], "", "", "", "", "", "", "",
				     ""))
			continue
		jobs = [r["job"] for r in runs]
		m = statistics.median(jobs)
		rows.append((mode, "%.2f (%.2f..%.2f)" % (m, min(jobs), max(jobs)),
			     "%.2f" % (m / base) if base else "", loop_cell(vals, runs),
			     "%.2f" % med(runs, "user"),
			     "%.2f" % med(runs, "sys"), "%.2f" % med(runs, "wait"),
			     "%.2f" % med(runs, "stopped"),
			     "%.2f" % med(runs, "whole"),
			     "%.2f" % med(runs, "tracer_cpu") if mode != "untraced" else "",
			     peak_cell(runs)))
	return rows


def loop_cell(vals, runs):
	"""The training loop alone, as the job timed it: import, model and data before it."""
	base = vals.get("untraced")
	m = med(runs, "loop")
	return "%.2f (%.2f)" % (m, m / med(base, "loop")) if base else "%.2f" % m


def peak_cell(runs):
	"""memleakbpf's own peak RSS (its -v line); heaptrack's is in the job's, not apart."""
	peaks = [r["peak_mib"] for r in runs if r.get("peak_mib")]
	return "%.0f" % statistics.median(peaks) if peaks else ""


def cache_line(vals, warmed):
	"""Which the bench measured: stops with a warm unwind cache, or every table read."""
	use = [r["cache"] for r in vals.get("memleakbpf") or [] if r.get("cache")]
	if not use:
		return []
	return ["unwind tables: memleakbpf's runs read %s files through the cache and %s from their "
		"CFI (each run's); the cache before round 1: %s" % (
			"/".join(str(c) for c, _ in use), "/".join(str(n) for _, n in use), warmed)]


def where_lines(vals):
	"""Where memleakbpf's added time goes, from the medians."""
	u, t, f = vals.get("untraced"), vals.get("memleakbpf"), vals.get("floor")
	if not (u and t and f):
		return []
	keys = ("job", "user", "sys", "wait", "stopped")
	added = {k: med(t, k) - med(u, k) for k in keys}
	floor = {k: med(f, k) - med(u, k) for k in keys}
	allocs = statistics.median(r["allocs"] for r in t)
	lines = ["memleakbpf adds %.2f s to the job (%.2fx): %+.2f s of its system time, %+.2f s "
		 "stopped or blocked, %+.2f s waiting for a core, %+.2f s of user time" % (
			 added["job"], med(t, "job") / med(u, "job"), added["sys"], added["stopped"],
			 added["wait"], added["user"]),
		 "system time per allocation (%s traced): %+.1f us under memleakbpf, %+.1f us under "
		 "the bare probes: the traps are %.0f%% of it, the BPF programs (stack walks, "
		 "tables) the rest" % ("{:,}".format(int(allocs)), added["sys"] * 1e6 / allocs,
				       floor["sys"] * 1e6 / allocs,
				       100 * floor["sys"] / added["sys"] if added["sys"] > 0 else 0)]
	tab = [r["tables"] for r in t if r.get("tables")]
	if tab:
		files, rows, kib = tab[0]
		lines.append("stopped or blocked: %+.2f s, the bare probes' %+.2f s of it: the stops at "
			     "the %d files the job maps, each until its unwind table is in (built, or read "
			     "from the unwind cache: below; %s rows, "
			     "%s KiB of kernel memory in all)" % (
				     added["stopped"], floor["stopped"], files, "{:,}".format(rows),
				     "{:,}".format(kib)))
	lines.append("waiting for a core: %+.2f s (the bare probes: %+.2f s), while the tracer "
		     "used %.2f s of CPU on the machine's two cores" % (
			     added["wait"], floor["wait"], med(t, "tracer_cpu")))
	lines += report_lines(t)
	h, sm = vals.get("heaptrack"), vals.get("sample-512K")
	if h:
		lines.append("heaptrack: %.2fx untraced (%+.2f s)" % (
			med(h, "job") / med(u, "job"), med(h, "job") - med(u, "job")))
	if h:
		lines.append("against heaptrack in the same rounds: the whole job %.2fx heaptrack's time, "
			     "the training loop alone %.2fx (%.2f s against %.2f s; issue 27's "
			     "target: 1.2x)" % (med(t, "job") / med(h, "job"),
						med(t, "loop") / med(h, "loop"), med(t, "loop"),
						med(h, "loop")))
	if h and sm:
		lines.append("--sample 512K: %.2fx untraced, %.2f s against heaptrack's %.2f s (target: no "
			     "slower than heaptrack: %s); the tracer's CPU %.2f s" % (
				     med(sm, "job") / med(u, "job"), med(sm, "job"), med(h, "job"),
				     "met" if med(sm, "job") <= med(h, "job") else "not met",
				     med(sm, "tracer_cpu")))
	return lines


def report_lines(runs):
	"""The reports' CPU on the job (issue 27, item 2), over memleakbpf's runs."""
	built = [b for r in runs for b in r.get("reports") or []]
	periodic = [(cpu, stacks) for final, cpu, stacks in built if not final]
	final = [(cpu, stacks) for f, cpu, stacks in built if f]
	if not built:
		return []
	line = "the reports' CPU on the job (the tracer's report thread, -v): "
	if periodic:
		big = [cpu for cpu, stacks in periodic if stacks >= 200000]
		line += "%d periodic (the default interval) at up to %s stacks, %d ms median, %d..%d ms" % (
			len(periodic), "{:,}".format(max(s for _, s in periodic)),
			statistics.median(c for c, _ in periodic), min(c for c, _ in periodic),
			max(c for c, _ in periodic))
		if big:
			line += "; those at 200,000 stacks or more %s ms (issue 27's target: 200 ms at " \
				"210,000 stacks: %s)" % ("/".join(str(c) for c in big),
							"met" if max(big) <= 200 else "not met")
		line += "; "
	if final:
		line += "the final report %d ms median at %s stacks" % (
			statistics.median(c for c, _ in final), "{:,}".format(max(s for _, s in final)))
	return [line.rstrip("; ")]


def markdown(rows):
	out = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
	return "\n".join(out + ["| " + " | ".join(r) + " |" for r in rows[1:]])


def plain(rows):
	widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
	return "\n".join("  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in rows)


def write_doc(rows, lines, rounds, steps, load):
	stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
	section = [BEGIN, "", "Last run: %s; %d interleaved rounds of `torch_train.py --steps %d`, "
		   "medians (min..max for the job); the machine's load average was %.1f as it began."
		   % (stamp, rounds, steps, load), "", markdown(rows), ""] + \
		  ["- " + l for l in lines] + ["", END]
	text = open(DOC).read() if os.path.exists(DOC) else ""
	if BEGIN in text and END in text:
		head, rest = text.split(BEGIN, 1)
		text = head + "\n".join(section) + rest.split(END, 1)[1]
	else:
		text += "\n" + "\n".join(section) + "\n"
	with open(DOC, "w") as f:
		f.write(text)


def bench(rounds=ROUNDS, steps=STEPS, doc=True, cold=False):
	"""The torch job in every mode: the table, where the time goes, the doc."""
	why = torch_missing()
	if why:
		say("skipped: %s" % why)
		return
	load = os.getloadavg()[0]
	vals, errors, warmed = measure(rounds, steps, cold)
	rows, lines = table(vals, errors), where_lines(vals) + cache_line(vals, warmed)
	print(plain(rows))
	for line in lines:
		print("torch: " + line)
	for mode, why in sorted(errors.items()):
		say("%s: %s" % (mode, why))
	if doc and rounds >= ROUNDS and not errors:
		write_doc(rows, lines, rounds, steps, load)
		say("results written to %s" % os.path.relpath(DOC, ROOT))


def main(argv):
	rounds, steps, doc, cold = ROUNDS, STEPS, True, False
	args = list(argv)
	while args:
		a = args.pop(0)
		if a == "--rounds":
			rounds = int(args.pop(0))
		elif a == "--steps":
			steps = int(args.pop(0))
		elif a == "--no-doc":
			doc = False
		elif a == "--cold":
			cold = True
		else:
			print(__doc__.strip())
			return 0 if a in ("-h", "--help") else 2
	if os.geteuid() != 0:
		say("needs root (memleakbpf loads BPF programs)")
		return 1
	bench(rounds, steps, doc, cold)
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
