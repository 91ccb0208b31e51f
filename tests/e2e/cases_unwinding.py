# SPDX-License-Identifier: GPL-2.0
"""CFI unwinding: the same stacks with and without frame pointers.

Stacks unwound in BPF from the call-frame information (--unwind; the
default, auto, is CFI here). Each victim runs twice, built with frame
pointers (.output/victims/X) and without (.output/victims/nofp/X, -O2's
default), and both reports must equal the truth and each other:
 - per (site, api): bytes and blocks; the first frame of the victim's own
   code (its source file, in its binary; library and inlined-header frames
   skipped) is the site at the truth's line; the victim's own frames after
   it are the truth's callers;
 - the same innermost own frame (function, line) and own-frame chains in
   both builds;
 - every site's stack ends cleanly at _start or clone3 unless truncated,
   and nothing was cut short (dropped.unwind_stops 0).
v_wrappers allocates through libraries (strdup, getline, std::string,
std::vector growth, new/new[]) and in a signal handler (through
__restore_rt); v_deep leaks deeper than 127 frames (truncated and marked,
126 via_recurse after the site) and 10 deep (whole, unmarked); v_trail's
deeper stack meets the thread's last walk where taking its frames would
pass 127 (bpf/stack_trail.bpf.h): truncated and marked all the same;
v_thread_exit's leaking threads have exited (start_thread, clone3 last);
v_preempt's 12 threads, each at a stack and size of its own, on this
machine's 2 CPUs: no block under another thread's stack, however the
threads' programs preempt each other (their per-CPU scratch).
dbgframe/v_basic has its CFI in .debug_frame only. --unwind=fp must still
walk frame pointers (no stack reaches _start through Debian's libc), and a
bad --unwind is a usage error.
"""

import os
import re
import subprocess
import time

import lib
from lib import (CaseFailed, ERROR, TRACE, TRACER, Work, aliases_for, check_report, common_checks,
	dropped_errs, error_case, fn_name, frame_str, load_report, read_truth, tracer_env, victim,
	wait_exit)


CFI_ENDS = {"_start", "clone3", "__clone3"}


def own_frames(frames, binary, source):
	"""The frames of the victim's own code: its binary, its source file."""
	real = os.path.realpath(binary)
	return [f for f in frames
		if os.path.realpath(f.get("module") or "") == real and
		str(f.get("file") or "").endswith(source)]


def cfi_group(rep, binary, source, skip):
	"""{(site, api): {"bytes", "allocs", "stacks": [(own chain, stack)]}} by innermost own frame."""
	got = {}
	for s in rep.get("stacks") or []:
		own = [f for f in own_frames(s.get("frames") or [], binary, source)
		       if fn_name(f) not in skip]
		if not own or not re.match(r"^site_\w+$", fn_name(own[0])):
			continue
		g = got.setdefault((fn_name(own[0]), s.get("api")), {"bytes": 0, "allocs": 0, "stacks": []})
		g["bytes"] += s.get("bytes", 0)
		g["allocs"] += s.get("allocs", 0)
		chain = tuple((fn_name(f), f.get("line")) for f in own)
		g["stacks"].append((chain, s))
	return got


def cfi_check_site(key, e, g):
	"""One site against its truth: figures, line, callers, a clean end."""
	errs = []
	where = "%s/%s" % key
	if (g["bytes"], g["allocs"]) != (e["bytes"], e["allocs"]):
		errs.append("%s: %d bytes in %d, truth %d bytes in %d" % (
			where, g["bytes"], g["allocs"], e["bytes"], e["allocs"]))
	for chain, s in g["stacks"]:
		if e.get("line") and chain[0][1] != e["line"]:
			errs.append("%s: innermost own frame at line %s, truth %d" % (
				where, chain[0][1], e["line"]))
		callers = [c[0] for c in chain[1:]]
		# A truncated stack shows only the callers within the limit.
		if s.get("truncated"):
			callers += e.get("callers", [])[len(callers):]
		if e.get("callers") and callers != e["callers"]:
			errs.append("%s: own callers %s, truth %s (%s)" % (
				where, ",".join(callers), ",".join(e["callers"]),
				frame_str(s["frames"], 12)))
		last = fn_name((s.get("frames") or [{}])[-1])
		if not s.get("truncated") and last not in CFI_ENDS:
			errs.append("%s: stack ends at %r, not at _start or clone3 (%s)" % (
				where, last, frame_str(s["frames"], 12)))
	return errs


def cfi_check(rep, truth, binary, source, skip=()):
	"""All mismatches of one report with the truth, CFI style; and its groups."""
	errs = []
	totals = rep.get("totals") or {}
	errs += dropped_errs(totals, also=lambda k: k == "unwind_stops")
	if "unwind_stops" not in (totals.get("dropped") or {}):
		errs.append("no dropped.unwind_stops in the report")
	expected = {}
	for t in truth:
		key = (t["site"], aliases_for(binary).get(t["api"], t["api"]))
		e = expected.setdefault(key, dict(t, bytes=0, allocs=0))
		e["bytes"] += t["bytes"]
		e["allocs"] += t["allocs"]
	got = cfi_group(rep, binary, source, skip)
	for key, e in sorted(expected.items()):
		if key not in got:
			errs.append("%s/%s: missing (truth %d bytes in %d)" % (
				key[0], key[1], e["bytes"], e["allocs"]))
		else:
			errs += cfi_check_site(key, e, got[key])
	for key in sorted(set(got) - set(expected)):
		errs.append("%s/%s: %d bytes outstanding, truth: none" % (key[0], key[1], got[key]["bytes"]))
	return errs, got


def cfi_trace(work, subs, name, binary, args=(), env=None, victim_args=""):
	"""memleakbpf --json ... -c binary in work/name: (sub-work, exit status, report)."""
	sub = Work(work.dir, name)
	subs.append(sub)
	js = sub.path("report.json")
	p = sub.start([TRACER, "--json", js] + list(args) + ["-c", (binary + " " + victim_args).strip()],
		      env=dict(tracer_env(sub), **(env or {})), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c (%s)" % name)
	if not os.path.exists(js):
		raise CaseFailed("%s: no JSON report written" % name)
	return sub, rc, load_report(js)


def cfi_same_builds(a, b):
	"""The two builds' per-site figures, innermost own frames and own chains."""
	errs = []
	for key in sorted(set(a) | set(b)):
		ga, gb = a.get(key), b.get(key)
		if not ga or not gb:
			errs.append("%s/%s: only in the %s build" % (key[0], key[1], "fp" if ga else "nofp"))
			continue
		fa = sorted(set(c for c, _ in ga["stacks"]))
		fb = sorted(set(c for c, _ in gb["stacks"]))
		if (ga["bytes"], ga["allocs"]) != (gb["bytes"], gb["allocs"]):
			errs.append("%s/%s: %d/%d with frame pointers, %d/%d without" % (
				key[0], key[1], ga["bytes"], ga["allocs"], gb["bytes"], gb["allocs"]))
		if fa != fb:
			errs.append("%s/%s: own frames %r with frame pointers, %r without" % (
				key[0], key[1], fa[:2], fb[:2]))
	return errs


def cfi_case(vname, source, builds=("", "nofp/"), skip=(), extra=None, want_rc=0, victim_args=""):
	"""vname [victim_args] from each build: truth, clean ends, the same report in both."""
	def run(work):
		subs, errs, groups = [], [], []
		try:
			for build in builds:
				binary = victim(build + vname)
				name = (build or "fp/").rstrip("/")
				sub, rc, rep = cfi_trace(work, subs, name, binary, victim_args=victim_args)
				sub_errs, got = cfi_check(rep, read_truth(sub), binary, source, skip)
				if extra:
					sub_errs += extra(rep, binary, source)
				common_checks(sub, rc, want_rc, sub_errs)
				errs += ["%s: %s" % (name, e) for e in sub_errs]
				groups.append(got)
			errs += cfi_same_builds(groups[0], groups[1])
		finally:
			for sub in subs:
				sub.close()
		return errs
	return run


def truncated_errs(what, s):
	"""A stack past the limit: 127 frames, marked."""
	frames = s.get("frames") or []
	if not s.get("truncated") or len(frames) != 127:
		return ["%s: %d frames, truncated %r; expected 127, true" % (
			what, len(frames), s.get("truncated"))]
	return []


def deep_extra(rep, binary, source):
	"""The 200-deep stack: 127 frames, marked; the 10-deep one whole."""
	errs = []
	for s in rep.get("stacks") or []:
		frames = s.get("frames") or []
		names = [fn_name(f) for f in frames]
		if names[:1] == ["site_deep_leak"]:
			errs += truncated_errs("deep stack", s)
			if set(names[1:]) != {"via_recurse"}:
				errs.append("deep stack: frames after the site are not all via_recurse")
		elif names[:1] == ["site_shallow_leak"]:
			if s.get("truncated") or names[1:12] != ["via_recurse"] * 11:
				errs.append("shallow stack: %s, truncated %r" % (frame_str(frames, 14),
										  s.get("truncated")))
	return errs


def trail_extra(rep, binary, source):
	"""The stack that met the trail too deep: 127 frames, marked; the trail's own whole."""
	errs = []
	for s in rep.get("stacks") or []:
		frames = s.get("frames") or []
		names = [fn_name(f) for f in frames]
		if names[:1] == ["site_trail_deep"]:
			errs += truncated_errs("deeper stack", s)
		elif names[:1] == ["site_trail_mid"]:
			if s.get("truncated") or names[1:92] != ["via_recurse"] * 91:
				errs.append("trail's stack: %s, truncated %r" % (frame_str(frames, 14),
										  s.get("truncated")))
	return errs


def thread_extra(rep, binary, source):
	"""Exited threads' stacks: thr_*, start_thread, clone3, and nothing after."""
	errs = []
	for s in rep.get("stacks") or []:
		names = [fn_name(f) for f in s.get("frames") or []]
		if names[:1] in (["site_joined_leak"], ["site_detached_leak"]) and \
		   names[2:] not in (["start_thread", "clone3"], ["start_thread", "__clone3"]):
			errs.append("thread stack %s: expected start_thread, clone3 after thr_*" % names)
	return errs


def wrappers_extra(rep, binary, source):
	"""The handler's stack: via_handler, then the signal trampoline by its
	name (it is returned to at its first byte, which no call precedes), then
	the interrupted code."""
	errs = []
	for s in rep.get("stacks") or []:
		names = [fn_name(f) for f in s.get("frames") or []]
		if "via_handler" in names:
			i = names.index("via_handler")
			if names[i + 1:i + 2] != ["__restore_rt"]:
				errs.append("signal stack %s: expected __restore_rt after via_handler" % names)
	return errs


def case_preempt_fallback(work):
	"""v_preempt traced as on a kernel before 6.10, without bpf_preempt_disable
	(MEMLEAKBPF_BENCH_NO_PREEMPT_OFF=1, bpf/scratch.bpf.h): the programs load,
	and every block is under its own thread's stack, or, on a preemptible
	kernel, counted in dropped.stacks_preempted and under none."""
	subs = []
	binary = victim("nofp/v_preempt")
	try:
		sub, rc, rep = cfi_trace(work, subs, "fallback", binary,
					 env={"MEMLEAKBPF_BENCH_NO_PREEMPT_OFF": "1"})
		dropped = (rep.get("totals") or {}).get("dropped") or {}
		lost = dropped.get("stacks_preempted")
		errs, got = cfi_check(rep, read_truth(sub), binary, "v_preempt.c", ("via_recurse",))
		if lost is None:
			errs.append("no dropped.stacks_preempted in the report")
		elif lost:
			# Those blocks are under no stack: only their sites' figures fall short, by them.
			want = sum(t["allocs"] for t in read_truth(sub))
			have = sum(g["allocs"] for g in got.values())
			errs = [e for e in errs if "bytes in" not in e and "stacks_preempted" not in e]
			if want - have != lost:
				errs.append("%d blocks under no site's stack, %d counted preempted" % (
					want - have, lost))
		common_checks(sub, rc, 0, errs)
	finally:
		for sub in subs:
			sub.close()
	return errs


def case_unwind_fp(work):
	"""--unwind=fp: the truth still holds on a frame-pointer build, and no
	stack goes past Debian's libc, which has none (the CFI walk reaches _start)."""
	subs = []
	try:
		sub, rc, rep = cfi_trace(work, subs, "fp", victim("v_basic"), ["--unwind=fp"])
		errs = check_report(rep, read_truth(sub), victim("v_basic"), "v_basic.c")
		for s in rep.get("stacks") or []:
			if "_start" in [fn_name(f) for f in s.get("frames") or []]:
				errs.append("--unwind=fp reached _start: %s" % frame_str(s["frames"], 8))
				break
		common_checks(sub, rc, 0, errs)
	finally:
		for sub in subs:
			sub.close()
	return errs


def stack_keys(rep):
	"""The report's stacks as comparable rows: api, figures, frames by name and module."""
	return sorted((s.get("api"), s.get("bytes"), s.get("allocs"),
		       tuple((fn_name(f), os.path.basename(f.get("module") or ""))
			     for f in s.get("frames") or []))
		      for s in rep.get("stacks") or [])


def cache_lines(stderr):
	"""-v's builds: [(from the cache, read from CFI)], and the tables said read through the cache."""
	builds = [(int(a), int(b)) for a, b in re.findall(
		r"unwind tables of \d+ files, \d+ rows \((\d+) from the cache, (\d+) read from their CFI\)",
		stderr)]
	return builds, re.findall(r"unwind table (\S+): \d+ rows from .*?, through the cache", stderr)


def case_unwind_cache(work):
	"""v_dlopen (two dlopens, a dlclose) under --unwind-cache DIR twice, and
	with the cache off: the first run writes the entries, the second reads
	every table from them (its plugins' too) and none from CFI, and all
	three give the same totals and the same stacks, frame for frame."""
	subs, errs, reps = [], [], {}
	cache = os.path.join(work.dir, "ucache")
	binary = victim("v_dlopen")
	try:
		for name, arg in (("off", "off"), ("cold", cache), ("warm", cache)):
			sub, rc, rep = cfi_trace(work, subs, name, binary, ["-v", "--unwind-cache", arg])
			common_checks(sub, rc, 0, errs)
			errs += ["%s: %s" % (name, e) for e in dropped_errs(rep.get("totals") or {})]
			reps[name] = (rep, sub.read("tracer.stderr"))
		cold, warm = cache_lines(reps["cold"][1]), cache_lines(reps["warm"][1])
		m = re.search(r"unwind cache \S+: (\d+) tables written", reps["cold"][1])
		if not m or int(m.group(1)) < 4:
			errs.append("cold: -v did not say 4 tables or more written (%s)" % (m and m.group(0)))
		if not cold[0] or any(c for c, _ in cold[0]):
			errs.append("cold: builds %r, expected all read from CFI" % (cold[0],))
		if not warm[0] or any(r for _, r in warm[0]) or not all(c for c, _ in warm[0]):
			errs.append("warm: builds %r, expected all from the cache" % (warm[0],))
		for lib_name in ("libp_kept.so", "libp_closed.so", "libc.so.6"):
			if lib_name not in warm[1]:
				errs.append("warm: %s's table not read through the cache" % lib_name)
		if "through the cache" in reps["off"][1]:
			errs.append("off: a table read through the cache")
		base = reps["off"][0]
		for name in ("cold", "warm"):
			rep = reps[name][0]
			for k in ("outstanding_bytes", "outstanding_allocs", "allocs", "frees"):
				a, b = (rep.get("totals") or {}).get(k), (base.get("totals") or {}).get(k)
				if a != b:
					errs.append("%s: totals.%s %r, %r without the cache" % (name, k, a, b))
			if stack_keys(rep) != stack_keys(base):
				errs.append("%s: stacks differ from those without the cache" % name)
		if not stack_keys(base):
			errs.append("off: no stacks")
	finally:
		for sub in subs:
			sub.close()
	return errs


CASES = [
	("cfi_basic", TRACE, [], cfi_case("v_basic", "v_basic.c")),
	("cfi_apis", TRACE, [], cfi_case("v_apis", "v_apis.c")),
	("cfi_threads", TRACE, [], cfi_case("v_threads", "v_threads.c")),
	("cfi_cxx", TRACE, [], cfi_case("v_cxx", "v_cxx.cc")),
	("cfi_static", TRACE, [], cfi_case("v_static", "v_static.c")),
	("cfi_nopie", TRACE, [], cfi_case("v_nopie", "v_nopie.c")),
	("cfi_exit", TRACE, [], cfi_case("v_exit", "v_exit.c", want_rc=7)),
	("cfi_wrappers", TRACE, [], cfi_case("v_wrappers", "v_wrappers.cc", extra=wrappers_extra)),
	("cfi_deep", TRACE, [], cfi_case("v_deep", "v_deep.c", skip=("via_recurse",),
					  extra=deep_extra)),
	("cfi_trail", TRACE, [], cfi_case("v_trail", "v_trail.c",
					   skip=("via_recurse", "via_deeper", "via_deep_leaf"),
					   extra=trail_extra)),
	("cfi_thread_exit", TRACE, [], cfi_case("v_thread_exit", "v_thread_exit.c",
						 extra=thread_extra)),
	("cfi_preempt", TRACE, [], cfi_case("v_preempt", "v_preempt.c", skip=("via_recurse",))),
	("cfi_preempt_fallback", TRACE, [], case_preempt_fallback),
	("cfi_debug_frame", TRACE, [], cfi_case("v_basic", "v_basic.c", builds=("", "dbgframe/"))),
	("cfi_unwind_fp", TRACE, [], case_unwind_fp),
	("cfi_unwind_cache", TRACE, [], case_unwind_cache),
	("err_unwind_value", ERROR, [], error_case(lambda: ["--unwind=frames", "-c", "true"])),
]
