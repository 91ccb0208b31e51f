# SPDX-License-Identifier: GPL-2.0
"""Judgement that agrees with the exact figures: the peak, heap and mmaps, the verdict at exit.

v_spike (a 20 ms peak of 48 MiB beside an 8 MiB mmap): the peak the probes
keep is exact, of heap blocks, the mmaps apart in the headline and the JSON.
Real programs (sqlite3 running a script, jq on a big JSON, gawk) against
valgrind's massif (--heap-admin=0 --peak-inaccuracy=0.0): the heap's peak
within 1%. The verdict at exit: make demo's leak keeps its trend though the
demo's last interval is flat; a short command's leak is never passed over.
"""

import json
import os
import random
import re
import shlex
import subprocess
import time

import lib
from cases_insight import final_text
from lib import (CaseFailed, TRACE, TRACER, command_case, load_report, truth_notes, victim,
	tracer_env, wait_exit)


MASSIF_TOLERANCE = 0.01
VALGRIND = "/usr/bin/valgrind"


def verdict_block(text):
	"""The Verdict line and the indented lines after it."""
	m = re.search(r"\nVerdict: [^\n]*\n(?:  [^\n]*\n)*", text)
	return m.group(0) if m else ""


def check_spike(work, truth):
	"""The heap's peak exact though it lasted 20 ms; the mmap apart everywhere."""
	rep = load_report(work.path("report.json"))
	notes = truth_notes(work)
	heap_peak, mmap_peak = int(notes["peak_heap_bytes"]), int(notes["peak_mmap_bytes"])
	t = rep["totals"]
	errs = []
	got = (t.get("peak_heap_bytes"), t.get("peak_mmap_bytes"), t.get("heap_bytes"),
	       t.get("heap_allocs"), t.get("mmap_bytes"), t.get("mmap_allocs"))
	want = (heap_peak, mmap_peak, 10240, 10, mmap_peak, 1)
	if got != want:
		errs.append("totals: peaks heap %r mmap %r, heap %r in %r, mmaps %r in %r; truth %r" %
			    (got + (want,)))
	p = rep.get("peak") or {}
	if p.get("bytes") != heap_peak or p.get("exact") is not True or p.get("mmap_bytes") != mmap_peak:
		errs.append("peak: %r bytes (exact %r), mmaps %r; truth %d and %d" % (
			p.get("bytes"), p.get("exact"), p.get("mmap_bytes"), heap_peak, mmap_peak))
	if not 0 < p.get("stacks_bytes", -1) <= heap_peak:
		errs.append("peak: its stacks hold %r bytes, not within the peak" % p.get("stacks_bytes"))
	if p.get("stacks_bytes") == heap_peak and lib.fn_name(p["stacks"][0]["frames"][0]) != "site_spike":
		errs.append("peak: sampled whole, but the first stack is not site_spike")
	at_exit = (rep.get("memory") or {}).get("at_exit") or {}
	if (at_exit.get("heap_bytes"), at_exit.get("mmap_bytes")) != (10240, mmap_peak):
		errs.append("memory.at_exit: %r" % at_exit)
	text = final_text(work)
	if "\nPeak: 48.0 MiB (50,341,888 bytes) of heap blocks at " not in text or \
	   "exact (the probes keep the high-water mark); mmaps apart: peak 8.0 MiB at " not in text:
		errs.append("final text: no exact Peak line of 50,341,888 bytes with the mmaps apart")
	if "\n  of which heap blocks 10.0 KiB in 10, mmaps 8.0 MiB in 1 (not heap" not in text:
		errs.append("final text: the headline does not part heap blocks and mmaps")
	return errs


def check_oneshot(work, truth):
	"""Reports every 0.1 s see a flat stack; what is left at exit is still named."""
	rep = load_report(work.path("report.json"))
	m = rep.get("memory") or {}
	errs = []
	at_exit = m.get("at_exit") or {}
	if (at_exit.get("heap_bytes"), at_exit.get("heap_allocs")) != (30000, 1):
		errs.append("memory.at_exit: %r, truth 30000 bytes in 1 block" % at_exit)
	block = verdict_block(final_text(work))
	said = "29.3 KiB in 1 heap block still outstanding at exit: never freed; see the sites below"
	if m.get("verdict") != "leak" and said not in block:
		errs.append("final verdict %r says nothing of the 30,000 bytes left at exit: %r" % (
			m.get("verdict"), block))
	if "+0 B since tracing began" in block:
		errs.append("final verdict: +0 B since tracing began, with 30,000 bytes outstanding")
	return errs


def case_demo(work):
	"""make demo's run: parse_header grew in 3 of its 4 intervals, then the demo exited: a leak."""
	js = work.path("report.json")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	t = work.start([TRACER, "--json", js, "-c", victim("demo_leaky"), "1"],
		       env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(t, deadline, "memleakbpf -c demo_leaky")
	errs = [] if rc == 0 else ["exit status %s" % rc]
	rep = load_report(js)
	m = rep.get("memory") or {}
	if m.get("verdict") != "leak":
		errs.append("verdict %r, not leak" % m.get("verdict"))
	lead = [s for s in rep["stacks"] if s.get("leak_rank") == 1]
	if not lead or lib.fn_name(lead[0]["frames"][0]) != "parse_header" or lead[0]["bytes"] != 102400:
		errs.append("the first growing stack is not parse_header's 102,400 bytes")
	if "\nVerdict: leak: 1 site grows steadily (1 stack)" not in final_text(work):
		errs.append("final text: no leak verdict")
	return errs


# ---------------------------------------------------------------- massif

def write_inputs(work):
	"""A SQL script, a big JSON document and a word list, made the same way each time."""
	rnd = random.Random(18)
	with open(work.path("script.sql"), "w") as f:
		f.write("create table t(a integer primary key, b text, c real);\n"
			"with recursive n(x) as (select 1 union all select x+1 from n where x<50000)\n"
			"  insert into t select x, hex(randomblob(20)), x*1.5 from n;\n"
			"create index tb on t(b);\n"
			"select count(*), sum(length(b)) from t group by a % 10 order by 1 limit 3;\n"
			"select b from t order by c desc limit 2;\n")
	doc = [{"id": i, "name": "item%d" % i, "tags": ["t%d" % (i % 7), "u%d" % (i % 13)],
		"v": rnd.random(), "nested": {"a": i % 5, "b": str(i) * 3}} for i in range(60000)]
	with open(work.path("big.json"), "w") as f:
		json.dump(doc, f)
	with open(work.path("words.txt"), "w") as f:
		for i in range(200000):
			f.write("w%d x%d y%d\n" % (i % 5000, i % 37, i))
	with open(work.path("count.awk"), "w") as f:
		f.write("{ c[$1]++; s[$2] = s[$2] $3 } END { n = 0; for (k in c) n++; print n, length(s) }\n")


def massif_peak(work, argv):
	"""The peak of massif's snapshots (mem_heap_B), requested sizes only."""
	out = work.path("massif.out")
	r = subprocess.run([VALGRIND, "--tool=massif", "--peak-inaccuracy=0.0", "--pages-as-heap=no",
			    "--heap-admin=0", "--massif-out-file=" + out] + argv, cwd=work.dir,
			   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=lib.CASE_TIMEOUT)
	with open(out) as f:
		peaks = [int(v) for v in re.findall(r"mem_heap_B=(\d+)", f.read())]
	if r.returncode or not peaks:
		raise CaseFailed("massif on %s: exit %s, %d snapshots" % (argv[0], r.returncode, len(peaks)))
	return max(peaks)


def massif_case(argv_fn):
	"""memleakbpf -c and massif on one real program: the heap's peak within 1%."""
	def run(work):
		write_inputs(work)
		argv = argv_fn(work)
		want = massif_peak(work, argv)
		js = work.path("report.json")
		t = work.start([TRACER, "--json", js, "-c", shlex.join(argv)], env=tracer_env(work),
			       stdin=subprocess.DEVNULL, tag="tracer")
		rc = wait_exit(t, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c " + argv[0])
		errs = [] if rc == 0 else ["exit status %s" % rc]
		rep = load_report(js)
		got = rep["totals"]["peak_heap_bytes"]
		lib.log("  %s: peak %d, massif %d (%+.3f%%)" % (argv[0], got, want, 100.0 * (got - want) / want))
		if abs(got - want) > MASSIF_TOLERANCE * want:
			errs.append("%s: heap peak %d, massif %d: %+.2f%%" % (argv[0], got, want,
									       100.0 * (got - want) / want))
		if rep["peak"]["bytes"] != got:
			errs.append("peak.bytes %r, totals.peak_heap_bytes %r" % (rep["peak"]["bytes"], got))
		return errs
	return run


CASES = [
	("peak_spike", TRACE, [], command_case("{V}/v_spike", "v_spike", "v_spike.c",
					       extra_args=["0.5"], check=check_spike)),
	("verdict_demo", TRACE, [], case_demo),
	("verdict_oneshot", TRACE, [], command_case("{V}/v_oneshot", "v_oneshot", "v_oneshot.c",
						    extra_args=["0.1"], check=check_oneshot)),
	("peak_massif_sqlite3", TRACE, [VALGRIND, "/usr/bin/sqlite3"],
	 massif_case(lambda w: ["/usr/bin/sqlite3", ":memory:", ".read " + w.path("script.sql")])),
	("peak_massif_jq", TRACE, [VALGRIND, "/usr/bin/jq"],
	 massif_case(lambda w: ["/usr/bin/jq", "-c", "map(select(.v > 0.5) | {id, t: .tags[0]}) | length",
				w.path("big.json")])),
	("peak_massif_gawk", TRACE, [VALGRIND, "/usr/bin/gawk"],
	 massif_case(lambda w: ["/usr/bin/gawk", "-f", w.path("count.awk"), w.path("words.txt")])),
]
