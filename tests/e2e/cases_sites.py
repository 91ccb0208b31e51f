# SPDX-License-Identifier: GPL-2.0
"""Sites at the user's own line, on leaks made through libraries.

A leak made through a container or a package allocates in the library's
code: every frame inside the user's line is libstdc++'s (inlined from its
headers, or in libstdc++.so) or the package's and the standard library's
Python. The report must site it at the user's line (docs/ANALYSIS.md, "Sites"):

 - v_containers: std::vector and std::string storage kept by two lines of
   the victim; each line one site, holding exactly its truth, in the text
   and the JSON; --own naming a header moves the site there;
 - pkg_leak.py: buffers made by a package installed under a site-packages
   path (made here), JSON texts made in json/encoder.py, and the table a
   package's import allocates: sited at the script's three lines, the
   import marked as one;
 - OpenFST's fstminimize (Debian's libfst-tools: a stripped program on a
   C++ library): its own frames have no names, so its sites are the
   library's functions that did the work, never "fstminimize+0x...", nor
   the containers' code under them.
"""

import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import lib
from cases_outputs import GO, go_pprof
from lib import (SVG, TRACE, TRACER, check_sites, common_checks, dropped_errs, fn_name, load_report,
	read_truth, tracer_env, victim, wait_exit)
from cases_python import PY, PYVICTIMS, PY_HEAP_APIS, PY_LARGE, py_env, py_truth


def run_traced(work, command, args=(), env=None):
	"""memleakbpf --json -c COMMAND to its end: (exit status, report)."""
	js = work.path("report.json")
	argv = [TRACER, "--json", js, "--all-stacks", "-T", "10000"] + list(args) + ["-c", command]
	p = work.start(argv, env=env or tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c")
	if not os.path.exists(js):
		raise lib.CaseFailed("no JSON report written")
	return rc, load_report(js)


def sites_at(rep, fn, line=None):
	"""The JSON sites whose frame is function fn (at line, when given)."""
	return [s for s in rep.get("sites") or [] if fn_name(s.get("frame") or {}) == fn and
		(line is None or (s.get("frame") or {}).get("line") == line)]


def text_site_line(text, where):
	"""The text report's "Site N: ..." line that ends at where, or None."""
	for line in text.splitlines():
		if line.startswith("Site ") and where in line:
			return line
	return None


def check_container_sites(work, rep, truth):
	"""Each truth line's blocks are one site at its line: its exact figures, the user's frame."""
	errs = check_sites(rep) + dropped_errs(rep.get("totals") or {})
	text = work.read("tracer.stdout")
	for t in truth:
		got = sites_at(rep, t["site"], t.get("line"))
		figs = (sum(s["bytes"] for s in got), sum(s["allocs"] for s in got))
		if figs != (t["bytes"], t["allocs"]):
			errs.append("%s line %s: sites hold %d bytes in %d, truth %d in %d (sites: %s)" % (
				t["site"], t.get("line"), figs[0], figs[1], t["bytes"], t["allocs"],
				[lib.frame_str([s.get("frame") or {}], 1) for s in rep["sites"][:4]]))
		if any(not s.get("own") for s in got):
			errs.append("%s: a site not marked own" % t["site"])
		if not t.get("line"):
			continue
		if len(got) != 1 or not str(got[0]["frame"].get("file")).endswith("v_containers.cc"):
			errs.append("%s: %d sites at line %d of v_containers.cc" % (t["site"], len(got), t["line"]))
		where = "at %s (tests/victims/v_containers.cc:%d)" % (t["site"], t["line"])
		if not text_site_line(text, where):
			errs.append("the text report has no site %r" % where)
	for s in rep.get("sites") or []:
		f = s.get("frame") or {}
		if str(f.get("file") or "").startswith("/usr/include/"):
			errs.append("a site in a system header: %s" % lib.frame_str([f], 1))
	return errs


def containers_case(work):
	rc, rep = run_traced(work, victim("v_containers"))
	errs = check_container_sites(work, rep, read_truth(work))
	common_checks(work, rc, 0, errs)
	return errs


def containers_own_case(work):
	"""--own naming libstdc++'s allocator header: the vectors' storage is sited there."""
	rc, rep = run_traced(work, victim("v_containers"), ["--own", "*/bits/new_allocator.h"])
	truth = {t["site"]: t for t in read_truth(work)}
	errs = check_sites(rep)
	at = [s for s in rep.get("sites") or [] if
	      str((s.get("frame") or {}).get("file")).endswith("/bits/new_allocator.h")]
	# The models' storage, and the two tables' reserved storage: all through new_allocator.
	want = truth["site_load_model"]["bytes"]
	if not at or not all(s.get("own") for s in at) or sum(s["bytes"] for s in at) < want:
		errs.append("--own '*/bits/new_allocator.h': %d bytes at sites in it (own %s), at least %d expected" % (
			sum(s["bytes"] for s in at), [s.get("own") for s in at], want))
	if sites_at(rep, "site_load_model"):
		errs.append("--own given: site_load_model is still a site of its own")
	common_checks(work, rc, 0, errs)
	return errs


def victim_line(source, needle):
	"""The number of the line of tests/victims/SOURCE that holds needle."""
	with open(os.path.join(lib.ROOT, "tests", "victims", source)) as f:
		for n, line in enumerate(f, 1):
			if needle in line:
				return n
	raise lib.CaseFailed("%s: no line with %r" % (source, needle))


def containers_alloc_fn_case(work):
	"""--alloc-fn, a name and a glob: the functions' blocks are sited at their caller's lines.

	As redis's zmalloc* would be: site_load_model and site_remember taken for
	the program's allocation functions, their truth is at main's two calls."""
	rc, rep = run_traced(work, victim("v_containers"),
			     ["--alloc-fn", "site_load_model", "--alloc-fn", "site_rem*"])
	truth = {t["site"]: t for t in read_truth(work)}
	text = work.read("tracer.stdout")
	errs = check_sites(rep)
	for fn, call in (("site_load_model", "site_load_model(MODEL_DOUBLES)"),
			 ("site_remember", "site_remember(NAME_LEN")):
		line, t = victim_line("v_containers.cc", call), truth[fn]
		got = sites_at(rep, "main", line)
		figs = (sum(s["bytes"] for s in got), sum(s["allocs"] for s in got))
		if figs != (t["bytes"], t["allocs"]):
			errs.append("--alloc-fn %s: main line %d holds %d bytes in %d, truth %d in %d" % (
				fn, line, figs[0], figs[1], t["bytes"], t["allocs"]))
		if sites_at(rep, fn):
			errs.append("--alloc-fn %s: still a site of its own" % fn)
		if not text_site_line(text, "at main (tests/victims/v_containers.cc:%d)" % line):
			errs.append("the text report has no site at main's line %d" % line)
	common_checks(work, rc, 0, errs)
	return errs


def fills(path):
	"""{a flame graph box's name: its fill's (r, g, b)}."""
	out = {}
	for g in ET.parse(path).getroot().iter(SVG + "g"):
		if g.get("class") == "f":
			fill = g.find(SVG + "rect").get("fill")
			out[g.find(SVG + "title").text.split("\n")[0]] = tuple(
				int(v) for v in fill[4:-1].split(","))
	return out


def within(c, lo, hi):
	return c is not None and all(l <= v <= h for v, l, h in zip(c, lo, hi))


def containers_outputs_case(work):
	"""pprof's site label and the flame graph's colours agree with the text's sites."""
	pb, svg = work.path("r.pb.gz"), work.path("r.svg")
	rc, rep = run_traced(work, victim("v_containers"), ["--pprof", pb, "--flamegraph", svg])
	errs = []
	tags = go_pprof(work, ["-tags", "-sample_index=inuse_space", pb], "tags")
	for t in read_truth(work):
		if t.get("line"):
			name = "%s (tests/victims/v_containers.cc:%d)" % (t["site"], t["line"])
			if name not in tags:
				errs.append("go tool pprof -tags has no site %r" % name)
	f = fills(svg)
	alloc = [n for n in f if n.startswith("std::__new_allocator<double>::allocate")]
	# The C++ runtime's colour for what the program inlined from libstdc++; the program's for its line.
	if not alloc or not within(f[alloc[0]], (160, 110, 215), (200, 150, 245)):
		errs.append("flame graph: new_allocator's inlined frame %s, not the C++ runtime's colour" % (
			alloc and f[alloc[0]],))
	if not within(f.get("site_load_model"), (225, 120, 40), (255, 210, 70)):
		errs.append("flame graph: site_load_model %s, not the program's colour" % (
			f.get("site_load_model"),))
	common_checks(work, rc, 0, errs)
	return errs


# ---------------------------------------------------------------- Python

LEAKYLIB = '''\
"""A package of the test's, installed under a site-packages path."""

TABLE = bytearray(3000000)


def make_batch(n):
	return bytearray(n)
'''


def make_package(work):
	"""leakylib under WORK/env/lib/python3.11/site-packages: the directory."""
	site = work.path("env/lib/python3.11/site-packages")
	os.makedirs(os.path.join(site, "leakylib"))
	with open(os.path.join(site, "leakylib", "__init__.py"), "w") as f:
		f.write(LEAKYLIB)
	return site


def large_heap(site):
	"""(bytes, allocs) of the site's stacks' blocks over pymalloc's largest, from malloc."""
	return site.get("large", (0, 0))


def py_sites_of(rep, t):
	"""Sites at t's line of the script, with their blocks over 512 bytes summed."""
	out = []
	for j, s in enumerate(rep.get("sites") or []):
		f = s.get("frame") or {}
		if (f.get("file"), f.get("line"), f.get("function")) != (t["file"], t["line"], t["function"]):
			continue
		stacks = [rep["stacks"][i] for i in s.get("stacks", [])]
		large = [x for x in stacks if x["api"] in PY_HEAP_APIS and x["allocs"] and
			 x["bytes"] > PY_LARGE * x["allocs"]]
		out.append(dict(s, index=j, large=(sum(x["bytes"] for x in large),
						   sum(x["allocs"] for x in large)),
				blocks=[(x["bytes"], x["allocs"]) for x in large]))
	return out


def package_case(work):
	env = py_env(work)
	env["LEAKY_SITE"] = make_package(work)
	rc, rep = run_traced(work, "%s %s" % (PY, os.path.join(PYVICTIMS, "pkg_leak.py")), env=env)
	errs = check_sites(rep) + dropped_errs(rep.get("totals") or {})
	text = work.read("tracer.stdout")
	for t in py_truth(work):
		got = py_sites_of(rep, t)
		where = "%s (%s:%d)" % (t["function"], t["file"], t["line"])
		if len(got) != 1:
			errs.append("%s: %d sites at %s, expected 1" % (t["site"], len(got), where))
			continue
		# The import's line also holds what compiling the package left (its code objects).
		if t["site"] == "import" and (t["bytes"], t["allocs"]) in got[0]["blocks"]:
			pass
		elif large_heap(got[0]) != (t["bytes"], t["allocs"]):
			errs.append("%s: the site at %s holds %d bytes in %d large blocks, truth %d in %d" % (
				(t["site"], where) + large_heap(got[0]) + (t["bytes"], t["allocs"])))
		if not got[0].get("own") or bool(got[0].get("import")) != (t["site"] == "import"):
			errs.append("%s: own %r, import %r" % (t["site"], got[0].get("own"), got[0].get("import")))
		line = text_site_line(text, "at %s [python]" % where)
		if not line:
			errs.append("the text report has no site at %s" % where)
		elif (", during an import (start-up)" in line) != (t["site"] == "import"):
			errs.append("%s: the text's site line %r" % (t["site"], line))
	for s in rep.get("sites") or []:
		f = str((s.get("frame") or {}).get("file"))
		if s.get("own") and ("site-packages" in f or f.startswith("/usr/lib/python")):
			errs.append("a library's line marked own: %s" % f)
	common_checks(work, rc, 0, errs)
	return errs


FST = "/usr/bin/fstminimize"


def make_fst(work, words=3000):
	"""A lexicon's shape (tests/bench/lexicon.py), determinized: the input fstminimize reads."""
	lex = os.path.join(lib.ROOT, "tests", "bench", "lexicon.py")
	if subprocess.run([sys.executable, lex, work.path("lex"), str(words)],
			  stdin=subprocess.DEVNULL).returncode:
		raise lib.CaseFailed("tests/bench/lexicon.py failed")
	return work.path("lex.det.fst")


# The standard library's namespaces (analyze/runtime_frames.c): never a site's.
RUNTIME_NAMES = ("std::", "__gnu_cxx::", "__cxxabiv1::", "operator new")


def qualified_name(function):
	"""A demangled name past its return type: "std::vector<int> fst::Split(int)" gives "fst::Split(int)"."""
	depth, name = 0, 0
	for i, ch in enumerate(function):
		if ch == "<":
			depth += 1
		elif ch == ">" and depth:
			depth -= 1
		elif ch == "(" and not depth:
			break
		elif ch == " " and not depth and not function.startswith(("const", "*", "&"), i + 1):
			name = i + 1
	return function[name:]


def nothing_inside(snaps, frame):
	"""Every folded stack of the snapshots through frame has inside it only the runtime's or a
	container's frames (std::...) and the allocation function: no frame to name the site by."""
	inner = []
	for name in sorted(os.listdir(snaps)):
		if not name.endswith(".folded"):
			continue
		with open(os.path.join(snaps, name)) as f:
			for line in f:
				frames = line.rsplit(" ", 1)[0].split(";")
				if frame in frames:
					inner.append(frames[frames.index(frame) + 1:-1])
	return bool(inner) and all(qualified_name(fn).startswith(RUNTIME_NAMES) for fns in inner for fn in fns)


def stripped_cxx_case(work):
	"""fstminimize, a report every 0.3 s: no site at a nameless frame of the program's,
	nor at a std:: container's code (the final report's start-up registries: std::map inserts),
	but where the stack has no other frame to name: main's own std::string (165 bytes,
	fstminimize+0x378e under __libc_start_call_main, only the runtime's and std:: code
	inside it), in the first ten since the sites made in main come before the start-up ones."""
	det = make_fst(work)
	snaps = work.path("snaps")
	os.mkdir(snaps)
	argv = [TRACER, "-T", "10", "--snapshot-dir", snaps, "-c",
		"%s %s %s" % (FST, det, work.path("min.fst")), "0.3"]
	p = work.start(argv, env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c fstminimize")
	text = work.read("tracer.stdout")
	sites = re.findall(r"\nSite \d+: ([^\n]*), at ([^\n]*)", text)
	big = [at for fig, at in sites if re.match(r"[\d.]+ MiB", fig)]
	errs = []
	if not big:
		errs.append("no report listed a site of a MiB or more (%d site lines)" % len(sites))
	errs += ["a site at the program's nameless frame: %s" % at for fig, at in sites
		 if at.startswith("fstminimize+0x") and not nothing_inside(snaps, at)][:3]
	errs += ["a MiB site not in OpenFST's code: %s" % at[:120] for at in big
		 if not re.match(r"(\S+ )?fst::", at)][:3]
	errs += ["a site at the runtime's or a container's code: %s" % at[:120] for fig, at in sites
		 if qualified_name(at).startswith(RUNTIME_NAMES)][:3]
	common_checks(work, rc, 0, errs)
	return errs


CASES = [
	("sites_containers", TRACE, [], containers_case),
	("sites_containers_own", TRACE, [], containers_own_case),
	("sites_alloc_fn", TRACE, [], containers_alloc_fn_case),
	("sites_containers_outputs", TRACE, [GO], containers_outputs_case),
	("sites_py_package", TRACE, [PY], package_case),
	("sites_stripped_cxx", TRACE, [FST, "/usr/bin/fstcompile"], stripped_cxx_case),
]
