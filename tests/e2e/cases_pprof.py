# SPDX-License-Identifier: GPL-2.0
"""pprof's profile.proto (--pprof, --snapshot-dir), read by `go tool pprof` itself.

The profile must carry our names: `go tool pprof -top` shows, per function,
exactly the bytes (flat and cumulative) and blocks the JSON report of the same
run gives its frames, with no binary at hand (-symbolize=none and nowhere to
look), and also when pprof could re-symbolize from a binary with symbols (it
must not: the mappings say they are symbolized). -lines shows each leaf's
file:line. Victims: C (v_basic), a stripped program with its debug info in a
separate file (v_debug_link), one with no names anywhere (v_debug_stripped,
which must stay module+offset though the unstripped v_debug is handed to
pprof), C++ (v_cxxsym, demangled), Python (grow_list.py, its functions of
their own); alloc_space with freed blocks (v_phases); and -diff_base between
two --snapshot-dir snapshots is exactly what leaked in between.
"""

import os
import re
import subprocess
import time

import lib
from lib import (CaseFailed, ERROR, TRACE, TRACER, command_case, common_checks, error_case,
	load_report, read_truth, tracer_env, victim, wait_exit)
from cases_outputs import (GO, NOWHERE, PHASES, compare_sites, go_pprof, phases_alloc, site_bytes,
	snapshot_state)
from cases_python import PY, PYVICTIMS, py_env, py_truth

# "  flat flat% sum% cum cum% name[ (inline)]": flat is "0" without a unit when
# nothing; a tiny share is "8.2e-05%"; an inlined call's name is marked.
PCT = r"-?[\d.]+(?:e[-+]\d+)?%"
ROW = re.compile(r"^\s*(-?\d+)B?\s+%s\s+%s\s+(-?\d+)B?\s+%s\s+(\S.*?)(?: \(inline\))?$" % (
	PCT, PCT, PCT))
SHOWING = re.compile(r"^Showing nodes accounting for (-?\d+)B?, ")
# Where a stack ends short (report_pprof.c).
NO_STACK, TRUNCATED, UNWIND_PENDING = "[stack unavailable]", "[truncated]", "[unwind table loading]"


def top(work, profile, index, tag, extra=(), binary=None, binary_path=NOWHERE):
	"""go tool pprof -top: ({name: flat}, {name: cum}, total) for sample index."""
	args = ["-top", "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0",
		"-sample_index=" + index] + (["-unit=B"] if index.endswith("_space") else []) + \
		list(extra) + ([binary] if binary else []) + [profile]
	flat, cum, total = {}, {}, None
	for line in go_pprof(work, args, tag, binary_path).splitlines():
		m = SHOWING.match(line)
		if m:
			total = int(m.group(1))
		m = ROW.match(line)
		if m:
			name = m.group(3)
			flat[name] = flat.get(name, 0) + int(m.group(1))
			cum[name] = cum.get(name, 0) + int(m.group(2))
	if total is None:
		raise CaseFailed("go tool pprof printed no total (see %s.txt)" % tag)
	return {k: v for k, v in flat.items() if v}, cum, total


# ---------------------------------------------------------------- what the JSON says

def frame_name(f):
	"""A frame as the text report names it (and the profile's function)."""
	if f.get("function"):
		return f["function"]
	if f.get("module"):
		return "%s+%s" % (os.path.basename(f["module"]), f["offset"])
	return f["address"]


def frame_line(f):
	"""A frame as -lines names it: 'function file:line', the file cleaned (Go's filepath.Clean)."""
	if not f.get("file"):
		return frame_name(f)
	where = os.path.normpath(f["file"])
	return "%s %s" % (frame_name(f), "%s:%d" % (where, f["line"]) if f.get("line") else where)


def stack_names(s, name=frame_name):
	"""The names a stack's sample passes through, leaf first, markers included."""
	names = [name(f) for f in s["frames"]] or [NO_STACK]
	if s.get("truncated"):
		names.append(TRUNCATED)
	elif s.get("unwind_pending"):
		names.append(UNWIND_PENDING)
	return names


def expected(rep, field="bytes", name=frame_name):
	"""({leaf name: sum}, {name: sum over the stacks through it}) of the JSON's stacks."""
	flat, cum = {}, {}
	for s in rep["stacks"]:
		names = stack_names(s, name)
		flat[names[0]] = flat.get(names[0], 0) + s[field]
		for n in set(names):
			cum[n] = cum.get(n, 0) + s[field]
	return {k: v for k, v in flat.items() if v}, cum


def compare(got, want, what, limit=12):
	errs = ["%s: %s is %d, the JSON says %d" % (what, k, got.get(k, 0), want.get(k, 0))
		for k in sorted(set(got) | set(want)) if got.get(k, 0) != want.get(k, 0)]
	return errs[:limit] + (["%s: %d more differences" % (what, len(errs) - limit)]
			       if len(errs) > limit else [])


def check_against_json(work, profile, rep, binary=None, binary_path=NOWHERE):
	"""-top (inuse_space flat and cum, inuse_objects) and -lines agree with the JSON."""
	errs = []
	if rep.get("left_out", {}).get("stacks"):
		return ["the JSON left stacks out: run with --all-stacks"]
	want_flat, want_cum = expected(rep)
	flat, cum, total = top(work, profile, "inuse_space", "top_space", ["-symbolize=none"])
	errs += compare(flat, want_flat, "inuse_space flat")
	errs += compare(cum, want_cum, "inuse_space cum")
	if total != rep["totals"]["outstanding_bytes"]:
		errs.append("inuse_space total %d, the JSON's %d" % (total, rep["totals"]["outstanding_bytes"]))
	flat, _, _ = top(work, profile, "inuse_objects", "top_objects", ["-symbolize=none"])
	errs += compare(flat, expected(rep, "allocs")[0], "inuse_objects flat")
	flat, _, _ = top(work, profile, "inuse_space", "top_lines", ["-lines", "-symbolize=none"])
	errs += compare(flat, expected(rep, name=frame_line)[0], "-lines flat")
	# Free to symbolize, with a binary to hand: it must keep our names all the same.
	flat, cum, _ = top(work, profile, "inuse_space", "top_symbolize", binary=binary,
			   binary_path=binary_path)
	errs += compare(flat, want_flat, "inuse_space flat (pprof free to symbolize)")
	errs += compare(cum, want_cum, "inuse_space cum (pprof free to symbolize)")
	return errs


def traced(work, argv, env=None):
	"""memleakbpf --json --all-stacks --pprof ARGV to completion: (rc, report, profile)."""
	js, profile = work.path("report.json"), work.path("final.pb.gz")
	p = work.start([TRACER, "--json", js, "--all-stacks", "--pprof", profile] + argv,
		       env=env or tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf " + " ".join(argv))
	if not os.path.exists(profile):
		raise CaseFailed("no profile written at %s" % profile)
	with open(profile, "rb") as f:
		if f.read(2) != b"\x1f\x8b":
			raise CaseFailed("%s is not gzipped" % profile)
	return rc, load_report(js), profile


# ---------------------------------------------------------------- cases

def proto_case(vname, source, truth_sites=True, binary=None, sites=()):
	"""-c a C or C++ victim: the profile agrees with the JSON (which agrees with the truth).

	binary: handed to pprof as the program (a symbolized copy of a stripped one);
	sites: names that must be in the profile, leaves holding bytes."""
	def check(work, truth):
		rep = load_report(work.path("report.json"))
		profile = work.path("final.pb.gz")
		errs = check_against_json(work, profile, rep, binary=binary and victim(binary))
		if truth_sites:
			flat, _, _ = top(work, profile, "inuse_space", "top_truth", ["-symbolize=none"])
			errs += compare_sites({k.split("(", 1)[0]: v for k, v in flat.items()},
					      site_bytes(truth), "go tool pprof inuse_space")
		flat, _, _ = top(work, profile, "inuse_space", "top_sites", ["-symbolize=none"])
		errs += ["no leaf %r holding bytes in the profile" % s for s in sites if not flat.get(s)]
		return errs
	if truth_sites:
		return command_case("{V}/" + vname, vname, source, extra_args=[
			"--all-stacks", "--pprof", "{W}/final.pb.gz"], check=check)

	def run(work):
		rc, _, _ = traced(work, ["-c", victim(vname)])
		errs = check(work, None)
		common_checks(work, rc, 0, errs)
		return errs
	return run


def case_alloc_space(work):
	"""v_phases: alloc_space per site is the truth's, site_churn's freed blocks too."""
	rc, rep, profile = traced(work, ["-c", victim("v_phases") + " auto 0"])
	truth = read_truth(work)
	flat, _, _ = top(work, profile, "alloc_space", "top_alloc", ["-symbolize=none"])
	errs = compare_sites(flat, phases_alloc(truth), "go tool pprof alloc_space")
	flat, _, _ = top(work, profile, "alloc_objects", "top_alloc_objects", ["-symbolize=none"])
	want = site_bytes(truth, field="allocs")
	want["site_churn"] = 50 * len(PHASES)	# v_phases.c: CHURN_BLOCKS a phase
	errs += compare_sites(flat, want, "go tool pprof alloc_objects")
	errs += check_against_json(work, profile, rep)
	common_checks(work, rc, 0, errs)
	return errs


def case_python(work):
	"""grow_list.py: the Python functions are functions of the profile, at their lines."""
	cmd = "%s %s" % (PY, os.path.join(PYVICTIMS, "grow_list.py"))
	rc, rep, profile = traced(work, ["-T", "10000", "-c", cmd], env=py_env(work))
	truth = py_truth(work)
	errs = check_against_json(work, profile, rep)
	_, cum, _ = top(work, profile, "inuse_space", "top_py_lines", ["-lines", "-symbolize=none"])
	for t in truth:
		label = "%s %s:%d" % (t["function"], t["file"], t["line"])
		if cum.get(label, 0) < t["bytes"]:
			errs.append("-lines: %r holds %d bytes, truth at least %d" % (
				label, cum.get(label, 0), t["bytes"]))
	common_checks(work, rc, 0, errs)
	return errs


def case_snapshot_diff(work):
	"""-c 'v_phases auto 1500', a snapshot every 0.4 s: -diff_base between the
	first showing phase 1 and the last showing phase 3 is exactly p2 and p3."""
	snaps = work.path("snaps")
	os.makedirs(snaps)
	errs = command_case("{V}/v_phases auto 1500", "v_phases", "v_phases.c",
			    extra_args=["--snapshot-dir", snaps, "0.4"])(work)
	truth = read_truth(work)
	names = sorted(os.listdir(snaps))
	profiles = [n for n in names if n.endswith(".pb.gz")]
	want = ["%s.%s" % (p[:-len(".pb.gz")], ext) for p in profiles for ext in ("folded", "pb.gz")]
	if names != want or len(profiles) < 6:
		return errs + ["snapshot files %s, expected .pb.gz and .folded pairs (6 or more)" % names]
	states = [snapshot_state(open(os.path.join(snaps, p[:-len("pb.gz")] + "folded")).read(), truth)
		  for p in profiles]
	if 1 not in states or 3 not in states:
		return errs + ["snapshot states %s: expected 1 and 3 among them" % states]
	first = os.path.join(snaps, profiles[states.index(1)])
	last = os.path.join(snaps, profiles[len(states) - 1 - states[::-1].index(3)])
	grown = site_bytes(truth, PHASES[1:])
	flat, _, _ = top(work, last, "inuse_space", "diff", ["-symbolize=none", "-diff_base=" + first])
	errs += compare_sites(flat, grown, "-diff_base %s %s" % (first, last))
	if sum(flat.values()) != sum(grown.values()):
		errs.append("-diff_base: %d bytes in all, truth %d (%r)" % (
			sum(flat.values()), sum(grown.values()), flat))
	flat, _, _ = top(work, last, "inuse_space", "last", ["-symbolize=none"])
	errs += compare_sites(flat, site_bytes(truth), "snapshot %s" % last)
	return errs


def error_says(args, start):
	"""A usage error: error_case's one line, and it starts with start."""
	def run(work):
		errs = error_case(lambda: args)(work)
		line = work.read("tracer.stderr").strip()
		return errs + ([] if line.startswith(start) else ["stderr %r, expected %r..." % (line, start)])
	return run


CASES = [
	("pprof_proto_c", TRACE, [GO], proto_case("v_basic", "v_basic.c")),
	("pprof_proto_alloc", TRACE, [GO], case_alloc_space),
	("pprof_proto_debuglink", TRACE, [GO],
	 proto_case("v_debug_link", None, truth_sites=False,
		    sites=["site_dbg_malloc", "site_dbg_calloc"])),
	# No names anywhere: module+offset, though pprof is handed the unstripped build.
	("pprof_proto_stripped", TRACE, [GO],
	 proto_case("v_debug_stripped", None, truth_sites=False, binary="v_debug")),
	("pprof_proto_cxx", TRACE, [GO],
	 proto_case("v_cxxsym", None, truth_sites=False,
		    sites=["store::Pool<char>::site_grow(unsigned long)"])),
	("pprof_proto_python", TRACE, [GO, PY], case_python),
	("pprof_snapshot_diff", TRACE, [GO], case_snapshot_diff),
	("err_pprof_format", ERROR, [],
	 error_says(["--pprof", "/tmp/x.pb.gz", "--pprof-format", "text", "-c", "true"],
		    "memleakbpf: --pprof-format: 'text' is neither proto nor gperftools")),
	("err_pprof_format_alone", ERROR, [],
	 error_says(["--pprof-format", "gperftools", "-c", "true"],
		    "memleakbpf: --pprof-format needs --pprof or --snapshot-dir")),
]
