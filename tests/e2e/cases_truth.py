# SPDX-License-Identifier: GPL-2.0
"""Real programs' reports read as their users read them: every sentence true.

Debian's own programs, against valgrind memcheck (which frees libc's and
libstdc++'s own one-time blocks at exit, through __libc_freeres and
__gnu_cxx::__freeres) and the program's own behaviour:

 - fstminimize (OpenFST, C++ on the standard containers) and sqlite3: what
   the report calls the runtime's own blocks (libstdc++'s start-up pool,
   stdout's buffer) is exactly what memcheck has in use at exit less what
   it has with its freeres: the outstanding bytes and blocks less theirs
   are memcheck's, to the byte; their sites come after the program's, and
   the first site of the text is not one of them; OpenFST's registries,
   made by its libraries' constructors before main, are marked as such;
 - sqlite3's peak list: no two of its stacks print the same line;
 - python3: every stack through the interpreter's initialization
   (Py_InitializeFromConfig, no Python frame) says it is the interpreter's
   start-up, or sits among the runtime's sites;
 - a Python dict whose table doubles while the script runs: its stack is
   not called "stable", nor any stack whose bytes rose after its first
   interval;
 - jq, which frees every block by its exit (memcheck: 0 in use): no leak,
   not "too early" for want of reports;
 - python3 writing 64 MiB as it ends: the Memory line's live blocks are of
   the moment its RSS was read;
 - streams a program opens and never closes (v_streams): their buffers,
   made by libc's code, are the program's, not libc's standard streams';
 - fstminimize read as an OpenFST user reads it: the sites made in main
   (fst::Minimize's) first, its registries' (start-up) after them, the
   exit's start-up part and the rest in figures that add up, memcheck's
   kinds (--reach) the same, and names short in the text, whole in the JSON
   and with --full-names.
"""

import json
import os
import re
import subprocess
import time

import lib
from cases_python import PY, py_env
from cases_sites import FST, make_fst
from lib import TRACE, TRACER, Skip, common_checks, tracer_env, wait_exit

VALGRIND = "/usr/bin/valgrind"
SQLITE = "/usr/bin/sqlite3"
VG_IN_USE = re.compile(r"^==\d+==\s+in use at exit: ([\d,]+) bytes in ([\d,]+) blocks", re.M)


def traced(work, command, args=(), env=None):
	"""memleakbpf --json (every stack) -c COMMAND to its end: (exit status, report, text)."""
	js = work.path("report.json")
	argv = [TRACER, "--json", js, "--all-stacks"] + list(args) + ["-c", command]
	p = work.start(argv, env=env or tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c")
	if not os.path.exists(js):
		raise lib.CaseFailed("no JSON report written")
	return rc, lib.load_report(js), work.read("tracer.stdout")


def memcheck_in_use(work, argv):
	"""memcheck's bytes and blocks in use at the program's exit, its freeres run (the default)."""
	if not os.path.exists(VALGRIND):
		raise Skip("valgrind is not installed")
	p = subprocess.run([VALGRIND, "--leak-check=no"] + argv, env=tracer_env(work),
			   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
			   timeout=lib.CASE_TIMEOUT)
	m = VG_IN_USE.search(p.stderr.decode(errors="replace"))
	if not m:
		raise lib.CaseFailed("no \"in use at exit\" line from valgrind")
	return int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))


def runtime_errs(rep, text, want_kind, theirs):
	"""The runtime's sites against memcheck's view, their order, and the text's first site."""
	sites = rep.get("sites") or []
	if sites and "runtime" not in sites[0]:
		return ["the JSON's sites have no \"runtime\" (docs/OUTPUTS.md)"]
	ours = [s for s in sites if s.get("runtime")]
	kinds = sorted({s["runtime"] for s in ours})
	t = rep["totals"]
	left = (t["outstanding_bytes"] - sum(s["bytes"] for s in ours),
		t["outstanding_allocs"] - sum(s["allocs"] for s in ours))
	errs = []
	if want_kind not in kinds:
		errs.append("no site of the runtime's %s (the runtime's sites: %r)" % (want_kind, kinds))
	if left != theirs:
		errs.append("outstanding less the runtime's own: %d bytes in %d blocks; memcheck, its "
			    "freeres run: %d in %d" % (left + theirs))
	first_runtime = next((i for i, s in enumerate(sites) if s.get("runtime")), len(sites))
	if any(not s.get("runtime") for s in sites[first_runtime:]):
		errs.append("a site of the program's after one of the runtime's")
	m = re.search(r"^Site 1: .*", text, re.M)
	if m and ("libstdc++" in m.group(0) or (ours and sites[0].get("runtime"))):
		errs.append("the text's first site is the runtime's own: %s" % m.group(0)[:160])
	if ours and "the runtime's own" not in text:
		errs.append("the text does not say which blocks are the runtime's own")
	return errs


def case_runtime_cxx(work):
	"""fstminimize: libstdc++'s start-up block (its emergency pool) is the runtime's, after
	the program's sites; what is left is memcheck's in use at exit, to the byte."""
	det = make_fst(work, 300)
	argv = [FST, det, work.path("min.fst")]
	theirs = memcheck_in_use(work, [FST, det, work.path("vg.fst")])
	rc, rep, text = traced(work, " ".join(argv))
	errs = runtime_errs(rep, text, "runtime-init", theirs)
	# OpenFST's registries, made by its libraries' constructors before main: start-up.
	init = [s for s in rep.get("sites") or [] if s.get("initializer") and not s.get("runtime")]
	if not any("GenericRegister" in str((s.get("frame") or {}).get("function")) for s in init):
		errs.append("no site of OpenFST's registries marked as made by an initializer")
	for s in init:
		for i in s["stacks"]:
			frames = rep["stacks"][i]["frames"] or [{}]
			fns = [f.get("function") for f in frames]
			if "ld-linux" not in str(frames[-1].get("module")) and \
			   ("call_init" not in fns or "__libc_start_call_main" in fns):
				errs.append("an initializer's site with a stack neither from the dynamic "
					    "linker nor from __libc_start_main's call_init: %s" %
					    lib.frame_str(frames))
	if init and "in an initializer before main (start-up)" not in text:
		errs.append("the text does not mark the initializers' sites")
	common_checks(work, rc, 0, errs[:5])
	return errs[:5]


SQL = """create table t(a integer primary key, b text);
with recursive c(x) as (select 1 union all select x + 1 from c where x < %d)
insert into t select x, printf('row-%%d-%%s', x, hex(randomblob(20))) from c;
create index ib on t(b);
select count(*), sum(length(b)) from t;
"""


def sqlite_argv(work, rows, db):
	"""sqlite3 running SQL on rows into db (the same length of name for two runs: sqlite3
	keeps its path)."""
	sql = work.path("script.sql")
	with open(sql, "w") as f:
		f.write(SQL % rows)
	return [SQLITE, work.path(db), "-init", sql, ".quit"]


def case_runtime_sqlite3(work):
	"""sqlite3: stdout's buffer is libc's own, after the program's sites; what is left is
	memcheck's in use at exit, to the byte."""
	theirs = memcheck_in_use(work, sqlite_argv(work, 300, "vg.db"))
	rc, rep, text = traced(work, " ".join(sqlite_argv(work, 300, "tr.db")))
	errs = runtime_errs(rep, text, "stdio-buffer", theirs)
	common_checks(work, rc, 0, errs)
	return errs


def peak_chains(text):
	"""The final report's peak list: its chain lines ("      at ..."), in order."""
	part = text[text.rfind("\nPeak: "):] if "\nPeak: " in text else ""
	return re.findall(r"^  \d+\. .*\n      (at .*)$", part, re.M)


def case_peak_lines_differ(work):
	"""sqlite3 inserting 20,000 rows: no two stacks of the peak list print the same line
	(four printed "at libsqlite3+0xa7504 <- sqlite3Malloc <- libsqlite3+0xb786c <- ...")."""
	rc, rep, text = traced(work, " ".join(sqlite_argv(work, 20000, "peak.db")))
	chains = peak_chains(text)
	errs = []
	if len(chains) < 3:
		errs.append("the peak list has %d stacks" % len(chains))
	same = sorted({c for c in chains if chains.count(c) > 1})
	errs += ["%d stacks of the peak list print %s" % (chains.count(c), c[:160]) for c in same]
	common_checks(work, rc, 0, errs)
	return errs


# The script's table grows while it runs: d's table doubles, in steps.
DICT_PY = """import time
d = {}
for step in range(8):
    for i in range(len(d), len(d) + 20000 * 2 ** (step // 3)):
        d[i] = i
    time.sleep(0.4)
print(len(d))
"""

STACK_WORD = re.compile(r"^      ([a-z][^:\n]*): grew in (\d+)(?: and shrank in \d+)? of (\d+) interval",
			re.M)


def stack_blocks(text):
	"""The final report's stacks as printed under their sites: (the site's header, the
	stack's lines as one string) each."""
	final = text[text.rfind("Final report"):]
	final = final[:final.find("\nChurn:")] if "\nChurn:" in final else final
	out = []
	for site in re.split(r"\n(?=Site \d+: )", final)[1:]:
		parts = site.split("\n\n")
		out += [(parts[0], b) for b in parts[1:] if re.match(r"  \S.* from \S+\n", b)]
	return out


def case_stepped_growth(work):
	"""A dict whose table doubles in steps, a report every 0.4 s: its stack, and every stack
	whose bytes rose after its first interval, is not called "stable"."""
	script = work.path("dict_steps.py")
	with open(script, "w") as f:
		f.write(DICT_PY)
	rc, rep, text = traced(work, "%s %s" % (PY, script), ["-T", "10000", "0.4"], env=py_env(work))
	errs, dict_line = [], None
	for _, block in stack_blocks(text):
		m = STACK_WORD.search(block)
		if not m:
			continue
		if "dict_steps.py:5)" in block and block.split("\n")[0].endswith("from malloc"):
			dict_line = m.group(0).strip()
		if m.group(1).startswith("stable") and int(m.group(2)) > 1:
			errs.append("rose in %s intervals, said %s" % (m.group(2), m.group(0).strip()))
	if not dict_line:
		errs.append("no stack of the dict's table (dict_steps.py:5, malloc) in the final report")
	elif not re.search(r"grew in ([2-9]|\d\d)", dict_line):
		errs.append("the dict's table rose in one interval only: %s (the case says nothing)" %
			    dict_line)
	common_checks(work, rc, 0, errs[:5])
	return errs[:5]


def case_py_startup(work):
	"""python3: each stack through Py_InitializeFromConfig without a Python frame is marked as
	the interpreter's start-up, or its site is (a pymalloc arena aside: its objects are
	anyone's)."""
	script = work.path("small.py")
	with open(script, "w") as f:
		f.write("import json\nkeep = [json.dumps({'n': i}) for i in range(2000)]\nprint(len(keep))\n")
	rc, rep, text = traced(work, "%s %s" % (PY, script), ["-T", "10000"], env=py_env(work))
	errs, marked = [], 0
	for head, block in stack_blocks(text):
		if "Py_InitializeFromConfig" not in block or "[python]\n" in block + "\n":
			continue
		if "pymalloc arenas" in block:
			continue
		if "the interpreter's own start-up" in head + block:
			marked += 1
		else:
			errs.append("a stack of the interpreter's start-up not marked: %s" %
				    block.split("\n")[0].strip())
	listed = [s for s in rep.get("sites") or [] if s.get("runtime") == "python-init"]
	if not marked and not listed:
		errs.append("no stack nor site of the interpreter's start-up")
	if any(s.get("own") for s in listed):
		errs.append("a site of the interpreter's start-up marked the program's own")
	common_checks(work, rc, 0, errs[:5])
	return errs[:5]


JQ = "/usr/bin/jq"


def case_all_freed(work):
	"""jq, whose run of well under a second frees every block by its exit (memcheck: 0 in
	use): the verdict is no leak, not "too early" for want of reports."""
	doc, prog = work.path("rows.json"), work.path("q.jq")
	with open(doc, "w") as f:
		json.dump([{"id": i, "name": "row-%d" % i, "vals": [i * j % 97 for j in range(8)]}
			   for i in range(3000)], f)
	with open(prog, "w") as f:
		f.write("[.[] | {id, s: (.vals | add)}] | length\n")
	argv = [JQ, "-f", prog, doc]
	theirs = memcheck_in_use(work, argv)
	rc, rep, text = traced(work, " ".join(argv))
	t, m = rep["totals"], rep.get("memory") or {}
	errs = []
	if theirs != (0, 0) or (t["outstanding_bytes"], t["outstanding_allocs"]) != (0, 0):
		errs.append("memcheck %r in use at exit, ours %d in %d: the case says nothing" % (
			theirs, t["outstanding_bytes"], t["outstanding_allocs"]))
	elif m.get("verdict") != "no_leak" or "Verdict: no leak: every block" not in text:
		line = re.search(r"^Verdict: .*", text, re.M)
		errs.append("everything freed by the exit, verdict %r: %s" % (
			m.get("verdict"), line.group(0) if line else "no verdict line"))
	common_checks(work, rc, 0, errs)
	return errs


UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
MEMORY_LINE = re.compile(r"^Memory: RSS [\d.]+ \w+, anonymous ([\d.]+) (\w+) .*; live blocks ([\d.]+) (\w+)$",
			 re.M)
# 64 MiB made at the end, after the target's memory was last read, in 16,384
# blocks each written as it is made: a block allocated is in the live figure
# before its pages are touched, so one 64 MiB block stood at 66.8 MiB live
# beside 59.5 MiB anonymous when a reading fell while it was being filled
# (1 run of 3 on a slow machine); 4 KiB blocks leave that window one block wide.
LATE_SLEEP_S = 1.2
LATE_PY = ("import time\ntime.sleep(%.1f)\ndata = [b'x' * 4096 for _ in range(16384)]\n"
	   "print(sum(map(len, data)))\n" % LATE_SLEEP_S)


def late_age_errs(rep, script):
	"""The blocks made after the script's sleep are younger than the run less its sleep
	(the final report once aged them from after its sweep: 1.3 s in a 1.8 s run)."""
	most = rep["duration_s"] - LATE_SLEEP_S
	ages = [s["oldest_age_s"] for s in rep["stacks"]
		if any(f.get("file") == script and f.get("line") == 3 for f in s["frames"])]
	if not ages:
		return ["no stack at %s:3, where the late blocks are made" % script]
	return ["a block made after %.1f s of sleep in a %.1f s run: %.1f s old" % (
		LATE_SLEEP_S, rep["duration_s"], a) for a in ages if a is None or a > most]


def case_memory_moment(work):
	"""python3 making 64 MiB as it ends, its memory last read before: the Memory line's
	live blocks are those of the moment its RSS was read, never more than its anonymous
	memory then (the end's 64 MiB stood beside an RSS of ~10 MiB read 0.2 s before)."""
	script = work.path("late.py")
	with open(script, "w") as f:
		f.write(LATE_PY)
	rc, rep, text = traced(work, "%s %s" % (PY, script), env=py_env(work))
	final = text[text.rfind("Final report"):]
	m = MEMORY_LINE.search(final)
	errs = []
	if not m:
		errs.append("no Memory line of figures in the final report")
	else:
		anon = float(m.group(1)) * UNITS[m.group(2)]
		live = float(m.group(3)) * UNITS[m.group(4)]
		if live > anon:
			errs.append("live blocks above the anonymous memory on one line: %s" % m.group(0))
	errs += late_age_errs(rep, script)
	common_checks(work, rc, 0, errs)
	return errs


VG_KINDS = re.compile(r"^==\d+==\s+(definitely lost|indirectly lost|possibly lost|still reachable): "
		      r"([\d,]+) bytes in ([\d,]+) blocks", re.M)
STRING = "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >"
STARTUP_LINE = re.compile(r"^  of them, made before main by initializers .*: .*?\(?([\d,]+) bytes\)? in "
			  r"([\d,]+) allocations?", re.M)
REST_LINE = re.compile(r"^  the rest: .*?\(?([\d,]+) bytes\)? in ([\d,]+) allocations?, at the first sites",
		       re.M)


def memcheck_kinds(work, argv):
	"""memcheck's leak kinds at exit (--leak-check=full --show-leak-kinds=all): {kind: (bytes,
	blocks)}, with memcheck's spaces as the JSON's underscores."""
	if not os.path.exists(VALGRIND):
		raise Skip("valgrind is not installed")
	p = subprocess.run([VALGRIND, "--leak-check=full", "--show-leak-kinds=all"] + argv,
			   env=tracer_env(work), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
			   stderr=subprocess.PIPE, timeout=lib.CASE_TIMEOUT)
	kinds = {m.group(1).replace(" ", "_"): (int(m.group(2).replace(",", "")), int(m.group(3).replace(",", "")))
		 for m in VG_KINDS.finditer(p.stderr.decode(errors="replace"))}
	if "still_reachable" not in kinds:
		raise lib.CaseFailed("no LEAK SUMMARY from valgrind")
	return kinds


def part_errs(text, line, sites, name):
	"""An exit line's figures against the sum of its sites' in the JSON."""
	want = (sum(s["bytes"] for s in sites), sum(s["allocs"] for s in sites))
	m = line.search(text)
	if not m:
		return ["no line of the exit's %s part (%r in its sites)" % (name, want)]
	got = (int(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")))
	return [] if got == want else ["the exit's %s part says %r, its sites %r: %s" % (name, got, want, m.group(0))]


def case_cxx_first_site(work):
	"""fstminimize as an OpenFST user reads it: the first site is one made in main (under
	fst::Minimize), its registries' (made before main) after every such; the exit's start-up
	part and the rest add up to its sites; memcheck's kinds (--reach) are ours less the
	runtime's own (memcheck's freeres frees it); std::string and <…> in the text, the whole
	names in the JSON and with --full-names."""
	det = make_fst(work, 300)
	kinds = memcheck_kinds(work, [FST, det, work.path("vg.fst")])
	rc, rep, text = traced(work, "%s %s %s" % (FST, det, work.path("min.fst")), ["--reach"])
	final = text[text.rfind("Final report"):]
	sites = rep.get("sites") or []
	run = [s for s in sites if not s.get("runtime") and not s.get("initializer")]
	init = [s for s in sites if not s.get("runtime") and s.get("initializer")]
	errs = []
	first_init = next((i for i, s in enumerate(sites) if s in init), len(sites))
	if any(s in run for s in sites[first_init:]):
		errs.append("a site made in main after one made before main by an initializer")
	m = re.search(r"^Site 1: .*", final, re.M)
	if not m or "in an initializer before main" in m.group(0) or "Minimize" not in final[m.start():m.start() + 3000]:
		errs.append("the text's first site is not one made under fst::Minimize: %s" % (m.group(0)[:200] if m else None))
	errs += part_errs(final, STARTUP_LINE, init, "start-up")
	errs += part_errs(final, REST_LINE, run, "run's")
	reach = (rep.get("reach") or {}).get("totals") or {}
	runtime = sum(st["bytes"] for st in rep["stacks"] if st.get("runtime")), \
		sum(st["allocs"] for st in rep["stacks"] if st.get("runtime"))
	for k, (b, n) in kinds.items():
		ours = reach.get(k) or {}
		ours = (ours.get("bytes"), ours.get("blocks"))
		if k == "still_reachable" and None not in ours:
			ours = (ours[0] - runtime[0], ours[1] - runtime[1])
		if ours != (b, n):
			errs.append("%s: ours %r (less the runtime's own), memcheck's %r" % (k, ours, (b, n)))
	# a frame, a site's line, a link of a chain: 1,500 characters and more before
	long_names = [n for line in final.splitlines() for n in line.split(" <- ") if len(n) > 400]
	if STRING in final or long_names:
		errs.append("the text's C++ names not shortened (%d frames over 400 characters)" % len(long_names))
	if "std::string" not in final or "<\u2026>" not in final:
		errs.append("no std::string or <\u2026> in the text")
	if STRING not in json.dumps(rep):
		errs.append("the JSON's names are not whole")
	common_checks(work, rc, 0, errs[:6])
	rc, _, text = traced(work, "%s %s %s" % (FST, det, work.path("min2.fst")), ["--full-names"])
	if rc or STRING not in text[text.rfind("Final report"):]:
		errs.append("--full-names: the whole names not in the text (exit status %d)" % rc)
	return errs[:6]


STREAMS = 40


def case_streams_left_open(work):
	"""v_streams: 40 files opened with fopen, written and never closed. Their buffers are made
	by libc's code (_IO_file_doallocate) but are the program's streams, not libc's three
	standard ones: their site is the program's (runtime null, not "Not the program's"), and
	with the FILEs it holds exactly a FILE and a buffer a stream."""
	out = work.path("streams")
	os.mkdir(out)
	rc, rep, text = traced(work, "%s %s %d" % (lib.victim("v_streams"), out, STREAMS))
	mine = [s for s in rep.get("sites") or [] if lib.fn_name(s.get("frame") or {}) == "site_open_stream"]
	errs = []
	if sum(s.get("allocs", 0) for s in mine) != 2 * STREAMS:
		errs.append("site_open_stream's sites hold %d blocks, not a FILE and a buffer for each "
			    "of %d streams" % (sum(s.get("allocs", 0) for s in mine), STREAMS))
	errs += ["site_open_stream's site of %d blocks called the runtime's own (%s)" % (
		s.get("allocs", 0), s["runtime"]) for s in mine if s.get("runtime")]
	for block in re.split(r"\n(?=Site \d+: )", text):
		if block.startswith("Site ") and "site_open_stream" in block.split("\n", 1)[0] \
		   and "Not the program's" in block:
			errs.append("the text says a site_open_stream site is not the program's")
	common_checks(work, rc, 0, errs)
	return errs


CASES = [
	("truth_runtime_cxx", TRACE, [VALGRIND, FST, "/usr/bin/fstcompile"], case_runtime_cxx),
	("truth_runtime_sqlite3", TRACE, [VALGRIND, SQLITE], case_runtime_sqlite3),
	("truth_peak_lines_differ", TRACE, [SQLITE], case_peak_lines_differ),
	("truth_py_startup", TRACE, [PY], case_py_startup),
	("truth_stepped_growth", TRACE, [PY], case_stepped_growth),
	("truth_all_freed", TRACE, [VALGRIND, JQ], case_all_freed),
	("truth_memory_moment", TRACE, [PY], case_memory_moment),
	("truth_cxx_first_site", TRACE, [VALGRIND, FST, "/usr/bin/fstcompile"], case_cxx_first_site),
	("truth_streams_left_open", TRACE, [], case_streams_left_open),
]
