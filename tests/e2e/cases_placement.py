# SPDX-License-Identifier: GPL-2.0
"""Probe placement: probes past the entry count the same.

Probes may sit past the entry, on the first instruction the kernel emulates
(user/allocator/placement.c): entry-only ones (free, munmap, operator
delete) and, where the stack pointer has not moved yet, the entry and
return probes of the allocating functions (malloc, new, ...). These cases
prove that placement equivalent to the entry on each allocator: the victim
runs twice, with the default placement (and -v, which names where each
probe went) and with MEMLEAKBPF_PROBE_AT_ENTRY=1, and both reports must
match the truth and each other exactly: totals, every stack's figures and
frames. The default run must also really have moved the named functions.
"""

import os
import re
import subprocess
import time

import lib
from lib import (JEMALLOC, TCMALLOC, TRACE, TRACER, VICTIMS, Work, check_report, common_checks,
	load_report, read_truth, tracer_env, uses_allocator, victim, wait_exit)


# "memleakbpf:   SYMBOL in OBJECT: probe at +N (WHY)", one line per probe and process image.
PROBE_AT = re.compile(r"^memleakbpf:\s+(\S+) in (.+?): (?:probe|entry and return probes) at \+(\d+) \((.*)\)$")


def placement_run(work, subs, name, command, at_entry):
	"""One traced run in work/name; returns (sub-work, exit status, report or None)."""
	sub = Work(work.dir, name)
	subs.append(sub)
	env = tracer_env(sub)
	env.pop("MEMLEAKBPF_PROBE_AT_ENTRY", None)
	if at_entry:
		env["MEMLEAKBPF_PROBE_AT_ENTRY"] = "1"
	js = sub.path("report.json")
	p = sub.start([TRACER, "-v", "--json", js, "-c", command], env=env,
		      stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c (%s)" % name)
	return sub, rc, load_report(js) if os.path.exists(js) else None


def stack_key(s):
	"""A stack as (api, frames), frames by module and file offset: the same in two runs."""
	return (s.get("api"), tuple((os.path.basename(f.get("module") or ""), f.get("offset"))
				    for f in s.get("frames") or []))


def same_reports(a, b):
	"""Differences between the moved and the entry placement's reports."""
	errs = []
	ta, tb = a.get("totals") or {}, b.get("totals") or {}
	for k in ("outstanding_bytes", "outstanding_allocs", "allocs", "frees", "dropped"):
		if ta.get(k) != tb.get(k):
			errs.append("totals.%s: %r moved, %r at the entry" % (k, ta.get(k), tb.get(k)))
	fields = ("bytes", "allocs", "total_bytes", "total_allocs")
	sa = sorted((stack_key(s), tuple(s.get(f) for f in fields)) for s in a.get("stacks") or [])
	sb = sorted((stack_key(s), tuple(s.get(f) for f in fields)) for s in b.get("stacks") or [])
	if sa != sb:
		only = [x for x in sa if x not in sb][:1] + [x for x in sb if x not in sa][:1]
		errs.append("stacks differ: %d moved, %d at the entry; first difference %r" % (
			len(sa), len(sb), only))
	return errs


def placements(work):
	"""{symbol: (offset, why)} from a -v run's stderr."""
	out = {}
	for line in work.read("tracer.stderr").splitlines():
		m = PROBE_AT.match(line)
		if m:
			out[m.group(1)] = (int(m.group(3)), m.group(4))
	return out


def placement_case(command, vname, source, moved, aliases=None, check=None):
	def run(work):
		cmd = command.replace("{V}", VICTIMS).replace("{TC}", TCMALLOC).replace("{JE}", JEMALLOC)
		subs = []
		try:
			return compare_placements(work, subs, cmd, victim(vname), source, moved,
						  aliases, check)
		finally:
			for sub in subs:
				sub.close()
	return run


def compare_placements(work, subs, cmd, binary, source, moved, aliases, check):
	errs, reports = [], {}
	for name, at_entry in (("moved", False), ("entry", True)):
		sub, rc, rep = placement_run(work, subs, name, cmd, at_entry)
		truth = read_truth(sub)
		sub_errs = []
		if rep is None:
			sub_errs.append("no JSON report written")
		else:
			sub_errs += check_report(rep, truth, binary, source, aliases=aliases)
		if check:
			sub_errs += check(sub, truth)
		common_checks(sub, rc, 0, sub_errs)
		errs += ["%s: %s" % (name, e) for e in sub_errs]
		reports[name] = (sub, rep)
	(moved_work, a), (entry_work, b) = reports["moved"], reports["entry"]
	if a is not None and b is not None:
		errs += same_reports(a, b)
	at = placements(moved_work)
	for fn in moved:
		if fn not in at:
			errs.append("moved: -v names no placement for %s" % fn)
		elif at[fn][0] == 0:
			errs.append("moved: %s stayed at its entry (%s)" % (fn, at[fn][1]))
	for fn, (off, why) in sorted(placements(entry_work).items()):
		if off:
			errs.append("entry: %s probed at +%d despite MEMLEAKBPF_PROBE_AT_ENTRY" % (fn, off))
	return errs


CASES = [
	("placement_glibc", TRACE, [],
	 placement_case("{V}/v_apis", "v_apis", "v_apis.c",
			["free", "aligned_alloc", "posix_memalign", "valloc", "pvalloc"])),
	("placement_glibc_cxx", TRACE, [],
	 placement_case("{V}/v_cxx", "v_cxx", "v_cxx.cc", ["free"])),
	("placement_tcmalloc", TRACE, [TCMALLOC],
	 placement_case("env LD_PRELOAD={TC} {V}/v_basic", "v_basic", "v_basic.c", ["free", "malloc"],
			check=uses_allocator(TCMALLOC))),
	("placement_tcmalloc_cxx", TRACE, [TCMALLOC],
	 placement_case("env LD_PRELOAD={TC} {V}/v_cxx", "v_cxx", "v_cxx.cc", ["free", "_Znwm"],
			check=uses_allocator(TCMALLOC))),
	("placement_jemalloc", TRACE, [JEMALLOC],
	 placement_case("env LD_PRELOAD={JE} {V}/v_basic", "v_basic", "v_basic.c", ["free", "malloc"],
			check=uses_allocator(JEMALLOC))),
	("placement_jemalloc_cxx", TRACE, [JEMALLOC],
	 placement_case("env LD_PRELOAD={JE} {V}/v_cxx", "v_cxx", "v_cxx.cc", ["free", "_Znwm"],
			check=uses_allocator(JEMALLOC))),
]
