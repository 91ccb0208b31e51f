# SPDX-License-Identifier: GPL-2.0
"""Source names: functions the compiler cloned or split, named as the source
names them (foo for foo.part.0, foo.isra.0, foo.constprop.0, foo.cold), with
the ELF symbol kept beside in the JSON (frames[].symbol). v_clones (C, with
its debug info and without: then only the known clone suffixes are cut),
glibc's own clones from libc6-dbg (set_binding_values.part.0,
_nl_make_l10nflist.localalias), and v_clones_cxx (C++: demangled from the
linkage name, never "[clone .constprop.0]"). Frames are checked exactly by
cases_symbols.py's sym_check.
"""

import shutil
import subprocess
from os.path import realpath

from lib import TRACE, common_checks, read_truth, victim
from cases_symbols import F, S, sym_case, sym_check, sym_trace

CLONES = "tests/victims/v_clones.c"
CLONES_CXX = "tests/victims/v_clones_cxx.cc"
OBJCOPY = shutil.which("objcopy") or "objcopy (binutils: not on PATH)"


def clones_specs(b, source=CLONES):
	"""Each clone's site frame, at its source name; source None: no debug info."""
	line = "truth" if source else None
	return [S(site, api, [F(site, source, line, False, b)])
		for site, api in (("site_isra", "malloc"), ("site_constprop", "malloc"),
				  ("site_part", "malloc"), ("site_cold", "malloc"))]


def clones_cxx_specs(b):
	return [S("site_grab", "malloc", [F("ns::grab(ns::request const*)", CLONES_CXX, "truth", False, b)]),
		S("site_fill", "malloc", [F("ns::fill(unsigned long, int)", CLONES_CXX, "truth", False, b)])]


def check_cxx_clone_symbols(work, rep, truth):
	"""The mangled clone's symbol beside each demangled name, as nm has it."""
	syms = {l.split()[-1] for l in subprocess.run(["nm", victim("v_clones_cxx")],
		stdout=subprocess.PIPE, check=True).stdout.decode().splitlines()}
	want = {"ns::grab(ns::request const*)": "_ZN2nsL4grabEPKNS_7requestE.",
		"ns::fill(unsigned long, int)": "_ZN2nsL4fillEmi."}
	errs = [] if all(any(s.startswith(w) for s in syms) for w in want.values()) else \
		["nm finds no clone of ns::grab or ns::fill: the case proves nothing"]
	for s in rep["stacks"]:
		f0 = s["frames"][0] if s["frames"] else {}
		w = want.get(f0.get("function"))
		if w and not ((f0.get("symbol") or "").startswith(w) and f0["symbol"] in syms):
			errs.append("%s: symbol %r, not nm's clone %s*" % (f0["function"], f0.get("symbol"), w))
	return errs


def clone_symbols(binary):
	"""The victim's own clones' symbols, per nm: {source name: symbol}."""
	out = subprocess.run(["nm", binary], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
			     check=True).stdout.decode()
	syms = {}
	for line in out.splitlines():
		name = line.split()[-1]
		if name.startswith("site_") and "." in name:
			syms.setdefault(name.split(".")[0], set()).add(name)
	return syms


def check_clone_symbols(binary, glibc):
	"""Each site frame's symbol is its clone's, as nm has it; glibc's clones
	(libc6-dbg) named at their source too (glibc: check them)."""
	def check(work, rep, truth):
		errs, syms, libc = [], clone_symbols(binary), {}
		if len(syms) != 4:
			return ["nm finds clones of %s only: the case proves nothing" % sorted(syms)]
		for s in rep["stacks"]:
			f0 = s["frames"][0] if s["frames"] else {}
			if f0.get("function") in syms and f0.get("symbol") not in syms[f0["function"]]:
				errs.append("%s: symbol %r, not one of %s" % (
					f0["function"], f0.get("symbol"), sorted(syms[f0["function"]])))
			for f in s["frames"]:
				if (f.get("module") or "").endswith("/libc.so.6") and not f["inlined"]:
					libc[f.get("function")] = f.get("symbol")
		want = {"set_binding_values": "set_binding_values.part.0",
			"_nl_make_l10nflist": "_nl_make_l10nflist.localalias"} if glibc else {}
		for fn, sym in want.items():
			if libc.get(fn) != sym:
				errs.append("libc's %s: symbol %r, not %r" % (fn, libc.get(fn), sym))
		named = [fn for fn in libc if fn and (".part." in fn or fn.endswith(".localalias"))]
		if glibc and named:
			errs.append("libc frames named with a clone's suffix: %s" % sorted(named))
		return errs
	return check


def case_clones_nodebug(work):
	"""v_clones without its debug info: only the known clone suffixes are cut."""
	binary = work.path("v_clones")
	subprocess.run([OBJCOPY, "--strip-debug", victim("v_clones"), binary], check=True)
	rc, rep = sym_trace(work, ["-c", binary])
	errs = sym_check(rep, read_truth(work), clones_specs(binary, None),
			 {realpath(binary)}, work.read("tracer.stdout"),
			 work.read("report.folded"))
	errs += check_clone_symbols(binary, False)(work, rep, None)
	common_checks(work, rc, 0, errs)
	return errs



CASES = [
	("sym_clones", TRACE, [],
	 sym_case("v_clones", clones_specs, extra=check_clone_symbols(victim("v_clones"), True))),
	("sym_clones_nodebug", TRACE, [OBJCOPY], case_clones_nodebug),
	("sym_clones_cxx", TRACE, [], sym_case("v_clones_cxx", clones_cxx_specs,
						extra=check_cxx_clone_symbols)),
]
