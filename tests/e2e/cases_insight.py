# SPDX-License-Identifier: GPL-2.0
"""Leak or not: trends, churn, fragmentation, the peak and the timeline.

Growth ranking, fragmentation verdict, churn, peak and the timeline, on
victims whose behaviour is known: v_trend (a slow leak next to a big stable
cache, heavy churn and a draining pool), v_frag (glibc fragmentation: 1 GiB
allocated by 4 threads, 90% freed interleaved; malloc_trim(0) on SIGUSR2)
and v_peak (a peak mid-run, freed). Reports every 0.5 s, so that trends
have points. And what a verdict may not say: "not a leak" before the live
blocks' trend is known (v_frag's first reports), or "fragmentation" and
"no leak" about figures a full block table made incomplete (v_drip: a leak
of 400,000 blocks under --max-allocs 65536); the advice of the allocator
in use (v_frag under tcmalloc and jemalloc).
"""

import os
import re
import signal
import subprocess
import time

import lib
from lib import (CaseFailed, ERROR, SVG, TRACE, TRACER, VICTIM_FN, check_report, command_case,
	common_checks, error_case, find_line, fn_name, load_report, read_truth, svg_refers_outside,
	tracer_env, truth_notes, victim, wait_exit, wait_for)


INSIGHT_INTERVAL = "0.5"
FINAL_MARK = "memleakbpf: Final report:"


def by_site(stacks):
	"""{frames[0] function: its biggest stack} of the victim's sites.

	Under -p, a block allocated while the attach completes can be walked
	shorter, a second stack of the site: the biggest is the site's own."""
	out = {}
	for s in stacks:
		frames = s.get("frames") or []
		if not frames or not VICTIM_FN.match(fn_name(frames[0])):
			continue
		fn = fn_name(frames[0])
		if fn not in out or s["bytes"] > out[fn]["bytes"]:
			out[fn] = s
	return out


def final_text(work):
	text = work.read("tracer.stdout")
	i = text.rfind(FINAL_MARK)
	if i < 0:
		raise CaseFailed("no final text report on stdout")
	return text[i:]


def read_timeline(path):
	"""--timeline rows as dicts of numbers (None for an empty field)."""
	try:
		with open(path) as f:
			lines = f.read().splitlines()
	except FileNotFoundError:
		raise CaseFailed("no timeline at %s" % path)
	head = "t_s,live_bytes,rss_bytes,anon_bytes,heap_bytes,arena_bytes,allocs_per_s,frees_per_s"
	if not lines or lines[0] != head:
		raise CaseFailed("timeline header %r" % (lines[:1],))
	rows = []
	for line in lines[1:]:
		vals = line.split(",")
		rows.append({k: (float(v) if v else None) for k, v in zip(head.split(","), vals)})
	return rows


def check_timeline_svg(path):
	"""The --timeline-svg file: XML, the two lines, nothing outside itself."""
	import xml.etree.ElementTree as ET
	try:
		root = ET.parse(path).getroot()
	except (ET.ParseError, FileNotFoundError) as e:
		return ["%s: not a readable SVG: %s" % (path, e)]
	errs = []
	classes = [p.get("class") for p in root.iter(SVG + "polyline")]
	for c in ("live", "rss"):
		if c not in classes:
			errs.append("%s: no %s line" % (path, c))
	if svg_refers_outside(root) or list(root.iter(SVG + "script")):
		errs.append("%s: refers to something outside itself, or has a script" % path)
	return errs


def check_trend(work, truth):
	"""v_trend: the leak is the one growing stack, ranked first; cache stable; churn leads."""
	rep = load_report(work.path("report.json"))
	notes = truth_notes(work)
	sites = by_site(rep["stacks"])
	errs = []
	leak, cache, pool = sites.get("site_leak"), sites.get("site_cache"), sites.get("site_pool")
	if not (leak and cache and pool):
		return ["stacks lack site_leak, site_cache or site_pool: %s" % sorted(sites)]
	rate = float(notes["leak_bytes_per_s"])
	if leak.get("trend") != "growing" or leak.get("leak_rank") != 1:
		errs.append("site_leak: trend %r, rank %r; expected growing, 1" % (
			leak.get("trend"), leak.get("leak_rank")))
	if not abs(leak.get("slope_bytes_per_s", 0) - rate) <= 0.15 * rate:
		errs.append("site_leak: slope %r B/s, truth %d" % (leak.get("slope_bytes_per_s"), rate))
	# The final interval may hold no tick: the victim sleeps one before it exits.
	if leak.get("intervals", 0) < 8 or leak.get("grew_intervals", 0) < leak["intervals"] - 1 or \
	   (leak.get("r2") or 0) < 0.98:
		errs.append("site_leak: grew in %r of %r intervals, R2 %r" % (
			leak.get("grew_intervals"), leak.get("intervals"), leak.get("r2")))
	if (leak.get("oldest_age_s") or 0) < 0.8 * rep["duration_s"]:
		errs.append("site_leak: oldest block %r s old, traced %r s" % (
			leak.get("oldest_age_s"), rep["duration_s"]))
	if leak.get("renewed") is not False:
		errs.append("site_leak: renewed %r, though it never frees" % leak.get("renewed"))
	if cache.get("trend") != "stable" or cache.get("leak_rank") is not None:
		errs.append("site_cache: trend %r, rank %r; expected stable" % (
			cache.get("trend"), cache.get("leak_rank")))
	if pool.get("trend") != "shrinking":
		errs.append("site_pool: trend %r, expected shrinking" % pool.get("trend"))
	growing = [s for s in rep["stacks"] if s.get("trend") == "growing"]
	if len(growing) != 1:
		errs.append("%d growing stacks, expected 1 (site_leak)" % len(growing))
	ranked = [s for s in rep.get("sites") or [] if s.get("leak_rank")]
	if len(ranked) != 1 or fn_name(ranked[0]["frame"] or {}) != "site_leak" or \
	   (ranked[0]["leak_rank"], ranked[0]["growing_stacks"]) != (1, 1):
		errs.append("growing sites %s, expected site_leak alone, ranked 1" % [
			fn_name(s["frame"] or {}) for s in ranked])
	if rep["stacks"][0] is not cache:
		errs.append("the first stack by bytes is not site_cache")
	errs += check_churn(rep, notes)
	if (rep.get("memory") or {}).get("verdict") != "leak":
		errs.append("memory.verdict %r, expected leak" % (rep.get("memory") or {}).get("verdict"))
	errs += check_trend_text(work)
	rows = read_timeline(work.path("timeline.csv"))
	if len(rows) < 8 or [r["t_s"] for r in rows] != sorted(r["t_s"] for r in rows):
		errs.append("timeline: %d rows, or not in time order" % len(rows))
	elif rows[-1]["live_bytes"] != rep["totals"]["outstanding_bytes"]:
		errs.append("timeline: last live %r, the report's %r" % (
			rows[-1]["live_bytes"], rep["totals"]["outstanding_bytes"]))
	return errs + check_timeline_svg(work.path("timeline.svg"))


def check_churn(rep, notes):
	churn = rep.get("churn") or []
	if not churn or fn_name(churn[0]["frames"][0]) != "site_churn":
		return ["churn[0] is %s, expected site_churn" % (
			fn_name(churn[0]["frames"][0]) if churn else "missing")]
	calls = int(notes["churn_calls"])
	c = churn[0]
	errs = []
	if c["total_allocs"] != calls or c["bytes"] != 0:
		errs.append("site_churn: %d calls, %d bytes outstanding; truth %d, 0" % (
			c["total_allocs"], c["bytes"], calls))
	if not abs(c["allocs_per_s"] - calls / rep["duration_s"]) <= 0.1 * calls / rep["duration_s"]:
		errs.append("site_churn: %r calls/s, expected about %d" % (
			c["allocs_per_s"], calls / rep["duration_s"]))
	return errs


def check_trend_text(work):
	"""A person sees the leak first: the Growing section, before the stacks by bytes."""
	text = final_text(work)
	errs = []
	grow = text.find("\nGrowing: 1 site")
	first = text.find("\n  1. ", grow)
	listing = text.find("sites by outstanding bytes (")
	churn = text.find("\nChurn: ")
	if grow < 0 or listing < 0 or not grow < first < listing < churn:
		return ["final text: no Growing section before the stacks by bytes, or no Churn after"]
	if "      #0 site_leak " not in text[first:listing].split("\n  2. ")[0]:
		errs.append("final text: the first growing stack is not site_leak")
	if not re.search(r"\n  32\.0 MiB \(33,554,432 bytes\) in 8,192 allocations from malloc\n"
			 r"      stable: ", text):
		errs.append("final text: site_cache is not listed as stable")
	if not re.search(r"\nChurn: [^\n]*\n  1\. [\d,]+ calls/s[^\n]*\n      at site_churn ", text):
		errs.append("final text: site_churn does not lead the churn")
	if "\nVerdict: leak: 1 site grows steadily (1 stack)" not in text:
		errs.append("final text: no leak verdict")
	return errs


def insight_case(vname, check, extra=()):
	"""-c vname, reports every 0.5 s, with the timeline files."""
	def run(work):
		cmd = "{V}/" + vname + (" " + " ".join(extra) if extra else "")
		return command_case(cmd, vname, vname + ".c", extra_args=[
			"--timeline", "{W}/timeline.csv", "--timeline-svg", "{W}/timeline.svg",
			INSIGHT_INTERVAL], check=check)(work)
	return run


def check_renew(work, truth):
	"""v_renew: a pool growing a slot a tick, each slot's block made again every tick:
	growing, with none of its blocks older than an interval, and the verdict says that
	what grows is how many are held at once, not blocks never freed."""
	rep = load_report(work.path("report.json"))
	renew = by_site(rep["stacks"]).get("site_renew")
	want = int(truth_notes(work)["ticks"]) * 4096
	held = sum(s["bytes"] for s in rep["stacks"]
		   if s.get("frames") and fn_name(s["frames"][0]) == "site_renew")
	errs = []
	if held != want:
		errs.append("site_renew: %r bytes outstanding, truth %d" % (held, want))
	if not renew or renew.get("trend") != "growing" or renew.get("renewed") is not True:
		errs.append("site_renew's biggest stack: trend %r, renewed %r; expected growing, true" % (
			renew and renew.get("trend"), renew and renew.get("renewed")))
	text = final_text(work)
	if not re.search(r"\nVerdict: [^\n]*\n  of it \+[\d.]+ KiB/s in stacks none of whose blocks is "
			 r"older than a report interval: they\n  free and make them again", text):
		errs.append("final text: the verdict does not say the growing blocks are renewed")
	if not re.search(r"oldest block [\d.]+ s old, none older than a report interval: now", text):
		errs.append("final text: site_renew's growth line does not say its blocks are renewed")
	return errs


def check_few_reports(work, truth):
	"""v_trend 1500 1000, a report every 0.5 s: the leak grows for two reports of
	four, then holds. A verdict that sees no leak says it judged over few reports."""
	verdict = re.search(r"\nVerdict: ([^\n]*)", final_text(work))
	if not verdict:
		return ["final text: no verdict"]
	v = verdict.group(1)
	if v.startswith("no leak seen") and \
	   not re.search(r", over \d reports only \(a growth that ended within them may not show", v):
		return ["final verdict %r: no leak seen, without saying it judged over few reports" % v]
	return []


def check_stopped(work, truth):
	"""v_trend MS LEAK_MS: the leak stops half-way; the final verdict says it grew, then stopped."""
	rep = load_report(work.path("report.json"))
	notes = truth_notes(work)
	leak = by_site(rep["stacks"]).get("site_leak")
	mem = rep.get("memory") or {}
	grew = mem.get("grew") or {}
	errs = []
	want = int(notes["leak_ticks"]) * 2048
	if not leak or leak.get("bytes") != want:
		errs.append("site_leak: %r bytes outstanding, truth %d" % (
			leak and leak.get("bytes"), want))
	elif leak.get("trend") == "growing":
		errs.append("site_leak still growing at the end, though it stopped at half-way")
	if mem.get("verdict") != "stopped":
		errs.append("memory.verdict %r, expected stopped" % mem.get("verdict"))
	# Named while it grew (from the 3rd report on), and no later than the end.
	if not grew or grew.get("stacks", 0) < 1 or \
	   not 0 < grew.get("from_s", 0) <= grew.get("to_s", 0) <= rep["duration_s"]:
		errs.append("memory.grew %r: not a leak named between the start and the end" % grew)
	text = final_text(work)
	if not re.search(r"\nVerdict: grew, then stopped: the reports from [\d.]+ s to [\d.]+ s "
			 r"named a leak\n  \(\d+ stacks? growing steadily", text):
		errs.append("final text: no \"grew, then stopped\" verdict")
	if re.search(r"\nVerdict: no leak seen", text):
		errs.append("final text says no leak seen")
	# Where it grew, by name: the leak's site, the most leak-like stack's while it grew.
	site = grew.get("site") or {}
	line = [int(t["line"]) for t in truth if t["site"] == "site_leak"][:1] or [None]
	if (site.get("function"), site.get("line")) != ("site_leak", line[0]):
		errs.append("memory.grew.site %r, expected site_leak at line %s" % (site, line[0]))
	if not re.search(r"\), the most leak-like at site_leak \([^\n]*v_trend\.c:%s\);\n" %
			 line[0], text):
		errs.append("final text does not name site_leak at its line as the most leak-like")
	return errs


def check_peak(work, truth):
	"""v_peak: the peak's breakdown names site_peak and site_ramp with their exact bytes."""
	rep = load_report(work.path("report.json"))
	notes = truth_notes(work)
	peak = rep.get("peak")
	if not peak:
		return ["no peak in the report"]
	at = by_site(peak["stacks"])
	want = {"site_peak": int(notes["peak_peak_bytes"]), "site_ramp": int(notes["peak_ramp_bytes"]),
		"site_small": int(notes["peak_small_bytes"])}
	errs = ["peak: %s holds %r bytes, truth %d" % (k, at.get(k, {}).get("bytes"), v)
		for k, v in sorted(want.items()) if at.get(k, {}).get("bytes") != v]
	if fn_name(peak["stacks"][0]["frames"][0]) != "site_peak":
		errs.append("peak: the first stack is not site_peak")
	if peak["bytes"] < sum(want.values()) or peak["sample_interval_s"] != 0.1:
		errs.append("peak: %r bytes sampled every %r s; truth at least %d, every 0.1 s" % (
			peak["bytes"], peak["sample_interval_s"], sum(want.values())))
	if not 0.5 < peak["t_s"] < rep["duration_s"] - 1:
		errs.append("peak at %r s: not mid-run (%r s traced)" % (peak["t_s"], rep["duration_s"]))
	text = final_text(work)
	if not re.search(r"\nPeak: [^\n]*\n[^\n]*\n  1\. 48\.0 MiB \(50,331,648 bytes\) in 12 "
			 r"allocations from malloc\n      at site_peak ", text):
		errs.append("final text: the Peak section does not start with site_peak's 48.0 MiB")
	return errs + check_timeline_svg(work.path("timeline.svg"))


def wait_text(work, pattern, count, deadline, alive, what):
	"""Until the tracer's stdout holds count matches of pattern."""
	return wait_for(lambda: len(re.findall(pattern, work.read("tracer.stdout"))) >= count,
			deadline, what, alive=alive)


# "not a leak", unless reports named one while v_frag filled its gigabyte
# (a slow machine stretches the fill over the reports a trend needs; a
# single one says "the report at 2.0 s").
FRAG_VERDICT = (r"\nVerdict: fragmentation(, not a leak|: the allocator holds memory that no live "
		r"block uses\.\n  And the report(s from [\d.]+ s to| at) [\d.]+ s named a leak\n)")


def frag_leak_said(work, text):
	"""The final fragmentation verdict may say a leak was named only if a report said leak."""
	said = re.search(r"\nVerdict: leak: ", work.read("tracer.stdout"))
	named = re.search(r"\n  And the report(s from| at) ", text) is not None
	if named and not said:
		return ["the final verdict says reports named a leak, and none did"]
	if said and not named:
		return ["reports named a leak, and the final verdict forgets it"]
	return []


def case_frag_trim(work):
	"""v_frag: the verdict says fragmentation (live ~10% of RSS), RSS falls after the trim."""
	binary = victim("v_frag")
	js = work.path("report.json")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	t = work.start([TRACER, "--json", js, "--timeline", work.path("timeline.csv"),
			"--timeline-svg", work.path("timeline.svg"), "-c", binary, INSIGHT_INTERVAL],
		       env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	line = wait_for(lambda: find_line(work.read("tracer.stdout"), "FRAGMENTED pid="), step(),
			"FRAGMENTED from v_frag", alive=t)
	pid = int(line.split("=", 1)[1])
	work.pids.append((pid, "v_frag"))
	# Two interval reports that say it once the 90% are freed, before the trim
	# (one made while the frees were still going on does not count, and one
	# may have been under way when FRAGMENTED was printed: wait for three).
	verdict = FRAG_VERDICT
	seen = len(re.findall(verdict, work.read("tracer.stdout")))
	wait_text(work, verdict, seen + 3, step(), t,
		  "two reports with the fragmentation verdict after FRAGMENTED")
	os.kill(pid, signal.SIGUSR2)
	wait_for(lambda: find_line(work.read("tracer.stdout"), "TRIMMED"), step(), "TRIMMED", alive=t)
	rc = wait_exit(t, deadline, "memleakbpf -c v_frag")
	truth = read_truth(work)
	rep = load_report(js)
	errs = check_report(rep, truth, binary, "v_frag.c")
	errs += check_frag(work, rep, truth)
	common_checks(work, rc, 0, errs)
	return errs


def check_frag(work, rep, truth):
	notes = truth_notes(work)
	live = int(notes["live_bytes"])
	m = rep.get("memory") or {}
	errs = []
	if (m.get("verdict"), m.get("released"), m.get("attached")) != ("fragmentation", True, False):
		errs.append("memory: verdict %r, released %r, attached %r; expected fragmentation, "
			    "True, False" % (m.get("verdict"), m.get("released"), m.get("attached")))
	w = m.get("max_retained_at") or {}
	if not w.get("rss_bytes") or not abs(w["live_bytes"] - live) <= 0.01 * live:
		errs.append("memory: live %r at the most retained, truth %d" % (w.get("live_bytes"), live))
	elif not 0.07 <= w["live_bytes"] / w["rss_bytes"] <= 0.13:
		errs.append("memory: live is %.1f%% of RSS at the most retained, expected about 10%%" % (
			100.0 * w["live_bytes"] / w["rss_bytes"]))
	if (w.get("arenas") or 0) < 4 or m.get("max_retained_in_heap_bytes", 0) < m.get("max_retained_bytes", 1) / 2:
		errs.append("memory: %r arena heaps, %r of %r retained in them" % (
			w.get("arenas"), m.get("max_retained_in_heap_bytes"), m.get("max_retained_bytes")))
	text = final_text(work)
	if not re.search(FRAG_VERDICT, text):
		errs.append("final text lacks the fragmentation verdict")
	errs += frag_leak_said(work, text)
	for want in ("  Given back since: ", "What helps (glibc's malloc): ", "MALLOC_ARENA_MAX"):
		if want not in text:
			errs.append("final text lacks %r" % want.strip())
	# Advised while the memory was kept; not once malloc_trim(0) gave it back.
	if "malloc_trim(0) after freeing much" in text:
		errs.append("final text advises malloc_trim after it gave the memory back")
	if "malloc_trim(0) after freeing much" not in work.read("tracer.stdout"):
		errs.append("no report advised malloc_trim(0) while the memory was kept")
	return errs + check_frag_timeline(work, live) + check_timeline_svg(work.path("timeline.svg"))


def check_frag_timeline(work, live):
	"""RSS high with live flat, then RSS down to less than half, live the same."""
	rows = [r for r in read_timeline(work.path("timeline.csv")) if r["rss_bytes"] is not None]
	flat = [r for r in rows if abs(r["live_bytes"] - live) <= 0.01 * live]
	high = [i for i, r in enumerate(flat) if r["rss_bytes"] >= 8 * live]
	if len(high) < 2:
		return ["timeline: fewer than 2 rows with live %d and RSS 8 times that: %s" % (
			live, [(r["t_s"], r["live_bytes"], r["rss_bytes"]) for r in rows])]
	low = [r for r in flat[high[-1] + 1:] if r["rss_bytes"] < flat[high[-1]]["rss_bytes"] / 2]
	if not low:
		return ["timeline: RSS never fell below half after %.1f s with live flat: %s" % (
			flat[high[-1]]["t_s"], [(r["t_s"], r["live_bytes"], r["rss_bytes"]) for r in rows])]
	return []


def case_trend_attach(work):
	"""-p on v_trend: the leak still ranks first; the verdict says it measured from the attach."""
	binary = victim("v_trend")
	js = work.path("report.json")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	v = work.start([binary, "4000"], env=tracer_env(work), stdin=subprocess.DEVNULL, tag="victim")
	t = work.start([TRACER, "--json", js, "-p", str(v.pid), INSIGHT_INTERVAL],
		       env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	vrc = wait_exit(v, deadline, "v_trend")
	rc = wait_exit(t, deadline, "memleakbpf -p after its target exited")
	rep = load_report(js)
	errs = [] if vrc == 0 else ["v_trend exited %s" % vrc]
	leak = by_site(rep["stacks"]).get("site_leak") or {}
	if leak.get("trend") != "growing" or leak.get("leak_rank") != 1:
		errs.append("site_leak: trend %r, rank %r" % (leak.get("trend"), leak.get("leak_rank")))
	m = rep.get("memory") or {}
	if not m.get("attached") or m.get("verdict") != "leak":
		errs.append("memory: attached %r, verdict %r" % (m.get("attached"), m.get("verdict")))
	if "  Measured from the attach (RSS " not in final_text(work):
		errs.append("final text does not say it measured from the attach")
	common_checks(work, rc, 0, errs)
	return errs


FRAG_EARLY_INTERVAL = "5"	# v_frag's frees end within the first or second report


def frag_early_case(preload, allocator, advice, banned):
	"""v_frag (under LD_PRELOAD=preload), reports every 5 s: its first reports
	see the allocator hold memory no live block uses, and say so, but not "not
	a leak": the live blocks' trend needs 3 reports. The advice is that of the
	allocator in use, and names nothing of another (banned)."""
	def run(work):
		binary = victim("v_frag")
		js = work.path("report.json")
		cmd = "env LD_PRELOAD=%s %s" % (preload, binary) if preload else binary
		deadline = time.monotonic() + lib.CASE_TIMEOUT
		step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
		t = work.start([TRACER, "--json", js, "-c", cmd, FRAG_EARLY_INTERVAL],
			       env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
		line = wait_for(lambda: find_line(work.read("tracer.stdout"), "FRAGMENTED pid="), step(),
				"FRAGMENTED from v_frag", alive=t)
		pid = int(line.split("=", 1)[1])
		work.pids.append((pid, "v_frag"))
		after = lambda: work.read("tracer.stdout").split(line, 1)[1]
		wait_for(lambda: "\nVerdict: " in after(), step(), "a report after FRAGMENTED", alive=t)
		os.kill(pid, signal.SIGUSR2)
		rc = wait_exit(t, deadline, "memleakbpf -c v_frag")
		rep = load_report(js)
		errs = check_report(rep, read_truth(work), binary, "v_frag.c")
		errs += check_frag_early(work, rep, after(), allocator, advice, banned)
		common_checks(work, rc, 0, errs)
		return errs
	return run


def check_frag_early(work, rep, after, allocator, advice, banned):
	out = work.read("tracer.stdout")
	first = after.split("\nVerdict: ", 1)[1].split("\n\n", 1)[0]
	m = rep.get("memory") or {}
	errs = []
	if "not a leak" in out:
		errs.append("a report says \"not a leak\" before the live blocks' trend is known")
	if not first.startswith("fragmentation: the allocator holds memory that no live block uses;\n"
				"  leak or not is not known yet: "):
		errs.append("the first report after FRAGMENTED: Verdict: %r" % first[:200])
	if (m.get("verdict"), m.get("trend_known"), m.get("allocator")) != ("fragmentation", False, allocator):
		errs.append("JSON memory: verdict %r, trend_known %r, allocator %r; expected "
			    "fragmentation, False, %s" % (m.get("verdict"), m.get("trend_known"),
							   m.get("allocator"), allocator))
	if advice not in first:
		errs.append("the first report after FRAGMENTED lacks %r" % advice)
	errs += ["a report names %r under %s" % (b, allocator) for b in banned if b in out]
	return errs


def case_overflow(work):
	"""v_drip leaks 400,000 blocks of 64 bytes over 4 s into a table of room
	for 65,536: every block is tracked or counted, and the verdict is a leak
	on incomplete figures (the untracked allocations grow), with the
	--max-allocs that holds them all; never fragmentation, "no leak" or
	"stable" about them."""
	n = 400000
	binary = victim("v_drip")
	js = work.path("report.json")
	t = work.start([TRACER, "--json", js, "--max-allocs", "65536", "-c",
			"%s %d 64 4000" % (binary, n), INSIGHT_INTERVAL],
		       env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(t, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c v_drip")
	read_truth(work)
	rep = load_report(js)
	m = rep.get("memory") or {}
	dropped = rep["totals"]["dropped"]["allocs_map_full"]
	tracked = rep["totals"]["outstanding_allocs"]
	errs = []
	if tracked + dropped != n or not dropped:
		errs.append("%d tracked + %d allocs_map_full, truth %d" % (tracked, dropped, n))
	want = {"verdict": "leak", "incomplete": True, "trend_known": False, "untracked_allocs": dropped,
		"untracked_growing": True, "suggested_max_allocs": 524288}
	got = {k: m.get(k) for k in want}
	if got != want:
		errs.append("JSON memory %r, expected %r" % (got, want))
	text = final_text(work)
	for say in ("\nVerdict: leak: more allocations went untracked in ",
		    "  The figures are incomplete: %s allocations were not tracked" % format(dropped, ","),
		    "At most 400,000 blocks were live at once, tracked or not: --max-allocs 524288 holds them"):
		if say not in text:
			errs.append("final text lacks %r" % say)
	verdicts = re.findall(r"\nVerdict: [^\n]*", work.read("tracer.stdout"))
	errs += ["a report says %r" % v.strip() for v in verdicts
		 if re.search(r"not a leak|no leak seen|fragmentation|stable", v)]
	common_checks(work, rc, 0, errs)
	return errs


GLIBC_NAMES = ("glibc", "malloc_trim", "MALLOC_ARENA_MAX", "M_TRIM_THRESHOLD")

CASES = [
	("insight_trend", TRACE, [], insight_case("v_trend", check_trend)),
	("insight_frag_trim", TRACE, [], case_frag_trim),
	("insight_peak", TRACE, [], insight_case("v_peak", check_peak)),
	("insight_leak_stopped", TRACE, [], insight_case("v_trend", check_stopped, ("8000", "4000"))),
	("insight_renewed", TRACE, [], insight_case("v_renew", check_renew, ("4000",))),
	("insight_few_reports", TRACE, [], insight_case("v_trend", check_few_reports, ("1500", "1000"))),
	("insight_trend_attach", TRACE, [], case_trend_attach),
	("insight_overflow_verdict", TRACE, [], case_overflow),
	("insight_frag_early", TRACE, [],
	 frag_early_case(None, "glibc", "What helps (glibc's malloc): malloc_trim(0)",
			 ("tcmalloc keeps", "TCMALLOC_", "MALLOC_CONF"))),
	("insight_frag_tcmalloc", TRACE, [lib.TCMALLOC],
	 frag_early_case(lib.TCMALLOC, "tcmalloc", "What helps (tcmalloc): MallocExtension::instance()"
			 "->ReleaseFreeMemory()", GLIBC_NAMES + ("MALLOC_CONF",))),
	("insight_frag_jemalloc", TRACE, [lib.JEMALLOC],
	 frag_early_case(lib.JEMALLOC, "jemalloc", "MALLOC_CONF=dirty_decay_ms:0,muzzy_decay_ms:0",
			 GLIBC_NAMES + ("TCMALLOC_",))),
	("err_timeline_dir_missing", ERROR, [],
	 error_case(lambda: ["--timeline", "/nonexistent-memleakbpf-e2e/t.csv", "-c", "true"])),
	("err_timeline_svg_is_dir", ERROR, [],
	 error_case(lambda: ["--timeline-svg", "/tmp", "-c", "true"])),
]
