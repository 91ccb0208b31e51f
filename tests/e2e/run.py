#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""End-to-end tests: run the real ./memleakbpf on the victims and compare.

Usage: tests/e2e/run.py [-v] [--keep] [--list] [--long] [--timeout S] [CASE|GLOB ...]

Each victim (tests/victims/, see truth.h there) writes TRUTH lines to the
file named by $VICTIM_TRUTH: per allocation site (a site_* function) and API,
the bytes and blocks it still holds, the line of the allocation call, and its
own callers. A case traces the victim with `--json`, groups the report's
stacks by (frames[0].function, api) and compares bytes and allocs with the
truth exactly (a site whose stacks the report does not all write, by the
site's figures: see "Sites" in docs/ANALYSIS.md). It also checks the sites, each
the exact sum of its stacks, and the stacks written and left out adding up
to the totals, that no other victim site holds anything
(freed sites, blocks from before a -p attach), the caller chain in frames[1..],
frames[0]'s module, file and line, the exit status, the one
"memleakbpf: tracing" line, the totals against the stacks, and that nothing
was dropped.

Error cases check that a bad command line gives exactly one stderr line
starting with "memleakbpf: " and a non-zero exit, within a few seconds.

Tracing cases need root, /sys/kernel/btf/vmlinux and ./memleakbpf; without
them they are reported as skipped, never passed. Output: one line per case
(`ok NAME`, `FAIL NAME: why`, `skip NAME: why`), then
`e2e: N passed, N failed, N skipped`; exit status 1 when any case failed.
$MEMLEAKBPF overrides the tracer's path. A failed case keeps its files (report JSON, stdout, stderr, truth) in the
directory named in its FAIL line; -v also prints the details to stderr.

Where things are, in tests/e2e/:
  run.py               this runner: the command line, the run, the summary
  lib.py               the harness every case uses: Work, the waits, the
                       truth, check_report, command_case, error_case
  cases_basics.py      every API, threads, C++, static, preloaded allocators,
                       exit statuses, shell commands, -p, signals; usage errors
  cases_outputs.py     gperftools heap profiles and snapshots, flame graphs, sites
                       and what the files leave out, --help, man page
  cases_pprof.py       pprof's profile.proto read by go tool pprof: names, lines,
                       C++, Python, stripped programs, -diff_base of snapshots
  cases_placement.py   probes past the entry against probes at the entry
  cases_symbols.py     exact frames: inlined, dlopen, debug info, stripped,
                       PIE, C++, JIT
  cases_clones.py      compiler clones named as the source names them
  cases_unwinding.py   CFI unwinding, with and without frame pointers
  cases_sites.py       sites at the user's line through containers and packages
  cases_insight.py     leak or not: trends, churn, fragmentation, peak, timeline
  cases_peak.py        the exact peak against massif, heap and mmaps apart, the
                       verdict at exit
  cases_python.py      Python frames, under -c and -p, pymalloc and malloc
  cases_torch.py       a PyTorch training job (run by name, or `make e2e-torch`:
                       not in the default run, its start-up checks depend on the
                       machine's load); start-up is not a leak, its leak is
  cases_stress.py      contention and capacity (`make stress`: at full size)
  cases_faults.py      the target or the tracer killed, stopped, interrupted;
                       outputs that cannot be written
  cases_privileges.py  planted symlinks, sudo, capabilities, containers
  cases_limits.py      tables too big, interrupts while loading, refusals at once
  cases_follow.py      processes the target starts: --follow, and the count without it
  cases_sample.py      --sample and -s: estimates within their intervals of the truth
  cases_bcc.py         bcc's options: -a, -t, --symbols-prefix, --sort, and those
                       accepted or refused
  cases_kernel.py      -k, the kernel's allocations: the pipes a victim keeps open
  cases_truth.py       real programs' reports read as their users read them: the
                       runtime's own blocks against memcheck, the peak's lines, words
Each cases_*.py ends with its CASES, (name, kind, needs, function) tuples;
run.py runs them module by module in the order of its MODULES: all of them
but the torch job's and the LONG ones, which --long runs (`make e2e-long`,
part of `make stress`). -v says each case's time.
"""

import fnmatch
import shutil
import signal
import sys
import tempfile
import time

import lib
import cases_basics
import cases_outputs
import cases_pprof
import cases_placement
import cases_symbols
import cases_clones
import cases_unwinding
import cases_sites
import cases_insight
import cases_peak
import cases_python
import cases_torch
import cases_stress
import cases_faults
import cases_privileges
import cases_limits
import cases_reach
import cases_follow
import cases_sample
import cases_bcc
import cases_kernel
import cases_truth
from lib import CaseFailed, Skip, TRACE, Work, build_victims, log, skip_reason


# Every area's cases, in this order: the order of a run (and of --list).
MODULES = (cases_basics, cases_outputs, cases_pprof, cases_placement, cases_symbols,
	   cases_clones, cases_unwinding, cases_sites,
	   cases_insight, cases_peak, cases_python, cases_torch, cases_stress, cases_faults,
	   cases_privileges, cases_limits, cases_reach, cases_follow, cases_sample, cases_bcc,
	   cases_kernel, cases_truth)
CASES = [case for m in MODULES for case in m.CASES]

# The cases of 10 s or more on the 2-vCPU test machine (run.py -v, 2026-11-27:
# 10 to 38 s each, 276 s of the run's 915): `make test` leaves them to
# `make e2e-long` to stay within its 15 minutes. The default run keeps
# quicker cases of each area: peak_massif_sqlite3, the other memcheck
# comparisons, py_objects_sample_c, follow_exec_*, html_*, insight_frag_trim
# and _early, fold_churn, kernel_pipes, memory_kept_free.
LONG = ("py_objects_exit", "follow_exec_fd_limit", "peak_massif_jq", "churn_outran",
	"follow_exec_release", "py_objects_c", "peak_massif_gawk", "snapshot_html",
	"insight_frag_jemalloc", "insight_frag_tcmalloc", "html_python",
	"reach_python_memcheck", "churn_among_held", "kernel_pipes_growing",
	"sample_demo_leak", "tables_outside_rss")


def main(argv):
	keep, long_ones, names = False, False, []
	args = list(argv)
	while args:
		a = args.pop(0)
		if a == "-v":
			lib.VERBOSE = True
		elif a == "--keep":
			keep = True
		elif a == "--long":
			long_ones = True
		elif a == "--timeout":
			lib.CASE_TIMEOUT = float(args.pop(0))
		elif a == "--list":
			for name, kind, _, _ in CASES:
				print("%-24s %s" % (name, kind))
			return 0
		elif a in ("-h", "--help"):
			print(__doc__.strip())
			return 0
		else:
			names.append(a)

	selected = [c for c in CASES if any(fnmatch.fnmatch(c[0], n) for n in names) or
		    (long_ones and c[0] in LONG) or
		    (not names and not long_ones and c not in cases_torch.CASES and c[0] not in LONG)]
	unknown = [n for n in names if not any(fnmatch.fnmatch(c[0], n) for c in CASES)] + \
		  [n for n in LONG if not any(c[0] == n for c in CASES)]
	if unknown:
		sys.stderr.write("run.py: no case named %s (--list)\n" % ", ".join(unknown))
		return 2

	build_err = None
	if any(c[1] == TRACE for c in selected):
		build_err = build_victims()
	base = tempfile.mkdtemp(prefix="memleakbpf-e2e-")
	passed = failed = skipped = 0
	for name, kind, needs, fn in selected:
		why = skip_reason(kind, needs)
		if why:
			print("skip %s: %s" % (name, why), flush=True)
			skipped += 1
			continue
		work = Work(base, name)
		began = time.monotonic()
		try:
			if kind == TRACE and build_err:
				raise CaseFailed(build_err)
			errs = fn(work)
		except Skip as e:
			print("skip %s: %s" % (name, e), flush=True)
			skipped += 1
			continue
		except CaseFailed as e:
			errs = [str(e)]
		except Exception as e:	# a bug here must not pass a case
			errs = ["run.py error: %s: %s" % (type(e).__name__, e)]
		finally:
			work.close()
		if errs:
			tail = work.read("tracer.stderr").strip().splitlines()[-2:]
			if tail and kind == TRACE:
				errs.append("tracer stderr: " + " | ".join(tail))
			failed += 1
			with open(work.path("errors.txt"), "w") as f:
				f.write("\n".join(errs) + "\n")
			more = " (+%d more)" % (len(errs) - 3) if len(errs) > 3 else ""
			print("FAIL %s: %s%s [%s]" % (name, "; ".join(errs[:3]), more, work.dir), flush=True)
			for e in errs:
				log("    " + e)
		else:
			passed += 1
			print("ok %s" % name, flush=True)
		log("  %s took %.1f s" % (name, time.monotonic() - began))
	if not failed and not keep:
		shutil.rmtree(base, ignore_errors=True)
	elif failed:
		log("files of failed cases kept in %s" % base)
	print("e2e: %d passed, %d failed, %d skipped" % (passed, failed, skipped))
	return 1 if failed else 0


def interrupts_default():
	"""Run from a script's background job (`.ci/run &`), the harness inherits
	SIGINT ignored, and so would every tracer it starts: a signal sent before
	a tracer's first instruction (tracer_sigint_any's "after 0 s") would be
	lost. Ctrl-C's usual handling here; after exec, the default in each child."""
	if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
		signal.signal(signal.SIGINT, signal.default_int_handler)
	if signal.getsignal(signal.SIGTERM) == signal.SIG_IGN:
		signal.signal(signal.SIGTERM, signal.SIG_DFL)


if __name__ == "__main__":
	interrupts_default()
	sys.exit(main(sys.argv[1:]))
