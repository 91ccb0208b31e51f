# SPDX-License-Identifier: GPL-2.0
"""The kernel's own allocations (-k, and no -p or -c): the pipes a victim
keeps open, found at their allocation path, as many as it made.

v_pipes N makes N pipes with pipe2() and keeps them open until told to exit.
The kernel allocates, for each, its pipe_inode_info and its array of buffers
with kmalloc in alloc_pipe_info (fs/pipe.c), under create_pipe_files and
do_pipe2: 2 N blocks whose site is alloc_pipe_info, the innermost frame
outside the allocators. The final report is made while the victim still
holds them. Other processes on the machine may hold a few pipes they made
meanwhile: the count is checked against 2 N from below exactly, from above
with a small slack, and across two N, by its growth.
"""

import signal
import subprocess
import time

import lib
from cases_limits import BIG_ALLOCS, mem_available, refusal
from lib import (CaseFailed, ERROR, Skip, TRACE, TRACER, LineReader, error_case, load_report,
		 victim, wait_exit, wait_for)

PIPE_SITE = "alloc_pipe_info"
PIPE_PATH = ("create_pipe_files", "do_pipe2")
# Another process's pipes made while we trace and still open at the report.
SLACK = 48


def slack(n):
	return SLACK + n // 20


def pipe_blocks(rep):
	"""Of the kmalloc stacks of the site alloc_pipe_info under do_pipe2: their
	blocks and bytes, and the problems of their site and frames."""
	allocs = nbytes = 0
	errs = []
	sites = [i for i, s in enumerate(rep["sites"]) if s["frame"] and
		 s["frame"]["function"] == PIPE_SITE]
	if len(sites) != 1:
		return 0, 0, ["%d sites at %s, expected 1" % (len(sites), PIPE_SITE)]
	site = rep["sites"][sites[0]]
	if site["frame"]["language"] != "kernel" or site["frame"]["module"] != "[kernel.kallsyms]":
		errs.append("site frame %r: not a kernel frame of [kernel.kallsyms]" % site["frame"])
	for st in (rep["stacks"][i] for i in site["stacks"]):
		fns = [f["function"] for f in st["frames"]]
		if st["api"] != "kmalloc" or not all(p in fns for p in PIPE_PATH):
			continue
		allocs += st["allocs"]
		nbytes += st["bytes"]
		if not fns[0].startswith(("__kmalloc", "kmalloc")) or fns[1] != PIPE_SITE:
			errs.append("a pipe's stack begins %s, not kmalloc's, then %s" % (
				" <- ".join(fns[:2]), PIPE_SITE))
	return allocs, nbytes, errs


def trace_pipes(work, n, args, tag, rate=0, interval="60"):
	"""memleakbpf ARGS --json while v_pipes N [RATE] holds its pipes: its exit status and report."""
	js = work.path("%s.json" % tag)
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	t = work.start([TRACER, "--all-stacks", "--json", js] + args + [interval],
		       stdin=subprocess.DEVNULL, tag=tag)
	wait_for(lambda: lib.tracing_line_count(work.read(tag + ".stderr")), deadline,
		 repr(lib.TRACING_LINE), alive=t)
	v = work.start([victim("v_pipes"), str(n)] + ([str(rate)] if rate else []),
		       stdin=subprocess.PIPE, stdout=subprocess.PIPE, tag=tag + "-victim")
	LineReader(v.stdout).expect("PIPES n=%d " % n, deadline)
	t.send_signal(signal.SIGINT)	# the final report, the pipes still open
	rc = wait_exit(t, deadline, "memleakbpf " + " ".join(args))
	v.stdin.write(b"\n")
	v.stdin.close()
	if wait_exit(v, deadline, "v_pipes") != 0:
		raise CaseFailed("v_pipes %d exited %s" % (n, v.returncode))
	errs = [] if rc == 0 else ["memleakbpf %s exited %s" % (" ".join(args), rc)]
	lines = lib.tracing_line_count(work.read(tag + ".stderr"))
	if lines != 1:
		errs.append("%d tracing lines, expected 1" % lines)
	rep = load_report(js)
	if not rep["target"].get("kernel"):
		errs.append("target %r: not the kernel" % rep["target"])
	return rep, errs


def table_drops(rep):
	"""A full table would miss pipes too: then the count proves nothing."""
	d = rep["totals"]["dropped"]
	return ["%d allocations not tracked (%s)" % (d[k], k) for k in ("allocs_map_full", "sites_map_full")
		if d[k]]


def case_pipes(work):
	"""Two runs, 200 and 1,000 pipes: 2 N blocks at alloc_pipe_info each, growing by 2 per pipe.
	Blocks under a page only (-Z 4095): a busy machine's page cache and other tracers' BPF
	maps, pages by the hundred thousand, would fill the default table within seconds."""
	found, errs = {}, []
	for n in (200, 1000):
		rep, e = trace_pipes(work, n, ["-k", "-Z", "4095"], "k%d" % n)
		e += table_drops(rep)
		allocs, _, e2 = pipe_blocks(rep)
		errs += ["N=%d: %s" % (n, x) for x in e + e2]
		if not 2 * n <= allocs <= 2 * n + slack(n):
			errs.append("N=%d: %d blocks at %s under do_pipe2, expected %d (to %d)" % (
				n, allocs, PIPE_SITE, 2 * n, 2 * n + slack(n)))
		found[n] = allocs
	grew = found[1000] - found[200]
	if abs(grew - 2 * 800) > slack(200) + slack(1000):
		errs.append("800 more pipes: %d more blocks, expected 1,600" % grew)
	return errs


def case_pipes_max_size(work):
	"""-Z: only the pipe_inode_info (a few hundred bytes) of each pipe, not its 1 KiB of buffers.
	With -v: what the tracer's memory is for, after the report (it once crashed there: -k has
	no user-space tables)."""
	n = 500
	rep, errs = trace_pipes(work, n, ["-k", "-v", "-Z", "512"], "z")
	if "memleakbpf: our memory: RSS " not in work.read("z.stderr"):
		errs.append("-v: no line of what our memory is for")
	errs += table_drops(rep)
	allocs, nbytes, e = pipe_blocks(rep)
	errs += e
	if not n <= allocs <= n + slack(n):
		errs.append("-Z 512: %d blocks at %s, expected %d (to %d)" % (
			allocs, PIPE_SITE, n, n + slack(n)))
	big = [s for s in rep["stacks"] if s["allocs"] and s["bytes"] > 512 * s["allocs"]]
	if big:
		errs.append("-Z 512: a stack of %d bytes in %d blocks" % (big[0]["bytes"], big[0]["allocs"]))
	return errs


def case_pipes_growing(work):
	"""A steady leak: 40 pipes a second for 10 s, a report a second. Only blocks of 512 to
	1,024 bytes (-z, -Z: each pipe's 1 KiB of buffers), so that the busy machine's pages
	and small objects keep the tables small: alloc_pipe_info grows, and the verdict says leak."""
	n, rate = 400, 40
	rep, errs = trace_pipes(work, n, ["-k", "-z", "512", "-Z", "1024"], "grow", rate, "1")
	errs += table_drops(rep)
	allocs, _, e = pipe_blocks(rep)
	errs += e
	if not n <= allocs <= n + slack(n):
		errs.append("%d blocks at %s, expected %d (to %d)" % (allocs, PIPE_SITE, n, n + slack(n)))
	site = [s for s in rep["sites"] if s["frame"] and s["frame"]["function"] == PIPE_SITE]
	if site and (not site[0]["growing_stacks"] or site[0]["leak_rank"] is None):
		errs.append("site %s not growing: %r" % (PIPE_SITE, {k: site[0][k] for k in (
			"growing_stacks", "slope_bytes_per_s", "leak_rank")}))
	elif site and not 0.5 * rate * 1024 <= site[0]["slope_bytes_per_s"] <= 1.5 * rate * 1024:
		errs.append("site %s grows %.0f bytes/s, expected about %d" % (
			PIPE_SITE, site[0]["slope_bytes_per_s"], rate * 1024))
	if rep["memory"]["verdict"] != "leak":
		errs.append("verdict %r, expected leak" % rep["memory"]["verdict"])
	return errs


def case_no_target(work):
	"""No -p, no -c: the kernel's allocations, as bcc's memleak does."""
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	t = work.start([TRACER, "0.5", "2"], stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(t, deadline, "memleakbpf 0.5 2")
	errs = [] if rc == 0 else ["exit status %s, expected 0" % rc]
	err = work.read("tracer.stderr")
	if lib.tracing_line_count(err) != 1 or "the kernel's allocations" not in err:
		errs.append("stderr %r: no one line tracing the kernel's allocations" % err[-300:])
	if "Final report: the kernel" not in work.read("tracer.stdout"):
		errs.append("no final report of the kernel on stdout")
	return errs


def too_big(work):
	"""-k's tables of 2^28 blocks: about 29 GiB (110 bytes a block of room)."""
	if mem_available() > 58 << 30:
		raise Skip("more than 58 GiB available: -k's tables of 2^28 blocks would fit")
	return [TRACER, "-k", "--max-allocs", str(BIG_ALLOCS)]


CASES = [
	("kernel_pipes", TRACE, [], case_pipes),
	("kernel_pipes_max_size", TRACE, [], case_pipes_max_size),
	("kernel_pipes_growing", TRACE, [], case_pipes_growing),
	("kernel_no_target", TRACE, [], case_no_target),
	("err_kernel_follow", ERROR, [], error_case(lambda: ["-k", "-f"])),
	("err_kernel_pid", ERROR, [], error_case(lambda: ["-k", "-p", "1"])),
	("err_kernel_max_allocs_too_big", ERROR, [],
	 refusal(too_big, "-k: --max-allocs 268435456 needs")),
]
