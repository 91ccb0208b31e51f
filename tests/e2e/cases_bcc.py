# SPDX-License-Identifier: GPL-2.0
"""The options of bcc's memleak (and libbpf-tools'), as memleakbpf has them.

-a/--show-allocs: each stack's live blocks, against the addresses the victim
(v_allocs) noted, the oldest first, bounded by --allocs-per-stack; -t/--trace:
the victim's calls, in order, with their sizes and addresses, none after the
final report's first line; --symbols-prefix: a victim linked with a prefixed
allocator (v_prefix: pfx_malloc...), exact, alone or with -O; --combined-only
and --wa-missing-free accepted (what memleakbpf always does), --sort count;
and the usage errors: --percpu refused in one line, the options that need
another.
"""

import re

from lib import (ERROR, TRACE, command_case, error_case, load_report, truth_notes, victim)

TRACE_LINE = re.compile(r"^trace (\d+\.\d{6}) pid=(\d+) tid=(\d+) (\S+) size=(\d+|\?) "
			r"addr=(0x[0-9a-f]+|0)(?: old=(0x[0-9a-f]+))?$")
TRACING_PID = re.compile(r"memleakbpf: tracing pid (\d+)")
REPORT_HEAD = re.compile(r"^\[\d\d:\d\d:\d\d\] memleakbpf: ")


def addrs(text):
	"""The victim's "0x..,0x.." (%p) as integers."""
	return [int(a, 16) for a in text.split(",") if a]


def stacks_of(rep, fn):
	return [s for s in rep["stacks"] if s["frames"] and s["frames"][0].get("function") == fn]


def check_blocks(shown):
	"""v_allocs's blocks in the JSON and the text, at most `shown` a stack (None: all)."""
	def check(work, truth):
		notes, rep = truth_notes(work), load_report(work.path("report.json"))
		keep, pair = addrs(notes.get("blocks_keep", "")), addrs(notes.get("blocks_pair", ""))
		if len(keep) != 4 or len(pair) != 2:
			return ["the victim noted no blocks (%r)" % notes]
		errs = []
		ks = stacks_of(rep, "site_keep")
		if len(ks) != 1 or "blocks" not in ks[0]:
			return ["site_keep: %d stacks, or no \"blocks\" in its JSON" % len(ks)]
		got = [int(b["address"], 16) for b in ks[0]["blocks"]]
		want = keep[:shown] if shown else keep
		if got != want:
			errs.append("site_keep's blocks %s, expected the oldest first %s" % (
				[hex(a) for a in got], [hex(a) for a in want]))
		if ks[0]["blocks_live"] != 4:
			errs.append("site_keep: blocks_live %s, expected 4" % ks[0]["blocks_live"])
		sizes = [b["size"] for b in ks[0]["blocks"]]
		if sizes != [101 + i for i in range(len(sizes))]:
			errs.append("site_keep's sizes %s, expected 101, 102..." % sizes)
		ages = [b["age_s"] for b in ks[0]["blocks"]]
		if ages != sorted(ages, reverse=True) or (len(ages) > 1 and ages[0] - ages[-1] < 0.015):
			errs.append("site_keep's ages %s: not the oldest first, 20 ms apart" % ages)
		ps = sorted(int(b["address"], 16) for s in stacks_of(rep, "site_pair") for b in s["blocks"])
		if ps != sorted(pair):
			errs.append("site_pair's blocks %s, expected %s" % ([hex(a) for a in ps],
									  [hex(a) for a in pair]))
		out = work.read("tracer.stdout")
		for a in (want + pair):
			if not re.search(r"^        %#x  \d+ bytes  \d+\.\d{3} s old$" % a, out, re.M):
				errs.append("no text line for block %#x under its stack" % a)
		# INTERVAL 0.1: the periodic reports show them too (a report shows stacks with -a).
		if out.count("live blocks") < 2 * 2:
			errs.append("%d 'live blocks' lines: not in the periodic reports" % out.count("live blocks"))
		return errs
	return check


def victim_calls(notes):
	"""v_allocs's "# calls:" as (api, size, addr, old) in order."""
	calls = []
	for c in notes.get("calls", "").split(";"):
		f = c.split(":")
		calls.append((f[0], int(f[1]), int(f[2], 16), int(f[3], 16) if len(f) > 3 else 0))
	return calls


def check_trace(work, truth):
	"""The victim's calls, in order, among its trace lines; every line whole; none after the final report began."""
	out, err = work.read("tracer.stdout").splitlines(), work.read("tracer.stderr")
	m = TRACING_PID.search(err)
	want = victim_calls(truth_notes(work))
	if not m or len(want) != 7:
		return ["no tracing line, or the victim noted no calls"]
	pid, errs, events, final_at, last_t = int(m.group(1)), [], [], None, 0.0
	for i, line in enumerate(out):
		if line.startswith("[") and "Final report" in line:
			final_at = i
		if not line.startswith("trace"):
			continue
		t = TRACE_LINE.match(line)
		if not t:
			errs.append("trace line %d not whole: %r" % (i + 1, line))
			continue
		if final_at is not None:
			errs.append("trace line %d after the final report began: %r" % (i + 1, line))
		if float(t.group(1)) < last_t:
			errs.append("trace line %d goes back in time: %r" % (i + 1, line))
		last_t = float(t.group(1))
		if int(t.group(2)) == pid and t.group(5) in ("1001", "1011", "2002", "4003"):
			events.append((t.group(4), int(t.group(5)), int(t.group(6), 16),
				       int(t.group(7), 16) if t.group(7) else 0))
	if events != want:
		errs.append("the victim's calls traced as %s, expected %s" % (events, want))
	if final_at is None:
		errs.append("no final report on standard output")
	return errs


def whole_reports(lines):
	"""After a trace line comes another, a report's first line, or the end: none inside a report."""
	errs, reports = [], sum(1 for l in lines if REPORT_HEAD.match(l))
	for i, line in enumerate(lines[:-1]):
		nxt = lines[i + 1]
		if line.startswith("trace") and not (nxt.startswith("trace") or REPORT_HEAD.match(nxt)):
			errs.append("line %d, inside a report, follows a trace line: %r" % (i + 2, nxt))
	if reports < 3:
		errs.append("%d reports: too few to show trace lines kept out of them" % reports)
	return errs[:3]


def check_trace_lost(work, truth):
	"""A ring too small: lines lost, said where and in all, and every call a line or lost."""
	out, err = work.read("tracer.stdout"), work.read("tracer.stderr")
	here = [int(n) for n in re.findall(r"^trace: (\d+) lines lost here: the ring \(4 KiB\) was full "
					   r"\(--trace-buffer\)$", out, re.M)]
	total = re.search(r"-t: (\d+) trace lines lost, the ring \(4 KiB\) full: raise --trace-buffer", err)
	allocs = re.search(r"allocs=(\d+)", truth_notes(work).get("total", ""))
	lines = len([l for l in out.splitlines() if TRACE_LINE.match(l)])
	if not here or not total or not allocs:
		return ["no lines said lost (%d here, %r at the end), or no total from the victim" % (
			len(here), total and total.group(0))]
	errs = []
	if sum(here) != int(total.group(1)):
		errs.append("lost %d in the stream, %s at the end" % (sum(here), total.group(1)))
	# Each of the victim's mallocs and frees is a line or lost (the C library's calls add more).
	errs += whole_reports(out.splitlines())
	calls = 2 * int(allocs.group(1)) - sum(t["allocs"] for t in truth)
	if lines + sum(here) < calls:
		errs.append("%d lines + %d lost < the victim's %d mallocs and frees" % (
			lines, sum(here), calls))
	return errs


def check_prefix_line(work, truth):
	"""The tracing line names the prefixed malloc and the victim that defines it."""
	if not re.search(r"memleakbpf: tracing pid \d+: \d+ allocation functions, pfx_malloc from "
			 r"\S+/v_prefix;", work.read("tracer.stderr")):
		return ["the tracing line does not name pfx_malloc in v_prefix"]
	return []


def check_sort_count(work, truth):
	"""--sort count: v_basic's site_malloc (5 blocks of 48 bytes) leads."""
	out = work.read("tracer.stdout")
	first = re.search(r"^Site 1: .* at (\w+) ", out, re.M)
	errs = []
	if "sites by outstanding allocations" not in out or not first or first.group(1) != "site_malloc":
		errs.append("--sort count: site 1 is %s, expected site_malloc, by allocations" % (
			first.group(1) if first else None))
	if load_report(work.path("report.json")).get("sort") != "count":
		errs.append("the JSON does not say \"sort\": \"count\"")
	return errs


CASES = [
	("bcc_show_allocs", TRACE, [],
	 command_case("{V}/v_allocs", "v_allocs", "v_allocs.c", 0,
		      ["-a", "--allocs-per-stack", "2", "0.1"], check_blocks(2))),
	("bcc_show_allocs_all", TRACE, [],
	 command_case("{V}/v_allocs", "v_allocs", "v_allocs.c", 0,
		      ["--show-allocs", "--allocs-per-stack", "all", "0.1"], check_blocks(None))),
	("bcc_trace", TRACE, [],
	 command_case("{V}/v_allocs", "v_allocs", "v_allocs.c", 0, ["-t", "0.1"], check_trace)),
	("bcc_trace_lost", TRACE, [],
	 command_case("{V}/v_churn 8 300 4", "v_churn", "v_churn.c", 0,
		      ["-t", "--trace-buffer", "4K", "0.02"], check_trace_lost)),
	("bcc_symbols_prefix", TRACE, [],
	 command_case("{V}/v_prefix", "v_prefix", "v_prefix.c", 0, ["--symbols-prefix", "pfx_"],
		      check_prefix_line)),
	("bcc_symbols_prefix_obj", TRACE, [],
	 command_case("{V}/v_prefix", "v_prefix", "v_prefix.c", 0,
		      ["-S", "pfx_", "-O", victim("v_prefix")])),
	("bcc_combined_wa", TRACE, [],
	 command_case("{V}/v_basic", "v_basic", "v_basic.c", 0,
		      ["--combined-only", "--wa-missing-free", "-C", "-F"])),
	("bcc_sort_count", TRACE, [],
	 command_case("{V}/v_basic", "v_basic", "v_basic.c", 0, ["--sort", "count"],
		      check_sort_count)),

	("err_percpu", ERROR, [], error_case(lambda: ["--percpu", "-c", "true"])),
	("err_allocs_per_stack_alone", ERROR, [],
	 error_case(lambda: ["--allocs-per-stack", "3", "-c", "true"])),
	("err_allocs_per_stack_zero", ERROR, [],
	 error_case(lambda: ["-a", "--allocs-per-stack", "0", "-c", "true"])),
	("err_trace_buffer", ERROR, [],
	 error_case(lambda: ["-t", "--trace-buffer", "5000", "-c", "true"])),
	("err_trace_buffer_alone", ERROR, [],
	 error_case(lambda: ["--trace-buffer", "1M", "-c", "true"])),
	("err_symbols_prefix", ERROR, [],
	 error_case(lambda: ["--symbols-prefix", "je-", "-c", "true"])),
	("err_sort", ERROR, [], error_case(lambda: ["--sort", "age", "-c", "true"])),
]
