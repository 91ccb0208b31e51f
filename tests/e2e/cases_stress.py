# SPDX-License-Identifier: GPL-2.0
"""Under load: exact under contention, and what does not fit is counted.

v_stress's threads hand blocks to each other (under -c, and under -p
attached while they churn): every site and every churn total exact, no free
missed. v_many holds N blocks outstanding: exact when --max-allocs holds
them, else every block not tracked is counted and the report names the
option to raise. The full-size runs (10 M blocks, millions of operations)
are `make stress` (scripts/stress.py): the same cases with STRESS_THREADS,
STRESS_OPS and CAPACITY_N set larger, which is why they are read at run time.
"""

import os
import re
import subprocess
import time

import lib
from lib import (LineReader, TRACE, check_report, common_checks, finish_victim, fn_name, go_until,
	load_report, log, open_bytes, read_truth, run_command_case, start_tracing, tracer_env,
	truth_notes, victim, wait_exit)


STRESS_THREADS = 2
STRESS_OPS = 250000		# per thread: about a million allocator calls in all
CAPACITY_N = 200000
CAPACITY_SMALL = 50000		# --max-allocs that cannot hold them
CAPACITY_RAISED = 262144
DEFAULT_MAX_ALLOCS = 1 << 20	# opts.h
MEASURED = {}			# case name -> figures, for scripts/stress.py


def site_totals(rep, site, api):
	got = [s for s in rep["stacks"]
	       if s["frames"] and fn_name(s["frames"][0]) == site and s.get("api") == api]
	return sum(s["total_allocs"] for s in got), sum(s["total_bytes"] for s in got)


def check_churn_totals(work, rep):
	"""Every churn allocation counted: the sites' totals since tracing began."""
	errs = []
	for m in re.finditer(r"^# total: (\S+) (\S+) allocs=(\d+) bytes=(\d+)$",
			     work.read("truth.txt"), re.M):
		site, api, want = m.group(1), m.group(2), (int(m.group(3)), int(m.group(4)))
		got = site_totals(rep, site, api)
		if got != want:
			errs.append("%s/%s: %d allocations of %d bytes since tracing began, truth %d of %d"
				    % ((site, api) + got + want))
		else:
			log("  %s/%s: %d allocations, %d bytes: exact" % ((site, api) + got))
	if not errs and "# total:" not in work.read("truth.txt"):
		errs.append("the victim wrote no '# total:' notes")
	return errs


def untracked(rep):
	return (rep.get("totals") or {}).get("untracked_frees")


def no_losses(rep):
	"""Under contention no free may be missed (replaced) and no stack lost."""
	return ["dropped.%s = %s" % (k, v) for k, v in sorted(rep["totals"]["dropped"].items())
		if v and k in ("replaced", "stack_collisions", "stacks_map_full", "sites_map_full",
				     "stack_ring_full", "stacks_merged", "py_stack_ring_full",
				     "stacks_preempted", "stacks_lost", "py_codes_unnamed")]


def case_stress_c(work):
	"""-c v_stress: threads freeing and reallocating each other's blocks; every
	site exact, and every churn allocation counted, none of them missed."""
	binary = victim("v_stress")

	def check(work, truth):
		rep = load_report(work.path("report.json"))
		errs = check_churn_totals(work, rep) + no_losses(rep)
		if untracked(rep) != 0:
			errs.append("untracked_frees %r under -c, expected 0" % untracked(rep))
		return errs
	return run_command_case(work, "%s %d %d" % (binary, STRESS_THREADS, STRESS_OPS), binary,
				"v_stress.c", check=check)


def case_stress_p(work):
	"""v_stress wait under -p, attached while its threads churn: what was
	allocated before is not reported, its frees are ignored and counted."""
	binary = victim("v_stress")
	js = work.path("report.json")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	v = work.start([binary, "wait", str(STRESS_THREADS), str(STRESS_OPS)], env=tracer_env(work),
		       stdin=subprocess.PIPE, stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
	time.sleep(0.2)		# churning for a while already
	t = start_tracing(work, ["--json", js, "-p", str(pid)], step())
	time.sleep(0.2)		# and traced while it churns
	go_until(v, out, "LEAKED", step())
	finish_victim(v, deadline)
	rc = wait_exit(t, deadline, "memleakbpf -p after its target exited")
	rep = load_report(js)
	errs = check_report(rep, read_truth(work), binary, "v_stress.c", pid=pid, exclude_phase="pre")
	errs += check_churn_totals(work, rep) + no_losses(rep)
	n = truth_notes(work)
	low, high = int(n.get("pre_freed", -1)), int(n.get("pre_freed", -1)) + int(n.get("in_flight_max", 0))
	if untracked(rep) is None or not low <= untracked(rep) <= high:
		errs.append("untracked_frees %r, expected %d (site_pre_freed) to %d (plus the blocks "
			    "in flight at the attach)" % (untracked(rep), low, high))
	log("  untracked_frees %s: %d of the pre phase, %s in flight at the attach" % (
		untracked(rep), low, untracked(rep) - low if untracked(rep) else "?"))
	if "Ignored: " not in work.read("tracer.stdout"):
		errs.append("the text report does not show the ignored frees")
	common_checks(work, rc, 0, errs)
	return errs


def bpf_memlock(pid):
	"""Kernel memory charged for the BPF maps and programs process pid holds:
	(all, the live-block map alone), from the memlock lines of its fdinfo."""
	total, allocs = 0, 0
	for fd in os.listdir("/proc/%d/fdinfo" % pid):
		text = open_bytes("/proc/%d/fdinfo/%s" % (pid, fd)).decode()
		m = re.search(r"^memlock:\s*(\d+)", text, re.M)
		if not m:
			continue
		total += int(m.group(1))
		# An array of struct alloc_bucket: the live blocks.
		if all(re.search(r"^%s:\s*%s$" % kv, text, re.M) for kv in
		       (("map_type", 2), ("key_size", 4), ("value_size", ALLOC_BUCKET_BYTES))):
			allocs = max(allocs, int(m.group(1)))
	return total, allocs


ALLOC_BUCKET_SLOTS = 7		# bpf/memleak.h: struct alloc_bucket
ALLOC_BUCKET_BYTES = 232


def table_slots(max_allocs):
	"""Slots of the live-block table for --max-allocs (user/probes.c: size_maps):
	room for at least max_allocs, one and a half slots per block at least, in a
	power of two of buckets."""
	buckets = 64
	while buckets * ALLOC_BUCKET_SLOTS < 3 * max_allocs // 2:
		buckets *= 2
	return buckets * ALLOC_BUCKET_SLOTS


def capacity_case(max_allocs, exact):
	"""-c v_many N (--max-allocs, or its default when None): exact when it fits,
	else every block that was not tracked is counted and the report names the
	option to raise."""
	def run(work):
		binary = victim("v_many")
		js = work.path("report.json")
		opt = ["--max-allocs", str(max_allocs)] if max_allocs else []
		t0 = time.monotonic()
		t = start_tracing(work, ["--json", js] + opt + ["-c", "%s %d" % (binary, CAPACITY_N)],
				  time.monotonic() + lib.CASE_TIMEOUT)
		memlock = bpf_memlock(t.pid)
		rc = wait_exit(t, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c v_many")
		took = time.monotonic() - t0
		cap = max_allocs or DEFAULT_MAX_ALLOCS
		rep = load_report(js)
		errs = []
		dropped = rep["totals"]["dropped"]["allocs_map_full"]
		tracked = sum(s["allocs"] for s in rep["stacks"]
			      if s["frames"] and fn_name(s["frames"][0]) == "site_many")
		if exact:
			errs += check_report(rep, read_truth(work), binary, "v_many.c")
		else:
			if tracked + dropped != CAPACITY_N or not cap <= tracked <= table_slots(cap):
				errs.append("site_many: %d tracked + %d allocs_map_full, expected %d in all "
					    "(%d to %d tracked)" % (tracked, dropped, CAPACITY_N, cap,
								    table_slots(cap)))
			if not re.search(r"^Dropped: [\d,]+ allocations not tracked: .*\(raise --max-allocs\)$",
					 work.read("tracer.stdout"), re.M):
				errs.append("the text report does not say to raise --max-allocs")
		MEASURED[work.dir] = {"max_allocs": cap, "tracked": tracked, "dropped": dropped,
				      "memlock": memlock[0], "allocs_map": memlock[1], "seconds": took}
		log("  --max-allocs %d: %d tracked, %d counted as allocs_map_full; BPF memlock %.1f MiB "
		    "(live-block map %.1f MiB); %.1f s" % (cap, tracked, dropped,
							   memlock[0] / 2**20, memlock[1] / 2**20, took))
		common_checks(work, rc, 0, errs)
		return errs
	return run


def note(work, key):
	m = re.search(r"^# %s: (\d+)$" % key, work.read("truth.txt"), re.M)
	return int(m.group(1)) if m else None


RECLAIM_ROOM = 16384


def reclaim_churn_case(*tracer_args):
	"""-c v_stacks: twice as many distinct stacks as --stack-storage-size
	holds, each freed at once and used again eight rounds later. The tables
	are reclaimed between rounds: nothing dropped, every allocation counted,
	and each churn stack's figures since tracing began exact across its
	reclaims (the retired figures and the new ones add up). tracer_args:
	--prealloc-stacks, accepted and ignored now (no stack table is left to
	preallocate): the same run with it must still pass."""
	return lambda work: reclaim_churn(work, tracer_args)


def reclaim_churn(work, tracer_args):
	binary = victim("v_stacks")

	def check(work, truth):
		rep = load_report(work.path("report.json"))
		errs = []
		stacks, per = note(work, "stacks"), note(work, "per_stack")
		m = re.search(r"^# total: site_churn malloc allocs=(\d+) bytes=(\d+)$",
			      work.read("truth.txt"), re.M)
		if not m or not stacks or not per:
			return ["v_stacks wrote no '# total:', '# stacks:' or '# per_stack:' note"]
		if stacks <= RECLAIM_ROOM:
			errs.append("%d stacks fit the room of %d: nothing to reclaim" % (stacks, RECLAIM_ROOM))
		want = int(m.group(1)) + rep["totals"]["outstanding_allocs"]
		if rep["totals"]["allocs"] != want:
			errs.append("totals.allocs %d, truth %d" % (rep["totals"]["allocs"], want))
		churn = [c for c in rep.get("churn", []) if c["frames"] and
			 fn_name(c["frames"][0]) == "site_churn"]
		if not churn:
			errs.append("no site_churn stack among the churn stacks")
		for c in churn:
			if (c["total_allocs"], c["total_bytes"]) != (per, per * 48):
				errs.append("a site_churn stack: %d allocations of %d bytes, truth %d of %d"
					    % (c["total_allocs"], c["total_bytes"], per, per * 48))
		return errs + no_losses(rep)
	return run_command_case(work, "%s 12 16" % binary, binary, "v_stacks.c",
				extra_args=["--stack-storage-size", str(RECLAIM_ROOM)] + list(tracer_args),
				check=check)


FOLD_BITS = 13	# v_stacks: 8 rounds of 2^13 stacks, 65,536 in all, each used once


def stacks_totals(work, rep):
	"""v_stacks' '# stacks:' note, and the totals checked against its '# total:'
	note (its churn and what is outstanding): (stacks, errs); stacks None
	when the notes are missing."""
	stacks, m = note(work, "stacks"), re.search(
		r"^# total: site_churn malloc allocs=(\d+) bytes=(\d+)$", work.read("truth.txt"), re.M)
	if not m or not stacks:
		return None, ["v_stacks wrote no '# total:' or '# stacks:' note"]
	want = int(m.group(1)) + rep["totals"]["outstanding_allocs"]
	if rep["totals"]["allocs"] != want:
		return stacks, ["totals.allocs %d, truth %d" % (rep["totals"]["allocs"], want)]
	return stacks, []


def fold_churn(work):
	"""-c v_stacks 13 8, a report every 0.1 s, -v: 65,536 stacks that each
	allocate a block and free it at once, none used again (a torch
	import's start-up), around one small leak. Each report folds the
	retired sites it took in into the totals (reclaim__fold): the history
	and the stack cache at every report hold at most half the stacks the
	run had (-v's "our memory" line; all of them before folding), while
	every figure stays exact: the totals, the leak's, each churn stack's
	(its one allocation)."""
	binary = victim("v_stacks")

	def check(work, truth):
		rep = load_report(work.path("report.json"))
		stacks, errs = stacks_totals(work, rep)
		if stacks is None:
			return errs
		churn = [c for c in rep.get("churn", []) if c["frames"] and
			 fn_name(c["frames"][0]) == "site_churn"]
		if not churn or any((c["total_allocs"], c["total_bytes"]) != (1, 48) for c in churn):
			errs.append("churn: %s, truth site_churn stacks of 1 allocation of 48 bytes" %
				    [(c["total_allocs"], c["total_bytes"]) for c in churn])
		err = work.read("tracer.stderr")
		held = [int(h) for h in re.findall(r"our memory: .*?, history [^(]*\(([\d]+) stacks\)", err)]
		cached = [int(h) for h in re.findall(r"our memory: .*?stack cache [^(]*\(([\d]+) stacks\)", err)]
		folded = [int(f) for f in re.findall(r"^memleakbpf: folded (\d+) retired sites", err, re.M)]
		log("  %d stacks: %d folds, %d sites folded; at most %d in the history and %d in the "
		    "stack cache at a report" % (stacks, len(folded), sum(folded), max(held or [0]),
						 max(cached or [0])))
		if not held or not cached:
			errs.append("-v wrote no 'our memory' line with the history's and the cache's stacks")
		elif max(held) > stacks // 2 or max(cached) > stacks // 2:
			errs.append("the history held %d stacks and the stack cache %d at a report, of %d in "
				    "the run: more than half (folding?)" % (max(held), max(cached), stacks))
		return errs + no_losses(rep)
	return run_command_case(work, "%s %d 8" % (binary, FOLD_BITS), binary, "v_stacks.c",
				extra_args=["-v", "--stack-storage-size", str(RECLAIM_ROOM), "0.1"],
				check=check)


def fold_between(work):
	"""-c v_stacks 14 8 hot, a report every 0.5 s, -v: 16,384 new stacks a
	round that allocate once each and are retired before any reading takes
	them in, beside 32 short stacks that allocate more (the churn's list,
	so that the others may fold unread). Once the retired store has grown
	by 8,192 sites since the last reading, they fold between reports
	(snapshot_kept_fold__unread) and their stacks go at once: after the
	second report the retired store holds at most 3/10 of the run's stacks
	at a report (9,000 to 28,000 of 131,072 in four runs; without, 29,000 to
	54,000 in three, as the sweeps fall: not a test of its own), at least an
	eighth of the stacks fold between reports (none without), and every
	figure stays exact."""
	binary = victim("v_stacks")

	def check(work, truth):
		rep = load_report(work.path("report.json"))
		errs = []
		text = work.read("truth.txt")
		stacks = note(work, "stacks")
		m = re.search(r"^# total: site_churn malloc allocs=(\d+) bytes=(\d+)$", text, re.M)
		h = re.search(r"^# hot: site_hot malloc allocs=(\d+) bytes=(\d+)$", text, re.M)
		if not m or not h or not stacks:
			return ["v_stacks wrote no '# total:', '# hot:' or '# stacks:' note"]
		want = int(m.group(1)) + int(h.group(1)) + rep["totals"]["outstanding_allocs"]
		if rep["totals"]["allocs"] != want:
			errs.append("totals.allocs %d, truth %d" % (rep["totals"]["allocs"], want))
		hot = [(c["total_allocs"], c["total_bytes"]) for c in rep.get("churn", [])
		       if c["frames"] and fn_name(c["frames"][0]) == "site_hot"]
		if not hot or any(f != (16, 640) for f in hot):
			errs.append("churn: site_hot stacks %s, truth 16 allocations of 40 bytes each" % hot)
		err = work.read("tracer.stderr")
		between = [int(f) for f in re.findall(
			r"^memleakbpf: folded (\d+) retired sites unread between reports", err, re.M)]
		aside = [int(k) for k in re.findall(r"our memory: .*?stacks kept aside [^(]*\((\d+)", err)]
		log("  %d stacks: %d folds between reports, %d sites; stacks kept aside at the reports %s"
		    % (stacks, len(between), sum(between), aside))
		if sum(between) < stacks // 8:
			errs.append("%d sites folded between reports, of %d stacks: fewer than an eighth"
				    % (sum(between), stacks))
		if len(aside) < 3:
			errs.append("-v wrote %d 'our memory' lines with the stacks kept aside" % len(aside))
		elif max(aside[2:]) > stacks * 3 // 10:
			errs.append("the retired store kept %d stacks at a report after the second, of %d "
				    "in the run: more than 3/10 (folding between reports?)"
				    % (max(aside[2:]), stacks))
		return errs + no_losses(rep)
	return run_command_case(work, "%s 14 8 hot" % binary, binary, "v_stacks.c",
				extra_args=["-v", "--stack-storage-size", str(RECLAIM_ROOM), "0.5"],
				check=check)


def fold_returning(work):
	"""-c v_stacks 12 24, a report every 0.1 s, -v: 32,768 stacks that each
	allocate a block and free it at once, every eighth round, three times
	in all: each is retired, folded, and comes back. A site that came back
	after a fold is not folded again (report_fold.c's spare_returning):
	folding it again only had the next reading make it anew, read its
	stack and take its figures back. So no site folds twice: the sites
	folded over the run are no more than its stacks (91,000 of 32,768
	before: each stack two or three times), some are spared (-v), and
	every figure stays exact: the totals, each churn stack's (3 allocations
	of 48 bytes)."""
	binary = victim("v_stacks")

	def check(work, truth):
		rep = load_report(work.path("report.json"))
		errs = []
		stacks, per_stack = note(work, "stacks"), note(work, "per_stack")
		m = re.search(r"^# total: site_churn malloc allocs=(\d+) bytes=(\d+)$",
			      work.read("truth.txt"), re.M)
		if not m or not stacks or not per_stack:
			return ["v_stacks wrote no '# total:', '# stacks:' or '# per_stack:' note"]
		want = int(m.group(1)) + rep["totals"]["outstanding_allocs"]
		if rep["totals"]["allocs"] != want:
			errs.append("totals.allocs %d, truth %d" % (rep["totals"]["allocs"], want))
		churn = [(c["total_allocs"], c["total_bytes"]) for c in rep.get("churn", [])
			 if c["frames"] and fn_name(c["frames"][0]) == "site_churn"]
		if not churn or any(c != (per_stack, 48 * per_stack) for c in churn):
			errs.append("churn: %s, truth site_churn stacks of %d allocations of 48 bytes"
				    % (churn, per_stack))
		err = work.read("tracer.stderr")
		folded = [int(f) for f in re.findall(r"^memleakbpf: folded (\d+) retired sites", err, re.M)]
		spared = [int(f) for f in re.findall(r"(\d+) back since a fold spared", err)]
		log("  %d stacks: %d folds, %d sites folded, %d spared" %
		    (stacks, len(folded), sum(folded), sum(spared)))
		if not folded:
			errs.append("-v wrote no 'folded' line: no fold to test")
		elif sum(folded) > stacks + 64:
			errs.append("%d sites folded over the run, of %d stacks: some folded again after "
				    "they came back" % (sum(folded), stacks))
		if not sum(spared):
			errs.append("no site spared a fold after it came back (-v's 'back since a fold')")
		return errs + no_losses(rep)
	return run_command_case(work, "%s 12 24" % binary, binary, "v_stacks.c",
				extra_args=["-v", "--stack-storage-size", str(RECLAIM_ROOM), "0.1"],
				check=check)


def fold_unswept(work):
	"""-c v_stacks 13 8, a report every 0.3 s, -v, the default room: 65,536
	stacks that each allocate a block and free it at once, none used
	again, in a site table whose mark they never reach, so that no sweep
	comes by itself. A sweep before each report's reading retires the
	slots of the sites freed since (report_fold.c), and they fold: at the
	last report the history, and the stack cache less the stacks that
	report folded (they leave it after the report), hold at most a quarter
	of the run's stacks (2,800 to 8,900 of 65,536; without, every one of
	them, 65,537), and every figure stays exact. When the last report is
	the final one, it folds what the churn left since the report before:
	21,243 of its cache's 21,263 stacks in one run."""
	binary = victim("v_stacks")

	def check(work, truth):
		rep = load_report(work.path("report.json"))
		stacks, errs = stacks_totals(work, rep)
		if stacks is None:
			return errs
		reports = [r for r in re.split(r"^memleakbpf: (?:final )?report built in .*$",
					      work.read("tracer.stderr"), flags=re.M)
			   if "our memory: " in r]
		held, cached = [], []
		for r in reports:
			h = re.search(r"our memory: .*?, history [^(]*\((\d+) stacks\)", r)
			c = re.search(r"our memory: .*?stack cache [^(]*\((\d+) stacks\)", r)
			folded = re.search(r"^memleakbpf: folded (\d+) retired sites", r, re.M)
			if h and c:
				held.append(int(h.group(1)))
				cached.append(int(c.group(1)) - (int(folded.group(1)) if folded else 0))
		log("  %d stacks: the history at the reports %s, the cache after their folds %s" %
		    (stacks, held, cached))
		if len(held) < 3:
			errs.append("-v wrote %d 'our memory' lines with the history's stacks: too few"
				    % len(held))
		elif held[-1] > stacks // 4 or cached[-1] > stacks // 4:
			errs.append("the history held %d stacks and the stack cache %d after its fold at "
				    "the last report, of %d in the run: more than a quarter (a sweep for the "
				    "picks?)" % (held[-1], cached[-1], stacks))
		return errs + no_losses(rep)
	return run_command_case(work, "%s 13 8" % binary, binary, "v_stacks.c",
				extra_args=["-v", "0.3"], check=check)


CASES = [
	("stress_c", TRACE, [], case_stress_c),
	("stress_p", TRACE, [], case_stress_p),
	("capacity_drops", TRACE, [], capacity_case(CAPACITY_SMALL, False)),
	("capacity_raised", TRACE, [], capacity_case(CAPACITY_RAISED, True)),
	("reclaim_churn", TRACE, [], reclaim_churn_case()),
	("reclaim_churn_prealloc", TRACE, [], reclaim_churn_case("--prealloc-stacks")),
	("fold_churn", TRACE, [], fold_churn),
	("fold_between", TRACE, [], fold_between),
	("fold_returning", TRACE, [], fold_returning),
	("fold_unswept", TRACE, [], fold_unswept),
]
