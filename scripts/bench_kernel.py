#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""make bench, -k: what tracing the kernel's allocations costs a workload
that makes the kernel allocate (tests/bench/kwl.c: a pipe, a pair of Unix
sockets and a tmpfs file made and closed per round).

Usage: scripts/bench_kernel.py [--runs N (3)] [--rounds N (3000)] [--no-doc]

Every tracer runs in turn, round after round (interleaved, so that the
machine's drift spreads over all alike); kwl times its own loop, so no
tracer's start-up or report is in a figure. The figure is the workload's
CPU time per round (user + system: the BPF programs run in its system
time), its median over the runs and the spread; wall time beside it.

Tracers:
  untraced     the workload alone
  floor        memleakbpf -k with programs that return at once
               (MEMLEAKBPF_BENCH_FLOOR=1): the tracepoints' hits alone
  no-stack     memleakbpf -k taking no kernel stack (MEMLEAKBPF_BENCH_NO_STACK=1):
               what the kernel's unwinder costs
  memleakbpf   memleakbpf -k: every block, its kernel stack
  bcc          bcc's memleak (memleak-bpfcc, Debian's bpfcc-tools), kernel
               mode; run as it is, and shown with its error when it cannot
  bpftrace     a bpftrace script in bcc's style (tracepoint:kmem:kmalloc)

Under memleakbpf the kernel's BPF statistics (kernel.bpf_stats_enabled, on
for that run only) give the programs' run time per hit, over every
allocation and free the kernel made meanwhile; and its final report (--json
--all-stacks) the workload's own: the blocks allocated under kwl's system
calls, and those of them freed, per round. Rewrites the "-k" section of
docs/PERFORMANCE.md.
"""

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.realpath(os.path.join(os.path.dirname(__file__), ".."))
TRACER = os.path.join(ROOT, "memleakbpf")
KWL = os.path.join(ROOT, ".output", "bench", "kwl")
DOC = os.path.join(ROOT, "docs", "PERFORMANCE.md")
STATS = "/proc/sys/kernel/bpf_stats_enabled"
BCC = "/usr/sbin/memleak-bpfcc"
BPFTRACE = "/usr/bin/bpftrace"
BEGIN, END = "<!-- bench-kernel:begin -->", "<!-- bench-kernel:end -->"
# The programs of bpf/kmem.bpf.c, by name (bpftool shows 15 characters).
ALLOCS = ("kmalloc_enter", "kmem_cache_allo", "mm_page_alloc_e", "percpu_alloc_en")
FREES = ("kfree_enter", "kmem_cache_free", "mm_page_free_en", "mm_page_free_ba",
	 "percpu_free_ent", "kmem_cache_free_bulk_enter"[:15], "kvfree_call_rcu")
BT_SCRIPT = ("tracepoint:kmem:kmalloc { @size[args->ptr] = args->bytes_alloc; "
	     "@stack[args->ptr] = kstack; }\n"
	     "tracepoint:kmem:kfree { delete(@size[args->ptr]); delete(@stack[args->ptr]); }\n")
READY_S = 60
REPORT = "/tmp/bench-kernel.json"
# kwl's system calls: a stack under one of them is the workload's.
KWL_CALLS = ("__x64_sys_pipe2", "__x64_sys_socketpair", "__x64_sys_openat", "__x64_sys_write",
	     "__x64_sys_close", "__x64_sys_unlinkat")


def kwl(rounds):
	out = subprocess.run([KWL, str(rounds)], stdout=subprocess.PIPE, check=True, text=True).stdout
	m = re.search(r"ns_per_round=([\d.]+) cpu_ns_per_round=([\d.]+)", out)
	return float(m.group(2)), float(m.group(1))


def prog_stats():
	"""{name: (run_cnt, run_time_ns)} of bpf/kmem.bpf.c's programs."""
	out = subprocess.run(["bpftool", "prog", "show", "-j"], stdout=subprocess.PIPE, text=True).stdout
	stats = {}
	for p in json.loads(out or "[]"):
		name = p.get("name", "")
		if name in ALLOCS + FREES:
			cnt, ns = stats.get(name, (0, 0))
			stats[name] = (cnt + p.get("run_cnt", 0), ns + p.get("run_time_ns", 0))
	return stats


def delta(a, b):
	return {k: (b[k][0] - a.get(k, (0, 0))[0], b[k][1] - a.get(k, (0, 0))[1]) for k in b}


class Tracer:
	"""A tracer started before the workload, stopped after (SIGINT), or the reason it cannot run."""

	def __init__(self, name, argv, ready, env=None):
		self.name, self.argv, self.ready, self.env = name, argv, ready, env
		self.p = None
		self.why = None

	def start(self):
		if not self.argv:
			return True
		self.err = open("/tmp/bench-kernel-%s.err" % self.name, "w+")
		self.p = subprocess.Popen(self.argv, stdout=subprocess.DEVNULL, stderr=self.err,
					  stdin=subprocess.DEVNULL, env=self.env, start_new_session=True)
		deadline = time.monotonic() + READY_S
		while time.monotonic() < deadline:
			self.err.seek(0)
			text = self.err.read()
			if self.ready(text):
				return True
			if self.p.poll() is not None:
				lines = [l.strip() for l in text.splitlines() if l.strip()]
				said = [l for l in lines if re.search(r"ERROR|Unable|cannot|[Nn]o such", l)]
				said = said or lines[-1:]
				self.why = "exits %d: %s" % (self.p.returncode, said[-1] if said else "")
				return False
			time.sleep(0.1)
		self.stop()
		self.why = "not tracing after %d s" % READY_S
		return False

	def stop(self):
		if self.p and self.p.poll() is None:
			self.p.send_signal(2)
			try:
				self.p.wait(120)
			except subprocess.TimeoutExpired:
				self.p.kill()
				self.p.wait()
		self.p = None


def tracers():
	env = dict(os.environ, MEMLEAKBPF_BENCH_FLOOR="1")
	ours = lambda text: "memleakbpf: tracing" in text
	bt = "/tmp/bench-kernel.bt"
	with open(bt, "w") as f:
		f.write(BT_SCRIPT)
	return [
		Tracer("untraced", None, None),
		Tracer("floor", [TRACER, "-k", "600"], ours, env),
		Tracer("no-stack", [TRACER, "-k", "600"], ours,
		       dict(os.environ, MEMLEAKBPF_BENCH_NO_STACK="1")),
		Tracer("memleakbpf", [TRACER, "-k", "--json", REPORT, "--all-stacks", "600"], ours),
		Tracer("bcc", [BCC, "600"], lambda text: "Attaching to kernel allocators" in text),
		Tracer("bpftrace", [BPFTRACE, bt], lambda text: "Attaching" in text),
	]


def workload_hits(rounds):
	"""From the final report: kwl's allocations and frees of them, per round."""
	with open(REPORT) as f:
		rep = json.load(f)
	allocs = frees = 0
	for st in rep["stacks"]:
		if any(fr.get("function") in KWL_CALLS for fr in st["frames"]):
			allocs += st["total_allocs"]
			frees += st["total_allocs"] - st["allocs"]
	return allocs / rounds, frees / rounds


def measured_run(rounds):
	"""kwl under memleakbpf with the BPF statistics on: its figures and the programs' deltas."""
	with open(STATS, "w") as f:
		f.write("1")
	try:
		a = prog_stats()
		t0 = time.monotonic()
		cpu, wall = kwl(rounds)
		took = time.monotonic() - t0
		d = delta(a, prog_stats())
	finally:
		with open(STATS, "w") as f:
			f.write("0")
	return cpu, wall, d


def fmt_us(ns):
	return "%.1f" % (ns / 1000)


def run(runs, rounds):
	ts = tracers()
	cpu = {t.name: [] for t in ts}
	wall = {t.name: [] for t in ts}
	hits, nostack = [], []
	for r in range(runs):
		for t in ts:
			if t.why:
				continue
			if not t.start():
				print("  %s: cannot run: %s" % (t.name, t.why), flush=True)
				continue
			try:
				if t.name in ("memleakbpf", "no-stack"):
					c, w, d = measured_run(rounds)
				else:
					c, w = kwl(rounds)
			finally:
				t.stop()
			if t.name == "memleakbpf":
				hits.append((d, workload_hits(rounds)))
			elif t.name == "no-stack":
				nostack.append(d)
			cpu[t.name].append(c)
			wall[t.name].append(w)
			print("  run %d %-10s cpu %s us/round, wall %s us/round" % (
				r + 1, t.name, fmt_us(c), fmt_us(w)), flush=True)
	return ts, cpu, wall, hits, nostack


def hit_figures(hits):
	"""kwl's allocations and frees per round, BPF ns per allocation and per free: medians."""
	allocs, frees, ns_alloc, ns_free = [], [], [], []
	for d, (a, f) in hits:
		n_a = sum(v[0] for k, v in d.items() if k in ALLOCS)
		n_f = sum(v[0] for k, v in d.items() if k in FREES)
		ns_alloc.append(sum(v[1] for k, v in d.items() if k in ALLOCS) / n_a if n_a else 0)
		ns_free.append(sum(v[1] for k, v in d.items() if k in FREES) / n_f if n_f else 0)
		allocs.append(a)
		frees.append(f)
	med = statistics.median
	return med(allocs), med(frees), med(ns_alloc), med(ns_free)


def table(ts, cpu, wall, hits, nostack, rounds):
	base = statistics.median(cpu["untraced"]) if cpu["untraced"] else 0
	lines = ["| tracer | CPU us/round (median, min..max) | wall us/round | x untraced | added us/round |",
		 "| --- | --- | --- | --- | --- |"]
	for t in ts:
		if t.why or not cpu[t.name]:
			lines.append("| %s | cannot run here: %s | | | |" % (t.name, t.why or "no run"))
			continue
		c = statistics.median(cpu[t.name])
		lines.append("| %s | %s (%s..%s) | %s | %.2f | %s |" % (
			t.name, fmt_us(c), fmt_us(min(cpu[t.name])), fmt_us(max(cpu[t.name])),
			fmt_us(statistics.median(wall[t.name])), c / base if base else 0,
			fmt_us(c - base)))
	text = "\n".join(lines) + "\n"
	if hits and cpu["memleakbpf"] and base:
		allocs, _, ns_a, ns_f = hit_figures(hits)
		floor = statistics.median(cpu["floor"]) - base if cpu["floor"] else 0
		ns_a0 = hit_figures([(d, (0, 0)) for d in nostack])[2] if nostack else 0
		text += ("\nThe kernel's BPF statistics (over every allocation and free the kernel made "
			 "meanwhile, the machine's other work too) give %.0f ns of BPF time per "
			 "allocation (its kernel stack, its block and its site), %.0f ns without the "
			 "stack (no-stack): the kernel's unwinder is the rest; and %.0f ns per free. "
			 "The tracepoints alone (floor) add %.1f us per round. The final report counts "
			 "%.1f allocations per round under kwl's system calls: not all of kwl's (what "
			 "runs at system call exit, in interrupts and in RCU callbacks is under none), "
			 "and not only kwl's (other processes make the same calls).\n" % (
				 ns_a, ns_a0, ns_f, floor / 1000, allocs))
	return text


def write_doc(text, runs, rounds):
	with open(DOC) as f:
		doc = f.read()
	load = os.getloadavg()[0]
	section = "%s\n%d runs of `kwl %d` per tracer, interleaved; %s, Linux %s, %d CPUs, load %.1f at the start.\n\n%s%s" % (
		BEGIN, runs, rounds, time.strftime("%Y-%m-%d"), platform.release(), os.cpu_count(), load,
		text, END)
	if BEGIN in doc and END in doc:
		doc = doc[:doc.index(BEGIN)] + section + doc[doc.index(END) + len(END):]
	else:
		doc += "\n## The kernel's allocations (-k)\n\n" + section + "\n"
	with open(DOC, "w") as f:
		f.write(doc)


def main(argv):
	ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
	ap.add_argument("--runs", type=int, default=3)
	ap.add_argument("--rounds", type=int, default=3000)
	ap.add_argument("--no-doc", dest="doc", action="store_false")
	a = ap.parse_args(argv)
	runs, rounds, doc = a.runs, a.rounds, a.doc
	if os.geteuid() != 0:
		print("bench_kernel: needs root")
		return 0
	print("bench: -k on kwl (%d rounds), %d runs; load %.1f" % (rounds, runs, os.getloadavg()[0]))
	ts, cpu, wall, hits, nostack = run(runs, rounds)
	text = table(ts, cpu, wall, hits, nostack, rounds)
	print(text)
	if doc:
		write_doc(text, runs, rounds)
	return 0


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
