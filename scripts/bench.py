#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make bench: what tracing costs a program, against the floor and the peers.

Usage: scripts/bench.py [--runs N] [--quick] [--no-doc] [--no-scale] [--no-unwind] [--only NAME,...]

--only runs only what it names: workloads of the table below, and the parts
after it: scale, unwind, python, python-objects (--py-objects on pyenv's 3.11),
torch (the PyTorch job, scripts/bench_torch.py), startup and reports (the tracer's
start-up and its reports' CPU at many stacks, scripts/bench_tracer.py).

Every workload runs untraced and under every tracer, interleaved: round after
round, each (workload, tracer) once, so that drift of the machine spreads over
all of them alike. A run's figure is ns per malloc/free pair:
  - the C workloads (tests/bench/wl.c) time their own loop;
  - Python, jq and openfst (OpenFST's fstminimize on a speech lexicon's
    shape: C++ on the standard containers, from Debian's libfst-tools) are
    timed from their first constructor to their exit by tests/bench/stamp.c
    (LD_PRELOADed), and their pair count is the number of allocations
    memleakbpf's exact mode counted in the same round.
So no tracer's start-up or final report is in any figure.

Tracers:
  untraced      the program alone
  memleakbpf    ./memleakbpf -c, default exact mode (stacks, every block)
  floor         the same links on the same probe points, with BPF programs
                that return at once (MEMLEAKBPF_BENCH_FLOOR=1): the cost of
                the uprobes themselves
  sample-64K, sample-512K
                memleakbpf --sample 64K and 512K (issue 26): an unsampled
                call's BPF work skipped, and on Linux 6.13 (uprobe sessions)
                its malloc's return probe too
  *@entry       (tight loop only) the same two with every probe at its
                function's entry (MEMLEAKBPF_PROBE_AT_ENTRY=1): the gain of
                probe placement
  bpftrace      the classic in-kernel design: uprobe + uretprobe on malloc,
                uprobe on free at its entry, stacks in a stack map
  heaptrack     the in-process peer (LD_PRELOAD, trace written to a file)

Prints the table (median ns per pair, spread min..max, ns added per pair over
untraced, ratios to untraced and to the floor), then the memory and scale
figures (the tracer's RSS and kernel memory over a long run with 10,000 live
blocks, heaptrack's trace size on it, the final report's time over 1M live
blocks from 10,648 stacks), and rewrites the results section of
docs/PERFORMANCE.md. Needs root; installs bpftrace, heaptrack, jq and
libfst-tools from Debian when they are missing. A tracer that cannot run here is shown
as such, with the reason, never with made-up figures.

Then (unless --no-unwind) --unwind=fp against --unwind=dwarf, side by side
on the same binaries, and the CFI tables' kernel memory: the "CFI unwinding"
section of docs/PERFORMANCE.md.
"""

import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import bench_torch
import bench_tracer

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
OUT = os.path.join(ROOT, ".output", "bench")
TRACER = os.path.join(ROOT, "memleakbpf")
WL = os.path.join(OUT, "wl")
WL_CXX = os.path.join(OUT, "wl_cxx")
STAMP = os.path.join(OUT, "stamp.so")
DOC = os.path.join(ROOT, "docs", "PERFORMANCE.md")
PYTHON = "/usr/bin/python3"
JQ = "/usr/bin/jq"
FSTMINIMIZE = "/usr/bin/fstminimize"	# OpenFST (libfst-tools): C++ on the standard containers
FST_WORDS = 8000	# the lexicon's words: about 0.3 s of fstminimize untraced
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
TCMALLOC = "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"
PACKAGES = {"bpftrace": "/usr/bin/bpftrace", "heaptrack": "/usr/bin/heaptrack", "jq": JQ,
	    "libfst-tools": FSTMINIMIZE}
RUN_TIMEOUT = 120
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
PARTS = ("scale", "unwind", "python", "python-objects", "torch", "startup", "reports")	# what runs after the table

# name: (argv, how it is timed[, the allocator LD_PRELOADed])
WORKLOADS = {
	"loop": ([WL, "loop", "100000", "64"], "self"),
	"jemalloc": ([WL, "loop", "100000", "64"], "self", JEMALLOC),
	"tcmalloc": ([WL, "loop", "100000", "64"], "self", TCMALLOC),
	"c++new[]": ([WL_CXX, "loop", "100000", "64"], "self"),
	"working-set": ([WL, "ws", "100000", "10000"], "self"),
	"2-threads": ([WL, "threads", "50000", "2"], "self"),
	"python": ([PYTHON, os.path.join(ROOT, "tests", "bench", "alloc.py"), "40"], "stamp"),
	"jq": ([JQ, "-f", os.path.join(ROOT, "tests", "bench", "bench.jq"),
		os.path.join(OUT, "data.json")], "stamp"),
	"openfst": ([FSTMINIMIZE, os.path.join(OUT, "lexicon.det.fst"), "/dev/null"], "stamp"),
}
# A workload that needs a package: left out, said so, when it cannot be installed.
NEEDS = {"jq": "jq", "openfst": "libfst-tools"}
TRACERS = ["untraced", "memleakbpf", "sample-64K", "sample-512K", "floor", "memleakbpf@entry",
	   "floor@entry", "bpftrace", "heaptrack"]
SAMPLES = {"sample-64K": "64K", "sample-512K": "512K"}	# --sample's mean of each
ENTRY_ONLY_ON = {"loop", "jemalloc", "tcmalloc", "c++new[]"}	# the @entry variants run on these
# Every allocator at glibc's cost: their added ns/pair against the loop's, at most this.
ALLOCATOR_TARGET = 1.3

def preload(workload):
	"""The allocator a workload runs on instead of glibc's, or None."""
	spec = WORKLOADS[workload]
	return spec[2] if len(spec) > 2 else None


BPFTRACE_SCRIPT = """
uprobe:%(libc)s:malloc /pid == cpid/ { @size[tid] = arg0; }
uretprobe:%(libc)s:malloc /pid == cpid && @size[tid]/ {
	@live[retval] = (@size[tid], ustack);
	delete(@size[tid]);
}
uprobe:%(libc)s:free /pid == cpid/ { delete(@live[arg0]); }
END { clear(@size); clear(@live); }
"""


def say(msg):
	sys.stderr.write("bench: %s\n" % msg)
	sys.stderr.flush()


def ensure_packages():
	"""apt-get install the peers when missing (root only); returns what is there."""
	missing = [p for p, path in PACKAGES.items() if not os.path.exists(path)]
	if missing and os.geteuid() == 0 and shutil.which("apt-get"):
		say("installing %s" % " ".join(missing))
		env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
		subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends"] + missing,
			       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
	return {p for p, path in PACKAGES.items() if os.path.exists(path)}


def make_data(workloads=()):
	"""The jq input: the same 3,000 rows every time; the FST openfst minimizes."""
	path = os.path.join(OUT, "data.json")
	rows = [{"id": i, "name": "row-%d" % i, "vals": [i * j % 97 for j in range(8)],
		 "tags": {"a": str(i), "b": i % 7}} for i in range(3000)]
	with open(path, "w") as f:
		json.dump(rows, f)
	if "openfst" in workloads:
		make_lexicon(os.path.join(OUT, "lexicon"))


def make_lexicon(base):
	"""The FST openfst minimizes: FST_WORDS words of a lexicon (tests/bench/lexicon.py)."""
	subprocess.run([sys.executable, os.path.join(ROOT, "tests", "bench", "lexicon.py"), base,
			str(FST_WORDS)], check=True)


class Run:
	def __init__(self, tracer, workload, work):
		self.tracer, self.workload, self.work = tracer, workload, work
		self.out = os.path.join(work, "%s.%s" % (workload, tracer.replace("@", "-")))

	def env(self):
		argv, timing = WORKLOADS[self.workload][:2]
		env = dict(os.environ)
		for k in ("LD_PRELOAD", "MEMLEAKBPF_BENCH_FLOOR", "MEMLEAKBPF_PROBE_AT_ENTRY"):
			env.pop(k, None)
		env["PYTHONMALLOC"] = "malloc"
		env["PYTHONHASHSEED"] = "0"
		env["BENCH_OUT"] = self.out + ".result"
		if timing == "stamp":
			env["BENCH_STAMP"] = self.out + ".result"
			env["BENCH_STAMP_EXE"] = os.path.realpath(argv[0])
		if self.tracer.startswith("floor"):
			env["MEMLEAKBPF_BENCH_FLOOR"] = "1"
		if self.tracer.endswith("@entry"):
			env["MEMLEAKBPF_PROBE_AT_ENTRY"] = "1"
		if self.tracer == "bpftrace":
			env["BPFTRACE_MAP_KEYS_MAX"] = str(1 << 20)
		return env

	def argv(self):
		"""The command line; the program's own LD_PRELOAD goes through env(1)."""
		argv, timing = WORKLOADS[self.workload][:2]
		prog = list(argv)
		lib = STAMP if timing == "stamp" else preload(self.workload)
		if lib and self.tracer != "heaptrack":
			prog = ["/usr/bin/env", "LD_PRELOAD=" + lib] + prog
		cmd = " ".join(prog)
		if self.tracer == "untraced":
			return prog
		if self.tracer in SAMPLES:
			return [TRACER, "--sample", SAMPLES[self.tracer], "-c", cmd, "3600"]
		if self.tracer.startswith(("memleakbpf", "floor")):
			return [TRACER, "--json", self.out + ".json", "-c", cmd, "3600"]
		if self.tracer == "bpftrace":
			script = self.out + ".bt"
			with open(script, "w") as f:
				f.write(BPFTRACE_SCRIPT % {"libc": preload(self.workload) or LIBC})
			return ["bpftrace", script, "-c", cmd]
		return ["heaptrack", "-o", self.out + ".heaptrack"] + prog

	def execute(self):
		"""ns per pair (or total ns for stamp workloads); raises on failure."""
		env = self.env()
		if self.tracer == "heaptrack" and WORKLOADS[self.workload][1] == "stamp":
			env["LD_PRELOAD"] = STAMP	# heaptrack puts its own library first
		elif self.tracer == "heaptrack" and preload(self.workload):
			env["LD_PRELOAD"] = preload(self.workload)
		result = self.out + ".result"
		if os.path.exists(result):
			os.unlink(result)
		with open(self.out + ".log", "wb") as log:
			p = subprocess.run(self.argv(), env=env, stdin=subprocess.DEVNULL,
					   stdout=log, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT)
		if not os.path.exists(result):
			raise RuntimeError("no result (exit status %d; see %s.log)" % (p.returncode, self.out))
		with open(result) as f:
			kv = dict(x.split("=", 1) for x in f.read().split())
		return float(kv["ns_per_pair"] if "ns_per_pair" in kv else kv["ns"])

	def allocations(self):
		"""memleakbpf's count of allocations in this run, from its JSON report."""
		try:
			with open(self.out + ".json") as f:
				return json.load(f)["totals"]["allocs"]
		except (OSError, ValueError, KeyError):
			return None


def plan(workloads):
	for w in workloads:
		for t in TRACERS:
			if t.endswith("@entry") and w not in ENTRY_ONLY_ON:
				continue
			yield w, t


def measure(workloads, runs, have):
	"""results[(w, t)] = list of ns-per-pair figures; errors[(w, t)] = reason."""
	raw, pairs, errors = {}, {}, {}
	work = tempfile.mkdtemp(prefix="memleakbpf-bench-")
	for r in range(runs):
		say("round %d of %d" % (r + 1, runs))
		for w, t in plan(workloads):
			peer = t if t in ("bpftrace", "heaptrack") else None
			if peer and peer not in have:
				errors[(w, t)] = "%s is not installed" % peer
				continue
			run = Run(t, w, work)
			try:
				raw.setdefault((w, t), []).append(run.execute())
			except (RuntimeError, subprocess.TimeoutExpired, OSError, KeyError) as e:
				# Kept, but a later round may still succeed (a rebuild, a hiccup).
				errors[(w, t)] = str(e)
				continue
			if t == "memleakbpf":
				n = run.allocations()
				if n:
					pairs.setdefault(w, []).append(n)
	shutil.rmtree(work, ignore_errors=True)
	results = {}
	for (w, t), vals in raw.items():
		if not vals:
			continue
		if len(vals) == runs:
			errors.pop((w, t), None)
		if WORKLOADS[w][1] == "stamp":
			n = statistics.median(pairs.get(w) or [0])
			if not n:
				errors[(w, t)] = "no allocation count from memleakbpf"
				continue
			vals = [v / n for v in vals]
		results[(w, t)] = vals
	return results, errors, {w: int(statistics.median(v)) for w, v in pairs.items()}


def table(workloads, results, errors):
	rows = [("workload", "tracer", "ns/pair (median)", "spread (min..max)",
		 "added ns/pair", "x untraced", "x floor", "bpftrace's added / this")]
	for w in workloads:
		base = results.get((w, "untraced"))
		base_m = statistics.median(base) if base else None
		bt = results.get((w, "bpftrace"))
		bt_added = statistics.median(bt) - base_m if bt and base_m is not None else None
		for t in TRACERS:
			if t.endswith("@entry") and w not in ENTRY_ONLY_ON:
				continue
			vals = results.get((w, t))
			if not vals:
				rows.append((w, t, "n/a", errors.get((w, t), "not run")[:60], "", "", "", ""))
				continue
			m = statistics.median(vals)
			floor_t = "floor@entry" if t.endswith("@entry") else "floor"
			fl = results.get((w, floor_t))
			fl_m = statistics.median(fl) if fl else None
			rows.append((w, t, "%.1f" % m, "%.1f..%.1f%s" % (
				     min(vals), max(vals), "" if (w, t) not in errors else " (%d runs)" % len(vals)),
				     "%+.1f" % (m - base_m) if base_m is not None and t != "untraced" else "",
				     "%.1f" % (m / base_m) if base_m else "",
				     "%.2f" % ((m - base_m) / (fl_m - base_m))
				     if fl_m and base_m is not None and fl_m > base_m and t != "untraced" else "",
				     "%.2f" % (bt_added / (m - base_m))
				     if bt_added and base_m is not None and m > base_m and
				     t not in ("untraced", "bpftrace") else ""))
	return rows


def targets(workloads, results):
	"""The issue's two targets for the default exact mode, workload by workload."""
	lines = []
	for w in workloads:
		med = {t: statistics.median(results[(w, t)]) for t in ("untraced", "memleakbpf",
								      "floor", "bpftrace")
		       if results.get((w, t))}
		if len(med) < 4:
			continue
		added = {t: med[t] - med["untraced"] for t in med}
		if added["memleakbpf"] <= 0 or added["floor"] <= 0:
			continue
		x_floor = added["memleakbpf"] / added["floor"]
		x_bt = added["bpftrace"] / added["memleakbpf"]
		lines.append("%s: %.2fx the floor (target at most 1.3: %s); bpftrace adds %.2fx as much "
			     "(target at least 6: %s)" % (w, x_floor, "met" if x_floor <= 1.3 else "not met",
							    x_bt, "met" if x_bt >= 6 else "not met"))
	return lines


def sample_targets(workloads, results):
	"""Issue 26: a pair --sample 512K does not sample adds at most 0.7x what an exact pair adds
	(two traps instead of three, and almost no BPF), workload by workload."""
	lines = []
	for w in workloads:
		med = {t: statistics.median(results[(w, t)]) for t in ("untraced", "memleakbpf",
								      "sample-64K", "sample-512K")
		       if results.get((w, t))}
		if len(med) < 4 or med["memleakbpf"] <= med["untraced"]:
			continue
		exact = med["memleakbpf"] - med["untraced"]
		x = (med["sample-512K"] - med["untraced"]) / exact
		lines.append("%s: --sample 512K adds %.0f ns/pair, %.2fx an exact pair's %.0f (target at "
			     "most 0.7: %s); --sample 64K %.2fx" % (
				     w, med["sample-512K"] - med["untraced"], x, exact,
				     "met" if x <= 0.7 else "not met",
				     (med["sample-64K"] - med["untraced"]) / exact))
	return lines


def allocator_targets(workloads, results):
	"""Each allocator's ns/pair added by memleakbpf against glibc's (the loop), same run."""
	def added(w):
		t, u = results.get((w, "memleakbpf")), results.get((w, "untraced"))
		return statistics.median(t) - statistics.median(u) if t and u else None
	base, lines = added("loop"), []
	for w in workloads:
		a = added(w)
		if w == "loop" or w not in ENTRY_ONLY_ON or a is None or not base:
			continue
		x = a / base
		lines.append("%s: adds %.0f ns/pair, %.2fx glibc's %.0f (target at most %.1f: %s)" % (
			w, a, x, base, ALLOCATOR_TARGET, "met" if x <= ALLOCATOR_TARGET else "not met"))
	return lines


def markdown(rows):
	out = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * len(rows[0])]
	for r in rows[1:]:
		out.append("| " + " | ".join(r) + " |")
	return "\n".join(out)


def plain(rows):
	widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
	return "\n".join("  ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip() for r in rows)


def machine():
	cpu = "?"
	try:
		with open("/proc/cpuinfo") as f:
			for line in f:
				if line.startswith("model name"):
					cpu = line.split(":", 1)[1].strip()
					break
	except OSError:
		pass
	debian = open("/etc/debian_version").read().strip() if os.path.exists("/etc/debian_version") else "?"
	return "Linux %s, %d CPUs (%s), Debian %s" % (platform.release(), os.cpu_count() or 0, cpu, debian)


def versions(have):
	v = {}
	for tool, argv in (("bpftrace", ["bpftrace", "--version"]),
			   ("heaptrack", ["heaptrack", "--version"]), ("jq", [JQ, "--version"])):
		if tool in have:
			r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
			v[tool] = r.stdout.decode("utf-8", "replace").strip().splitlines()[-1]
	return v


def write_doc(rows, pairs, runs, have, elapsed, scale_lines, goals):
	"""Replace the results section of docs/PERFORMANCE.md (between the markers)."""
	stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
	vers = versions(have)
	section = [BEGIN, "",
		   "Last `make bench`: %s, on %s; %d interleaved rounds in %.0f s." % (
			   stamp, machine(), runs, elapsed),
		   "Peers: %s." % (", ".join("%s" % v for v in vers.values()) or "none installed"),
		   "Allocations per run counted by memleakbpf (Python, jq, openfst): %s." % (
			   ", ".join("%s %d" % (w, n) for w, n in sorted(pairs.items())
				     if WORKLOADS[w][1] == "stamp") or "n/a"),
		   "", markdown(rows), "",
		   "`x floor` is the cost memleakbpf (or a peer) adds to the program divided by "
		   "the cost the bare probes add (the floor of the same placement); the last "
		   "column, the cost bpftrace adds divided by this tracer's.", ""]
	if goals:
		section += ["Targets of the default exact mode (issue 6), from this run:", ""] + \
			   ["- " + l for l in goals] + [""]
	if scale_lines:
		section += ["Memory and scale:", ""] + ["- " + l for l in scale_lines] + [""]
	section.append(END)
	text = open(DOC).read() if os.path.exists(DOC) else ""
	if BEGIN in text and END in text:
		head, rest = text.split(BEGIN, 1)
		tail = rest.split(END, 1)[1]
		text = head + "\n".join(section) + tail
	else:
		text = text + "\n" + "\n".join(section) + "\n"
	with open(DOC, "w") as f:
		f.write(text)


# ---------------------------------------------------------------- memory and scale

SCALE_PAIRS = 50000000		# steady run (the 50 M allocations): pairs over a working set of SCALE_LIVE
SCALE_LIVE = 10000
REPORT_BLOCKS = 1000000		# report run: live blocks ...
REPORT_DEPTH = 21		# ... from 22^3 = 10,648 stacks
REPORT_RUNS = 5			# the report time is the median of this many runs


ALLOC_BUCKET_SLOTS = 7		# bpf/memleak.h: struct alloc_bucket
ALLOC_BUCKET_BYTES = 232


def tracer_maps(pid):
	"""[(map_type, max_entries, memlock)] of the BPF maps pid holds, from fdinfo."""
	maps = []
	fddir = "/proc/%d/fdinfo" % pid
	for fd in os.listdir(fddir):
		try:
			with open(os.path.join(fddir, fd)) as f:
				kv = dict(l.split(":", 1) for l in f.read().splitlines() if ":" in l)
		except OSError:
			continue
		if "map_type" in kv and "memlock" in kv:
			maps.append((int(kv["map_type"]), int(kv["max_entries"]), int(kv["memlock"]),
				     int(kv.get("key_size", 0)), int(kv.get("value_size", 0))))
	return maps


def rss_kib(pid):
	"""The tracer's own memory: RssAnon. Its VmRSS also counts the pages of the
	BPF tables it maps (kernel memory, counted below as the maps') and of the
	libraries and debug files it reads."""
	with open("/proc/%d/status" % pid) as f:
		for line in f:
			if line.startswith("RssAnon:"):
				return int(line.split()[1])
	return 0


def steady(work):
	"""memleakbpf on SCALE_PAIRS pairs with SCALE_LIVE live, a report every second:
	its RSS and its maps' kernel memory, sampled through the run."""
	argv = [TRACER, "-c", "%s ws %d %d" % (WL, SCALE_PAIRS, SCALE_LIVE), "1"]
	env = dict(os.environ, BENCH_OUT=os.path.join(work, "steady.result"))
	p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
			     stderr=subprocess.DEVNULL)
	rss, kernel, allocs = [], [], None
	while p.poll() is None:
		time.sleep(0.25)
		try:
			maps = tracer_maps(p.pid)
			r = rss_kib(p.pid)
		except OSError:
			break
		if maps and r:
			rss.append(r)
			kernel.append(sum(m[2] for m in maps))
			allocs = allocs or next((m for m in maps if m[0] == 2 and m[4] == ALLOC_BUCKET_BYTES),
						None)
	p.wait()
	return rss, kernel, allocs


def heaptrack_size(work):
	"""Size of heaptrack's trace file on the same steady run."""
	out = os.path.join(work, "steady.heaptrack")
	subprocess.run(["heaptrack", "-o", out, WL, "ws", str(SCALE_PAIRS), str(SCALE_LIVE)],
		       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
		       env=dict(os.environ, BENCH_OUT=os.path.join(work, "ht.result")))
	files = [f for f in os.listdir(work) if f.startswith("steady.heaptrack")]
	return sum(os.path.getsize(os.path.join(work, f)) for f in files) if files else None


def report_time(work):
	"""Seconds from the exit of a target holding REPORT_BLOCKS blocks from 10,648
	stacks to the end of memleakbpf's final report (snapshot, symbols, text)."""
	result = os.path.join(work, "live.result")
	argv = [TRACER, "-c",
		"%s live %d %d" % (WL, REPORT_BLOCKS, REPORT_DEPTH), "3600"]
	p = subprocess.Popen(argv, env=dict(os.environ, BENCH_OUT=result), stdin=subprocess.DEVNULL,
			     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
	out = p.communicate(timeout=RUN_TIMEOUT)[0].decode("utf-8", "replace")
	done = time.monotonic()
	with open(result) as f:
		exit_s = int(f.read().split("=", 1)[1]) / 1e9
	head = next((l for l in out.splitlines() if l.startswith("Outstanding:")), "?")
	return done - exit_s, head


def scale(have):
	work = tempfile.mkdtemp(prefix="memleakbpf-scale-")
	lines = []
	try:
		rss, kernel, allocs = steady(work)
		if rss:
			half, k_half = rss[len(rss) // 2:], kernel[len(kernel) // 2:]
			lines.append("steady run (%d pairs, %d live, a report every second, %d samples): "
				     "memleakbpf's own memory (RssAnon) %d KiB at the start, %d..%d KiB over the second half; "
				     "its BPF maps %.1f..%.1f MiB (memlock) throughout" % (
					     SCALE_PAIRS, SCALE_LIVE, len(rss), rss[0], min(half), max(half),
					     min(kernel) / 2**20, max(k_half) / 2**20))
		if allocs:
			slots = allocs[1] * ALLOC_BUCKET_SLOTS
			lines.append("live-block table: %d slots in %d buckets, %.1f MiB (memlock), fixed "
				     "when the tracer starts: %.0f bytes a slot, %.0f bytes per block of "
				     "--max-allocs room (the default, 1,048,576 blocks); with %d live, "
				     "%.0f bytes of it per live block" % (
					     slots, allocs[1], allocs[2] / 2**20, allocs[2] / slots,
					     allocs[2] / (1 << 20), SCALE_LIVE, allocs[2] / SCALE_LIVE))
		if "heaptrack" in have:
			size = heaptrack_size(work)
			if size:
				lines.append("heaptrack's trace of the same run: %.1f MiB (grows with the run)"
					     % (size / 2**20))
		runs = [report_time(work) for _ in range(REPORT_RUNS)]
		ms = sorted(secs * 1000 for secs, _ in runs)
		median = ms[len(ms) // 2]
		lines.append("final report over %d live blocks from 10,648 stacks: %.0f ms after the "
			     "target's exit, median of %d runs (%.0f..%.0f; target under 200 ms: %s) (%s)" % (
				     REPORT_BLOCKS, median, len(ms), ms[0], ms[-1],
				     "met" if median < 200 else "not met", runs[0][1]))
	finally:
		shutil.rmtree(work, ignore_errors=True)
	return lines


# ================================================================ CFI unwinding (issue 4)
#
# --unwind=fp against --unwind=dwarf on the same workloads, interleaved with
# untraced runs round by round: ns added per malloc/free pair by each, and
# their ratio (the target: dwarf at most 2x fp). Then the kernel memory of
# the CFI tables for a C++ victim (libc, libstdc++, the victim and what
# they load), from memleakbpf -v. Written between the unwind markers of
# docs/PERFORMANCE.md.

UNWIND_BEGIN, UNWIND_END = "<!-- unwind:begin -->", "<!-- unwind:end -->"
DEEP = os.path.join(OUT, "deep")
UNWIND_WORKLOADS = {
	"loop": WORKLOADS["loop"][0],
	"working-set": WORKLOADS["working-set"][0],
	# 30 calls deeper (tests/bench/deep.c): the cost per frame.
	"deep-30": [DEEP, "100000", "30"],
	# The same without frame pointers: fp's walk stops early there (wrong stacks).
	"deep-30 nofp": [DEEP + "-nofp", "100000", "30"],
}
UNWIND_MODES = ["untraced", "fp", "dwarf"]
UNWIND_VICTIM = os.path.join(ROOT, ".output", "victims", "v_wrappers")


def unwind_run(workload, mode, work):
	"""ns per pair of one run."""
	argv = list(UNWIND_WORKLOADS[workload])
	result = os.path.join(work, "%s.%s.result" % (workload.replace(" ", "-"), mode))
	if os.path.exists(result):
		os.unlink(result)
	if mode != "untraced":
		argv = [TRACER, "--unwind=" + mode, "-c", " ".join(argv), "3600"]
	env = dict(os.environ, BENCH_OUT=result)
	for k in ("LD_PRELOAD", "MEMLEAKBPF_BENCH_FLOOR", "MEMLEAKBPF_PROBE_AT_ENTRY"):
		env.pop(k, None)
	subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
		       stderr=subprocess.DEVNULL, timeout=RUN_TIMEOUT)
	with open(result) as f:
		return float(dict(x.split("=", 1) for x in f.read().split())["ns_per_pair"])


def unwind_measure(runs):
	"""{(workload, mode): [ns per pair, ...]}"""
	vals = {}
	work = tempfile.mkdtemp(prefix="memleakbpf-unwind-")
	try:
		for r in range(runs):
			say("unwind: round %d of %d" % (r + 1, runs))
			for w in UNWIND_WORKLOADS:
				for m in UNWIND_MODES:
					vals.setdefault((w, m), []).append(unwind_run(w, m, work))
	finally:
		shutil.rmtree(work, ignore_errors=True)
	return vals


def unwind_table(vals):
	rows = [("workload", "untraced ns/pair", "fp ns/pair", "dwarf ns/pair", "added by fp",
		 "added by dwarf", "dwarf / fp (added)")]
	for w in UNWIND_WORKLOADS:
		med = {m: statistics.median(vals[(w, m)]) for m in UNWIND_MODES}
		fp, dw = med["fp"] - med["untraced"], med["dwarf"] - med["untraced"]
		rows.append((w, "%.1f" % med["untraced"], "%.1f (%.0f..%.0f)" % (
			med["fp"], min(vals[(w, "fp")]), max(vals[(w, "fp")])), "%.1f (%.0f..%.0f)" % (
			med["dwarf"], min(vals[(w, "dwarf")]), max(vals[(w, "dwarf")])),
			"%+.1f" % fp, "%+.1f" % dw, "%.2f" % (dw / fp) if fp > 0 else ""))
	return rows


# "memleakbpf: unwind table libc.so.6: 28274 rows from .eh_frame (226192 bytes); all tables: ..."
UNWIND_LINE = re.compile(r"^memleakbpf: unwind table (\S+): (\d+) rows from (.*) \((\d+) bytes\); "
			 r"all tables: (\d+) rows, (\d+) KiB of kernel memory$")


def unwind_memory():
	"""Per-file rows and the tables' kernel memory, for the C++ victim."""
	p = subprocess.run([TRACER, "-v", "-c", UNWIND_VICTIM], stdin=subprocess.DEVNULL,
			   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
	lines, last = [], None
	for line in p.stderr.decode("utf-8", "replace").splitlines():
		m = UNWIND_LINE.match(line)
		if m:
			lines.append("%s: %s rows (%.1f KiB) from %s" % (
				m.group(1), m.group(2), int(m.group(4)) / 1024, m.group(3)))
			last = m
	if last:
		lines.append("all of them: %s rows, %s KiB of kernel memory (memlock of the "
			     "%d KiB row chunks they fill)" % (last.group(5), last.group(6),
							     MEMLEAK_CHUNK_KIB))
	return lines


MEMLEAK_CHUNK_KIB = 128		# MEMLEAK_CFI_CHUNK_ROWS * 8 bytes (bpf/memleak.h)


def unwind_doc(rows, mem, runs):
	stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
	section = [UNWIND_BEGIN, "",
		   "Last `make bench`: %s, on %s; %d interleaved rounds, medians (min..max)." % (
			   stamp, machine(), runs),
		   "", markdown(rows), "",
		   "Tables for `%s` (libc, libstdc++, the victim, and what they load):" %
		   os.path.relpath(UNWIND_VICTIM, ROOT), ""] + ["- " + l for l in mem] + ["", UNWIND_END]
	text = open(DOC).read() if os.path.exists(DOC) else ""
	if UNWIND_BEGIN in text and UNWIND_END in text:
		head, rest = text.split(UNWIND_BEGIN, 1)
		text = head + "\n".join(section) + rest.split(UNWIND_END, 1)[1]
	else:
		text += "\n" + "\n".join(section) + "\n"
	with open(DOC, "w") as f:
		f.write(text)


def unwind_bench(runs, doc):
	"""The whole CFI part: timings side by side, table memory, the doc."""
	rows = unwind_table(unwind_measure(runs))
	print(plain(rows))
	mem = unwind_memory()
	for line in mem:
		print("unwind: " + line)
	if doc and runs >= 5:
		unwind_doc(rows, mem, runs)

# ================================================================ end of CFI unwinding (issue 4)


# ================================================================ Python's allocator (issue 9)
#
# What --python-malloc costs, to choose its default: Debian's python3 on
# two workloads, untraced with either allocator, and under memleakbpf -c
# with pymalloc (the default) and with malloc (every object a traced
# block), each also without Python frames (MEMLEAKBPF_BENCH_NO_PYTHON=1,
# for benchmarking only) to show what walking them costs. Timed by stamp.so
# from the interpreter's start to its exit; rounds interleaved. Written
# between the python markers of docs/PERFORMANCE.md.

PY_BEGIN, PY_END = "<!-- python:begin -->", "<!-- python:end -->"
PY_WORKLOADS = {
	# dicts, lists, strings: nearly every block under 512 bytes
	"objects": [PYTHON, os.path.join(ROOT, "tests", "bench", "alloc.py"), "400"],
	# a working set of 1 to 65 KiB buffers: most bytes in large blocks
	"buffers": [PYTHON, os.path.join(ROOT, "tests", "bench", "pybuffers.py"), "20000"],
}
# (name, PYTHONMALLOC untraced / --python-malloc traced, traced, Python frames, how: py_run).
# The floor and heaptrack see the allocations "malloc" does: their cost per
# allocation is divided by that row's count (issue 27: no slower than heaptrack).
PY_MALLOC = "malloc"
PY_MODES = [
	("untraced", "pymalloc", False, False, None),
	("untraced, malloc", "malloc", False, False, None),
	("pymalloc (default)", "pymalloc", True, True, None),
	("pymalloc, no Python frames", "pymalloc", True, False, None),
	(PY_MALLOC, "malloc", True, True, None),
	("malloc, no Python frames", "malloc", True, False, None),
	("malloc, floor", "malloc", True, True, "floor"),
	("heaptrack, PYTHONMALLOC=malloc", "malloc", True, True, "heaptrack"),
]


def py_run(workload, mode, work, python=PYTHON, objects=False, how=None):
	"""(ms from the interpreter's start to its exit, allocations memleakbpf counted).
	how (python-objects): "sample-64K" or "sample-512K" (--sample, the count an estimate),
	"floor" (BPF that returns at once: the probes alone), "heaptrack" (every object a
	malloc, PYTHONMALLOC=malloc, under heaptrack)."""
	name, alloc, traced, frames = mode
	out = os.path.join(work, "%s.%s" % (workload, name.replace(" ", "-").replace(",", "")))
	env = dict(os.environ, BENCH_STAMP=out + ".result",
		   BENCH_STAMP_EXE=os.path.realpath(python), PYTHONHASHSEED="0")
	for k in ("LD_PRELOAD", "PYTHONMALLOC", "MEMLEAKBPF_BENCH_FLOOR",
		  "MEMLEAKBPF_PROBE_AT_ENTRY", "MEMLEAKBPF_BENCH_NO_PYTHON"):
		env.pop(k, None)
	argv = ["/usr/bin/env", "LD_PRELOAD=" + STAMP, python] + PY_WORKLOADS[workload][1:]
	if how == "heaptrack":
		# heaptrack puts its own library first, the stamp after it.
		argv = ["heaptrack", "-o", out + ".heaptrack", python] + PY_WORKLOADS[workload][1:]
		env.update(LD_PRELOAD=STAMP, PYTHONMALLOC="malloc")
		traced = False
	elif traced:
		argv = [TRACER, "--json", out + ".json", "--python-malloc", alloc] + (
			["--py-objects"] if objects else []) + (
			["--sample", SAMPLES[how]] if how in SAMPLES else []) + ["-c", " ".join(argv), "3600"]
		if not frames:
			env["MEMLEAKBPF_BENCH_NO_PYTHON"] = "1"
		if how == "floor":
			env["MEMLEAKBPF_BENCH_FLOOR"] = "1"
	elif alloc == "malloc":
		env["PYTHONMALLOC"] = "malloc"
	for f in (out + ".result", out + ".json"):
		if os.path.exists(f):
			os.unlink(f)
	subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
		       stderr=subprocess.DEVNULL, timeout=RUN_TIMEOUT)
	with open(out + ".result") as f:
		ms = float(dict(x.split("=", 1) for x in f.read().split())["ns"]) / 1e6
	allocs = None
	if traced and how not in SAMPLES and how != "floor":
		with open(out + ".json") as f:
			allocs = json.load(f)["totals"]["allocs"]
	return ms, allocs


def py_measure(runs):
	"""{(workload, mode name): ([ms, ...], [allocations, ...])}"""
	vals = {}
	work = tempfile.mkdtemp(prefix="memleakbpf-python-")
	try:
		for r in range(runs):
			say("python: round %d of %d" % (r + 1, runs))
			for w in PY_WORKLOADS:
				for m in py_modes():
					ms, n = py_run(w, m[:4], work, how=m[4])
					v = vals.setdefault((w, m[0]), ([], []))
					v[0].append(ms)
					if n is not None:
						v[1].append(n)
	finally:
		shutil.rmtree(work, ignore_errors=True)
	return vals


def py_modes():
	"""PY_MODES less heaptrack where it cannot be installed."""
	have = ensure_packages()
	return [m for m in PY_MODES if m[4] != "heaptrack" or "heaptrack" in have]


def py_table(vals):
	rows = [("workload", "Python objects from", "ms (min..max)", "x untraced",
		 "allocations traced", "us added per allocation")]
	for w in PY_WORKLOADS:
		for name, alloc, traced, frames, how in py_modes():
			ms, ns = vals[(w, name)]
			m = statistics.median(ms)
			base = statistics.median(vals[(w, "untraced" if alloc == "pymalloc" else
							  "untraced, malloc")][0])
			n = int(statistics.median(ns)) if ns else None
			seen = vals[(w, PY_MALLOC)][1] if how else []
			per = n or (int(statistics.median(seen)) if seen else None)
			rows.append((w, name, "%.1f (%.1f..%.1f)" % (m, min(ms), max(ms)),
				     "%.1f" % (m / base), "%d" % n if n else "",
				     "%.2f" % ((m - base) * 1000 / per) if per else ""))
	return rows


def py_doc(rows, runs):
	stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
	section = [PY_BEGIN, "",
		   "Last `make bench`: %s, on %s; %d interleaved rounds, medians (min..max); "
		   "`x untraced` against the same allocator untraced." % (stamp, machine(), runs),
		   "", markdown(rows), "", PY_END]
	text = open(DOC).read() if os.path.exists(DOC) else ""
	if PY_BEGIN in text and PY_END in text:
		head, rest = text.split(PY_BEGIN, 1)
		text = head + "\n".join(section) + rest.split(PY_END, 1)[1]
	else:
		text += "\n" + "\n".join(section) + "\n"
	with open(DOC, "w") as f:
		f.write(text)


def python_bench(runs, doc):
	"""Python's allocator under memleakbpf: the table, and the doc."""
	if not os.path.exists(PYTHON):
		say("python: %s is missing, skipped" % PYTHON)
		return
	rows = py_table(py_measure(runs))
	print(plain(rows))
	if doc and runs >= 5:
		py_doc(rows, runs)

# What --py-objects costs (issue 18), on an interpreter it can be exact on:
# pyenv's 3.11 (built without LTO and PGO; Debian's refuses it). Against
# the same interpreter untraced, traced with pymalloc (objects unseen), with
# --py-objects exact, sampled at 64K and 512K (issue 26) and on the floor,
# with malloc (every object a block, at a restart), and heaptrack seeing
# every object as a malloc. "us added per allocation" divides by the
# objects the exact --py-objects run counted. Printed, not written.
PYOBJ_PYTHON = os.path.expanduser("~/.pyenv/versions/3.11.7/bin/python3.11")
PYOBJ_EXACT = "pymalloc, --py-objects"
PYOBJ_MODES = [  # (name, allocator, traced, frames), --py-objects, how (py_run)
	(("untraced", "pymalloc", False, False), False, None),
	(("pymalloc (default)", "pymalloc", True, True), False, None),
	((PYOBJ_EXACT, "pymalloc", True, True), True, None),
	(("--py-objects --sample 64K", "pymalloc", True, True), True, "sample-64K"),
	(("--py-objects --sample 512K", "pymalloc", True, True), True, "sample-512K"),
	(("--py-objects, floor", "pymalloc", True, True), True, "floor"),
	(("malloc", "malloc", True, True), False, None),
	(("heaptrack, PYTHONMALLOC=malloc", "malloc", True, True), False, "heaptrack"),
]


def pyobjects_bench(runs):
	if not os.path.exists(PYOBJ_PYTHON):
		say("python-objects: %s is missing, skipped" % PYOBJ_PYTHON)
		return
	modes = [m for m in PYOBJ_MODES if m[2] != "heaptrack" or "heaptrack" in ensure_packages()]
	vals, work = {}, tempfile.mkdtemp(prefix="memleakbpf-pyobjects-")
	try:
		for r in range(runs):
			say("python-objects: round %d of %d" % (r + 1, runs))
			for w in PY_WORKLOADS:
				for mode, objects, how in modes:
					ms, n = py_run(w, mode, work, PYOBJ_PYTHON, objects, how)
					v = vals.setdefault((w, mode[0]), ([], []))
					v[0].append(ms)
					v[1].extend([n] if n is not None else [])
	finally:
		shutil.rmtree(work, ignore_errors=True)
	rows = [("workload", "%s: objects from" % os.path.basename(PYOBJ_PYTHON), "ms (min..max)",
		 "x untraced", "allocations traced", "us added per allocation")]
	for w in PY_WORKLOADS:
		base = statistics.median(vals[(w, "untraced")][0])
		objs = vals[(w, PYOBJ_EXACT)][1]
		for (name, _, _, _), _, how in modes:
			ms, ns = vals[(w, name)]
			m, n = statistics.median(ms), int(statistics.median(ns)) if ns else None
			per = n or (int(statistics.median(objs)) if how and objs else None)
			rows.append((w, name, "%.1f (%.1f..%.1f)" % (m, min(ms), max(ms)),
				     "%.1f" % (m / base), "%d" % n if n else "",
				     "%.2f" % ((m - base) * 1000 / per) if per else ""))
	print(plain(rows))

# ================================================================ end of Python's allocator (issue 9)


def table_part(workloads, runs, doc, do_scale):
	"""The table of the workloads (if any), and the memory and scale figures after it."""
	have = ensure_packages()
	for w, package in NEEDS.items():
		if package not in have and w in workloads:
			say("%s: %s could not be installed, skipped" % (w, package))
			workloads.remove(w)
	rows, pairs, goals, elapsed = None, {}, [], 0
	if workloads:
		make_data(workloads)
		t0 = time.monotonic()
		results, errors, pairs = measure(workloads, runs, have)
		elapsed = time.monotonic() - t0
		rows = table(workloads, results, errors)
		goals = targets(workloads, results) + allocator_targets(workloads, results) + \
			sample_targets(workloads, results)
		print(plain(rows))
		for line in goals:
			print("target: " + line)
		for (w, t), why in sorted(errors.items()):
			say("%s under %s: %s" % (w, t, why))
	scale_lines = scale(have) if do_scale else []
	for line in scale_lines:
		print("scale: " + line)
	if rows and doc and runs >= 5:
		write_doc(rows, pairs, runs, have, elapsed, scale_lines, goals)
		say("results written to %s" % os.path.relpath(DOC, ROOT))


def main(argv):
	runs, doc, only, do_scale = 5, True, None, True
	do_unwind = True
	args = list(argv)
	while args:
		a = args.pop(0)
		if a == "--runs":
			runs = int(args.pop(0))
		elif a == "--quick":
			runs = 1
		elif a == "--no-doc":
			doc = False
		elif a == "--only":
			only = args.pop(0).split(",")
		elif a == "--no-scale":
			do_scale = False
		elif a == "--no-unwind":
			do_unwind = False
		else:
			print(__doc__.strip())
			return 0 if a in ("-h", "--help") else 2
	unknown = [n for n in only or [] if n not in WORKLOADS and n not in PARTS]
	if unknown:
		say("--only: no workload or part named %s" % ", ".join(unknown))
		return 2
	chosen = lambda part: not only or part in only
	if os.geteuid() != 0:
		say("needs root (the tracers load BPF programs)")
		return 1
	for f in (TRACER, WL, WL_CXX, STAMP):
		if not os.path.exists(f):
			say("%s is missing: run it through `make bench`" % f)
			return 1
	workloads = [w for w in WORKLOADS if chosen(w)]
	if workloads or (do_scale and chosen("scale")):
		table_part(workloads, runs, doc, do_scale and chosen("scale"))
	if do_unwind and chosen("unwind"):
		unwind_bench(runs, doc)
	if chosen("python"):
		python_bench(runs, doc)
	if chosen("python-objects"):
		pyobjects_bench(runs)
	if chosen("torch"):
		bench_torch.bench(min(runs, bench_torch.ROUNDS), doc=doc)
	tracer_parts = tuple(p for p in ("startup", "reports") if chosen(p))
	if tracer_parts:
		bench_tracer.bench(max(runs, bench_tracer.ROUNDS), tracer_parts, doc=doc)
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
