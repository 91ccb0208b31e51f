# SPDX-License-Identifier: GPL-2.0
"""Limits and refusals: what memleakbpf will not do, said at once.

Tables larger than the memory available are refused before anything is
created, naming the largest size that fits; SIGTERM while a large table is
being created ends memleakbpf at once, and the -c command never runs; two
outputs naming one file, -c of a directory, -p of memleakbpf itself, of a
kernel thread or of a zombie: one line, a non-zero exit, well under a
second. And the final report of a -c command that has exited: its memory
is the last reading taken while it ran, with the time it was taken. New
stacks lost to a full stack ring are counted, never misattributed.
"""

import os
import signal
import subprocess
import time

import re

import lib
from lib import (CaseFailed, ERROR, Skip, TRACE, TRACER, common_checks, fn_name, load_report,
	read_truth, run_command_case, tracer_env, victim, wait_exit)

AT_ONCE = 1.0	# seconds: a refusal comes before anything is loaded
BIG_ALLOCS = 1 << 28	# the documented maximum: about 15 GiB of tables


def mem_available():
	with open("/proc/meminfo") as f:
		for line in f:
			if line.startswith("MemAvailable:"):
				return int(line.split()[1]) * 1024
	raise Skip("no MemAvailable in /proc/meminfo")


def refusal(argv_fn, says, within=AT_ONCE):
	"""memleakbpf ARGV: exit > 0 within `within` s, one stderr line holding `says`."""
	def run(work):
		argv = argv_fn(work)
		t0 = time.monotonic()
		p = work.start(argv, stdin=subprocess.DEVNULL, tag="tracer")
		rc = wait_exit(p, t0 + 10, " ".join(argv))
		took = time.monotonic() - t0
		lines = work.read("tracer.stderr").splitlines()
		errs = []
		if rc is None or rc <= 0:
			errs.append("exit status %s, expected an error (> 0)" % rc)
		if len(lines) != 1 or not lines[0].startswith("memleakbpf: ") or says not in lines[0]:
			errs.append("stderr %r, expected one line saying %r" % (lines[:4], says))
		if took > within:
			errs.append("took %.2f s, expected under %.1f s" % (took, within))
		return errs
	return run


def too_big(work):
	if mem_available() > 28 << 30:
		raise Skip("more than 28 GiB available: 2^28 blocks' tables would fit")
	return [TRACER, "--max-allocs", str(BIG_ALLOCS), "-c", "true"]


def same_file(work):
	out = work.path("report")
	return [TRACER, "--json", out, "--folded", os.path.join(work.dir, ".", "report"), "-c", "true"]


def self_pid(work):
	# exec keeps the pid: the shell's $$ becomes memleakbpf's own.
	return ["sh", "-c", 'exec "$0" -p $$', TRACER]


def kernel_thread(work):
	with open("/proc/2/stat") as f:
		fields = f.read().rsplit(")", 1)[1].split()
	if not int(fields[6]) & 0x00200000:	# PF_KTHREAD
		raise Skip("pid 2 is not a kernel thread here (a pid namespace)")
	return [TRACER, "-p", "2"]


def case_zombie(work):
	z = subprocess.Popen(["true"])
	try:
		deadline = time.monotonic() + 5
		while open("/proc/%d/stat" % z.pid).read().rsplit(")", 1)[1].split()[0] != "Z":
			if time.monotonic() > deadline:
				raise CaseFailed("pid %d never became a zombie" % z.pid)
			time.sleep(0.01)
		return refusal(lambda w: [TRACER, "-p", str(z.pid)], "a zombie")(work)
	finally:
		z.wait()


def case_sigterm_while_loading(work):
	"""SIGTERM while a table of several GiB is being created: memleakbpf ends
	at once, and the command it was to run never starts."""
	allocs = 1 << 26	# about 3.7 GiB of tables
	if mem_available() < 10 << 30:
		raise Skip("under 10 GiB available: the table would be refused")
	marker = work.path("ran")
	t = work.start([TRACER, "--max-allocs", str(allocs), "-c", "touch " + marker],
		       stdin=subprocess.DEVNULL, tag="tracer")
	time.sleep(0.3)
	t0 = time.monotonic()
	t.send_signal(signal.SIGTERM)
	rc = wait_exit(t, t0 + 10, "memleakbpf after SIGTERM while loading")
	took = time.monotonic() - t0
	errs = []
	if took > 1.0:
		errs.append("exited %.2f s after SIGTERM, expected under 1 s" % took)
	if rc == 0:
		errs.append("exit status 0 after SIGTERM before tracing began")
	time.sleep(0.2)	# a command let loose would have run by now
	if os.path.exists(marker):
		errs.append("the command ran although memleakbpf was ended before tracing began")
	return errs


def case_memory_after_exit(work):
	"""-c v_basic exits within milliseconds: the final report's memory is the
	last reading taken while it ran (here the one when tracing began), with
	its time, never "could not be read"."""
	binary = victim("v_basic")
	t = work.start([TRACER, "--json", work.path("report.json"), "-c", binary],
		       env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(t, time.monotonic() + 30, "memleakbpf -c v_basic")
	errs = []
	common_checks(work, rc, 0, errs)
	out = work.read("tracer.stdout")
	if "could not be read" in out:
		errs.append("the final report says the memory could not be read")
	if "the last reading before it exited" not in out:
		errs.append("the final report does not say when its memory was read")
	read_truth(work)
	now = load_report(work.path("report.json"))["memory"]["now"]
	if not isinstance(now.get("read_at_s"), (int, float)) or not now.get("rss_bytes"):
		errs.append("JSON memory.now %r: no reading with its time" % now)
	elif now["read_at_s"] > now["t_s"]:
		errs.append("memory read at %s s, after the report at %s s" % (now["read_at_s"], now["t_s"]))
	return errs


def case_stack_ring_full(work):
	"""-c v_stacks through a stack ring of one page (--new-stack-buffer 4K):
	new stacks come faster than the tracer reads them, and those that find
	the ring full are lost, never misattributed: every allocation is
	counted, those whose stack was lost sit under no stack, exactly as many
	as the drop line says, and the drop line names --new-stack-buffer."""
	binary = victim("v_stacks")
	argv = [TRACER, "--json", work.path("report.json"), "--new-stack-buffer", "4K", "--all-stacks",
		"-c", "%s 12 2" % binary]
	t = work.start(argv, env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(t, time.monotonic() + 120, "memleakbpf -c v_stacks")
	errs = []
	common_checks(work, rc, 0, errs)
	truth = work.read("truth.txt")
	m = re.search(r"^# total: site_churn malloc allocs=(\d+)", truth, re.M)
	rep = load_report(work.path("report.json"))
	totals, lost = rep["totals"], rep["totals"]["dropped"].get("stack_ring_full", 0)
	# The site of no stack, one per API, in "stacks" or "churn" or both.
	unknown = sum({s["api"]: s["total_allocs"] for s in rep["stacks"] + rep.get("churn", [])
		       if not s["frames"]}.values())
	if not m:
		return errs + ["v_stacks wrote no '# total:' note"]
	if totals["allocs"] != int(m.group(1)) + 2:	# and site_keep's two blocks
		errs.append("totals.allocs %d, truth %d" % (totals["allocs"], int(m.group(1)) + 2))
	if not lost:
		errs.append("no stack lost through a ring of one page: the case tests nothing")
	if unknown != lost:
		errs.append("%d allocations under no stack, %d counted as stack_ring_full" % (unknown, lost))
	if not re.search(r"^Dropped: [\d,]+ allocations? without a stack: .*\(raise --new-stack-buffer\)$",
			 work.read("tracer.stdout"), re.M):
		errs.append("no drop line naming --new-stack-buffer")
	return errs


def case_sweeps_idle(work):
	"""-v -c v_stacks 12 10 keep in a room of 1,024 stacks: every block
	held, from 32,768 stacks (4,096 paths, 8 blocks) into a site table of
	2,048 slots. The table stays past its mark, a sweep comes at every tick, and
	none can retire a site (each holds blocks). The only stacks no live
	site names are those BPF sent for sites it could not make
	(sites_map_full, the case's premise): such a sweep makes no set of the
	stacks the live sites name and splits no store by one (step 2 of
	probe/reclaim.c, 155 ms of CPU at a torch job's 200,000 sites for
	nothing let go of); they wait for a sweep that retires a site. Before,
	a third of these sweeps let go of stacks (71 of 195, 36,876 stacks).
	Nothing is lost: no stack of the report is without its frames."""
	argv = [TRACER, "-v", "--json", work.path("report.json"), "--stack-storage-size", "1024",
		"-c", "%s 12 10 keep" % victim("v_stacks")]
	p = work.start(argv, env=tracer_env(work), stdin=subprocess.DEVNULL, tag="idle")
	rc = wait_exit(p, time.monotonic() + 120, " ".join(argv))
	sweeps = [(int(a), int(b)) for a, b in
		  re.findall(r"^memleakbpf: reclaimed (\d+) sites and (\d+) stacks", work.read("idle.stderr"),
			     re.M)]
	if rc != 0:
		raise CaseFailed("%s: exit %s" % (" ".join(argv), rc))
	rep = load_report(work.path("report.json"))
	dropped = rep["totals"]["dropped"]
	idle = [b for a, b in sweeps if not a]
	lib.log("%d sweeps, %d of them retiring no site; sites_map_full %d"
		% (len(sweeps), len(idle), dropped.get("sites_map_full", 0)))
	errs = []
	if len(idle) < 10 or not dropped.get("sites_map_full"):
		errs.append("%d sweeps retired no site, sites_map_full %d: the case tests nothing"
			    % (len(idle), dropped.get("sites_map_full", 0)))
	if any(idle):
		errs.append("%d of the %d sweeps that retired no site let go of %d stacks"
			    % (sum(1 for b in idle if b), len(idle), sum(idle)))
	if dropped.get("stacks_lost"):
		errs.append("%d allocations' stacks lost" % dropped["stacks_lost"])
	unread = [s for s in rep["stacks"] if s["allocs"] and not s["frames"]]
	if unread:
		errs.append("%d stacks of the report without frames" % len(unread))
	return errs


SIZES = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
BUCKET_SLOTS, BUCKET_BYTES = 7, 232	# bpf/memleak.h: alloc_bucket
SLOT_HEAD, COUNTS_BYTES, MAX_SHARDS = 64, 64, 4	# bpf/memleak.h: site_slot, site_counts


def possible_cpus():
	"""The kernel's possible CPUs, as libbpf counts them (ranges such as 0-1,4)."""
	n = 0
	for part in open("/sys/devices/system/cpu/possible").read().strip().split(","):
		lo, _, hi = part.partition("-")
		n += int(hi or lo) - int(lo) + 1
	return n


def site_shards():
	"""A site slot's copies of its counts: one per possible CPU, up to 4, a power of two."""
	n = 1
	while n < MAX_SHARDS and n < possible_cpus():
		n *= 2
	return n


def slot_bytes():
	return SLOT_HEAD + site_shards() * COUNTS_BYTES


def pow2_at_least(n, least=64):
	v = least
	while v < n:
		v <<= 1
	return v


def tables_bytes(max_allocs, stacks):
	"""The live-block and site tables' bytes as user/probe/probes.c sizes them:
	1.5 slots a block of --max-allocs in buckets of 7, 1.5 slots a stack
	(and one more per API, fewer than 64 of them: no power of two moves)."""
	buckets = pow2_at_least((3 * max_allocs // 2 + BUCKET_SLOTS - 1) // BUCKET_SLOTS)
	return buckets * BUCKET_BYTES, pow2_at_least(3 * stacks // 2 + 64) * slot_bytes()


def tables_run(work, tag, extra):
	"""-v on demo_leaky: (peak RSS, live-block table, site table) from the last memory line, bytes."""
	argv = [TRACER, "-v"] + extra + ["-c", "%s" % victim("demo_leaky")]
	p = work.start(argv, env=tracer_env(work), stdin=subprocess.DEVNULL, tag=tag)
	rc = wait_exit(p, time.monotonic() + 120, " ".join(argv))
	lines = [l for l in work.read(tag + ".stderr").splitlines() if "our memory: " in l]
	if rc != 0 or not lines:
		raise CaseFailed("%s: exit %s, %d memory lines" % (" ".join(argv), rc, len(lines)))
	m = re.search(r"our memory: RSS [\d.]+ MiB \(peak ([\d.]+) MiB\).* live blocks ([\d.]+) (\w+) "
		      r"\(.*\), sites ([\d.]+) (\w+) \([\d,]+ slots of (\d+) B, the counts in (\d+) copies",
		      lines[-1])
	if not m:
		raise CaseFailed("no peak or table sizes in -v's line: %r" % lines[-1][:300])
	if (int(m.group(6)), int(m.group(7))) != (slot_bytes(), site_shards()):
		raise CaseFailed("-v says site slots of %s B with %s copies of the counts; %d possible "
				 "CPUs want %d B and %d" % (m.group(6), m.group(7), possible_cpus(),
							  slot_bytes(), site_shards()))
	return (float(m.group(1)) * (1 << 20), float(m.group(2)) * SIZES[m.group(3)],
		float(m.group(4)) * SIZES[m.group(5)])


def case_tables_outside_rss(work):
	"""The BPF tables of live blocks and sites are kernel memory, read through
	windows of a few MiB, not mapped whole: our peak resident set does not
	grow with them. demo_leaky traced twice with -v: at the default sizes
	(218 MiB of tables with 4 copies of each site's counts, 154 MiB on 2
	CPUs) and with --max-allocs 4M --stack-storage-size 512K (552 MiB, 424
	on 2 CPUs). A site slot has a copy of its counts per possible CPU, up to
	4: -v's slot size and copies are this machine's. -v gives each table's size as probes.c chooses it, and the
	larger run's peak RSS exceeds the other's by less than a tenth of what
	its tables grew by (a reading's arrays of 20-odd bytes a slot grow with
	them). Mapped whole, as before, all of the growth was in it: 344 MiB."""
	if mem_available() < 2 << 30:
		raise Skip("less than 2 GiB available for 552 MiB of tables")
	big = ["--max-allocs", str(4 << 20), "--stack-storage-size", str(512 << 10)]
	runs = [tables_run(work, "small", []), tables_run(work, "big", big)]
	want = [tables_bytes(1 << 20, 1 << 18), tables_bytes(4 << 20, 512 << 10)]
	errs = []
	for (peak, allocs, sites), (w_allocs, w_sites), name in zip(runs, want, ("default", "large")):
		if (allocs, sites) != (w_allocs, w_sites):
			errs.append("%s tables: -v says %.1f and %.1f MiB, expected %.1f and %.1f MiB"
				    % (name, allocs / 2**20, sites / 2**20, w_allocs / 2**20, w_sites / 2**20))
	grew = sum(want[1]) - sum(want[0])
	peak_grew = runs[1][0] - runs[0][0]
	lib.log("peak RSS %.1f and %.1f MiB; tables grew by %.1f MiB"
		% (runs[0][0] / 2**20, runs[1][0] / 2**20, grew / 2**20))
	if peak_grew >= grew / 10:
		errs.append("peak RSS grew by %.1f MiB with tables %.1f MiB larger (bound: a tenth): "
			    "they are in our resident set" % (peak_grew / 2**20, grew / 2**20))
	return errs


KEPT_FREE_MAX = 8 << 20


def case_memory_kept_free(work):
	"""-v -c v_stacks 14 16 1, a report every 0.5 s: 131,072 stacks live at
	once, each report building and freeing arrays and maps of tens of MiB.
	Blocks of 1 MiB or more are mapped apart and go back to the kernel when
	freed (analyze/memuse.c): at every report's memory line malloc keeps at
	most 8 MiB free, and says how much of what it has in use is mapped
	apart. With glibc's sliding threshold the reports' arrays came from the
	heap: 10-17 MiB kept free at most reports of this run (50-100 MiB at
	a torch job's), all of it in our resident set."""
	argv = [TRACER, "-v", "0.5", "-c", "%s 14 16 1" % victim("v_stacks")]
	p = work.start(argv, env=tracer_env(work), stdin=subprocess.DEVNULL, tag="kept")
	rc = wait_exit(p, time.monotonic() + 120, " ".join(argv))
	found = re.findall(r"our memory: .*; malloc [\d.]+ \w+ in use(?: \(([\d.]+) (\w+) of it in "
			   r"blocks mapped apart[^)]*\))?, ([\d.]+) (\w+) kept free", work.read("kept.stderr"))
	if rc != 0 or len(found) < 3:
		raise CaseFailed("%s: exit %s, %d memory lines" % (" ".join(argv), rc, len(found)))
	size = dict(SIZES, B=1)
	used = [(float(m) * size[um] if m else None, float(f) * size[uf]) for m, um, f, uf in found]
	lib.log("%d reports: kept free at most %.1f MiB" % (len(used), max(f for _, f in used) / 2**20))
	errs = ["report %d: %.1f MiB kept free (bound %.0f MiB)" % (i + 1, f / 2**20, KEPT_FREE_MAX / 2**20)
		for i, (_, f) in enumerate(used) if f > KEPT_FREE_MAX]
	if not any(m for m, _ in used):
		errs.append("no memory line says a block mapped apart")
	return errs


CHURN_ROOM = 16384


def churn_case(bits, rounds, leak_every, hold_every=0):
	"""-c v_churn: 2^bits distinct stacks, each allocating `rounds` times,
	with one or two blocks live at once, into a stack room of 16,384 (the
	issue's: 5 M allocations from 131,072 stacks lost 1.5 M stacks, the
	sweep having stopped for good once the churn refilled the room while it
	ran). Every 2^bits / leak_every stack leaks one block in the last round.
	Bound: no drop at all. The sweep starts at a quarter of the room and
	runs ahead of the target (nice -10): the churn has three quarters of the
	room, about 0.1 s of it here, to fill while a sweep of 20 ms of CPU runs.
	Only the final report is made: a report in between holds locks the
	sweep takes while it reads 100,000 retired sites; it runs at the
	sweeper's nice value, but under a load of 10 on 2 CPUs one run in two
	or three still dropped some 100 of 1.5 M stacks (docs/TRACING.md, Room for what
	is outstanding). Every leaking stack's figures exact:
	`rounds` allocations of 64 bytes, one block outstanding. With
	hold_every, every hold_every-th stack holds a block from the first
	round to the last: sites that stay among those the churn makes and the
	sweep retires (churn_among_held)."""
	def run(work):
		binary = victim("v_churn")
		saved = lib.CASE_TIMEOUT
		lib.CASE_TIMEOUT = max(saved, 180.0)	# 1.5 M traced calls on a loaded VM
		try:
			return run_command_case(work, "%s %d %d %d %d" % (binary, bits, rounds, leak_every,
									  hold_every),
						binary, "v_churn.c", check=churn_check(rounds),
						extra_args=["--stack-storage-size", str(CHURN_ROOM),
							    "--all-stacks", "3600"])
		finally:
			lib.CASE_TIMEOUT = saved
	return run


def churn_note(work, key):
	m = re.search(r"^# %s: (.+)$" % key, work.read("truth.txt"), re.M)
	if not m:
		raise CaseFailed("v_churn wrote no '# %s:' note" % key)
	return m.group(1)


def churn_check(rounds):
	def check(work, truth):
		rep = load_report(work.path("report.json"))
		total = re.match(r"allocs=(\d+) bytes=(\d+)$", churn_note(work, "total"))
		leaking = int(churn_note(work, "leaking"))
		errs = []	# a drop: check_report names it
		if rep["totals"]["allocs"] != int(total.group(1)):
			errs.append("totals.allocs %d, truth %s" % (rep["totals"]["allocs"], total.group(1)))
		leaks = [s for s in rep["stacks"] if s["frames"] and fn_name(s["frames"][0]) == "site_leak"]
		if len(leaks) != leaking:
			errs.append("%d site_leak stacks, truth %d" % (len(leaks), leaking))
		short = [s for s in leaks if (s["allocs"], s["bytes"], s["total_allocs"], s["total_bytes"])
			 != (1, 64, rounds, 64 * rounds)]
		if short:
			s = short[0]
			errs.append("%d of the site_leak stacks not exact, e.g. %d blocks of %d bytes "
				    "outstanding, %d allocations of %d bytes in all; truth 1 of 64, %d of %d"
				    % (len(short), s["allocs"], s["bytes"], s["total_allocs"],
				       s["total_bytes"], rounds, 64 * rounds))
		return errs
	return check


CASES = [
	("err_max_allocs_too_big", ERROR, [],
	 refusal(too_big, "the largest that fits is --max-allocs")),
	("err_same_output_file", ERROR, [], refusal(same_file, "name one file")),
	("err_command_is_dir", ERROR, [],
	 refusal(lambda w: [TRACER, "-c", "/tmp"], "/tmp: is a directory")),
	("err_pid_self", ERROR, [], refusal(self_pid, "memleakbpf itself")),
	("err_pid_kernel_thread", ERROR, [], refusal(kernel_thread, "a kernel thread")),
	("err_pid_zombie", ERROR, [], case_zombie),
	("sigterm_while_loading", TRACE, [], case_sigterm_while_loading),
	("memory_after_exit", TRACE, [], case_memory_after_exit),
	("tables_outside_rss", TRACE, [], case_tables_outside_rss),
	("memory_kept_free", TRACE, [], case_memory_kept_free),
	("churn_outran", TRACE, [], churn_case(17, 12, 128)),
	# A third of the 32,768 stacks held, in a table of 32,768 slots: the
	# sweep leaves RETIRED slots between them, which new sites take before
	# EMPTY ones. With the sweep's mark on the slots not EMPTY alone, the
	# sites grew unseen into them, to 90% of the table at the sweeps: 780
	# to 2,133 drops a run, at loads from 0.1 to 7 (docs/PERFORMANCE.md).
	("churn_among_held", TRACE, [], churn_case(15, 20, 64, 3)),
	("stack_ring_full", TRACE, [], case_stack_ring_full),
	("sweeps_idle", TRACE, [], case_sweeps_idle),
]
