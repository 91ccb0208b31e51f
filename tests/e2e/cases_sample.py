# SPDX-License-Identifier: GPL-2.0
"""--sample and -s: estimates against the victim's truth.

The figures are random, so every case draws with a fixed seed
(MEMLEAKBPF_SAMPLE_SEED: the main thread's draws are the same in every run,
and these victims have one thread). The tolerance is the one the tracer
prints, derived from the sampled blocks' variance: each site's truth must
lie within its 95% interval ("bytes_interval"), and never further than 3
standard deviations from the estimate. Blocks far above the mean are always
taken: exact, an interval of width 0. A site that freed everything is not
listed. Frees of sampled and unsampled blocks alike leave no untracked free
(a free of a block never sampled is nothing to count). Calls are counted
exactly at the entry. The same seed gives the same figures twice, with
and without uprobe sessions. -s 1 takes every block at weight 1: the
figures of every API, threads and C++ exact. pprof's
profile carries the estimates and the period (go tool pprof -raw, -top).
make demo's victim, leaking at a server's rate, gets its leak verdict at
parse_header under --sample 512K; its bounded cache none.
"""

import os
import re
import statistics
import time

import lib
from lib import CaseFailed, ERROR, TRACE, TRACER, command_case, error_case, load_report, \
	read_truth, tracer_env, victim, wait_exit
from cases_outputs import GO, go_pprof

SEED = "1"
Z95 = 1.959963984540054
# What each victim asks of the heap, call by call (its sources' headers).
SAMPLE_CALLS = 126008	# v_sample: 100,000 + 2,000 + 8 + 20,000 + 2 * (1,000 + 1,000)
CXX_CALLS = 122000	# v_sample_cxx: 60,000 + 60,000 + 2,000
APIS_CALLS = 112000	# v_sample_apis: 4 * 25,000 + 10,000 + 2,000


def run_sampled(work, vname, args, tag="tracer", extra_env=None, vargs="", truth=True):
	"""memleakbpf ARGS --json -c 'victim VARGS', with the fixed seed: (report, truth, stdout);
	truth None for a victim that writes none."""
	js = work.path(tag + ".json")
	env = tracer_env(work)
	env["MEMLEAKBPF_SAMPLE_SEED"] = SEED
	env.update(extra_env or {})
	argv = [TRACER, "--json", js] + list(args) + ["-c", (victim(vname) + " " + vargs).strip()]
	p = work.start(argv, env=env, stdin=lib.subprocess.DEVNULL, tag=tag)
	rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c " + vname)
	if rc != 0:
		raise CaseFailed("memleakbpf exited %s (see %s.stderr)" % (rc, tag))
	if not os.path.exists(js):
		raise CaseFailed("no JSON report written")
	return load_report(js), read_truth(work) if truth else None, work.read(tag + ".stdout")


def site_of(rep, name):
	for s in rep.get("sites") or []:
		if ((s.get("frame") or {}).get("function") or "") == name:
			return s
	return None


def check_sites(rep, truth, always=(), family=False):
	"""Each truth site within its printed interval and 3 sd; `always` sites exact.
	family: instead, each within z sd, z such that all k sites hold together with
	probability 0.95 (Bonferroni): six sites each within its own 95% interval hold
	together only 74% of the time."""
	errs = []
	z = statistics.NormalDist().inv_cdf(1 - 0.05 / (2 * len(truth))) if family else 3
	for t in truth:
		s = site_of(rep, t["site"])
		if s is None:
			errs.append("%s: no site in the report" % t["site"])
			continue
		lo, hi = s["bytes_interval"]
		sd = (hi - s["bytes"]) / Z95
		lib.log("  %-12s truth %10d  estimate %10d  95%% [%d, %d]  %d samples" % (
			t["site"], t["bytes"], s["bytes"], lo, hi, s["samples"]))
		if not family and not lo <= t["bytes"] <= hi:
			errs.append("%s: truth %d bytes outside the 95%% interval [%d, %d] of %d (%d samples)" % (
				t["site"], t["bytes"], lo, hi, s["bytes"], s["samples"]))
		if abs(s["bytes"] - t["bytes"]) > z * sd + 1:
			errs.append("%s: estimate %d more than %.2f sd (%.0f) from the truth %d" % (
				t["site"], s["bytes"], z, sd, t["bytes"]))
		if t["site"] in always and (s["bytes"] != t["bytes"] or s["allocs"] != t["allocs"] or
					   hi != lo):
			errs.append("%s: %d bytes in %d, interval [%d, %d]: not exact (%d in %d)" % (
				t["site"], s["bytes"], s["allocs"], lo, hi, t["bytes"], t["allocs"]))
	return errs


def check_common(rep, text, method, mean, calls):
	errs = []
	want = {"method": method, "mean": mean, "seed": int(SEED)}
	got = rep.get("sampling") or {}
	if {k: got.get(k) for k in want} != want:
		errs.append("sampling %r, expected %r" % (got, want))
	# Calls: the victim's, and at most a few of its C library's start-up.
	if not calls <= got.get("calls", 0) <= calls + 50:
		errs.append("sampling.calls %r, expected the victim's %d (exactly, at the entry)" % (
			got.get("calls"), calls))
	if rep["totals"].get("untracked_frees"):
		errs.append("%d untracked frees: frees of unsampled blocks are not counted" %
			    rep["totals"]["untracked_frees"])
	if "Sampling: " not in text or not re.search(r"Site 1: ~\S+ \S+ ±", text):
		errs.append("the text report does not say it sampled, or marks no estimate")
	return errs


def case_bytes(work):
	rep, truth, text = run_sampled(work, "v_sample", ["--sample", "64K", "--pprof",
							   work.path("s.pb.gz")])
	errs = check_common(rep, text, "bytes", 65536, SAMPLE_CALLS)
	errs += check_sites(rep, truth, always=("site_big",))
	if site_of(rep, "site_churn"):
		errs.append("site_churn listed: it freed everything")
	lo, hi = rep["totals"]["bytes_interval"]
	whole = sum(t["bytes"] for t in truth)
	if not lo <= whole <= hi:
		errs.append("total truth %d outside [%d, %d]" % (whole, lo, hi))
	# The same seed, the same draws: the same figures; also without uprobe
	# sessions (malloc's return probe then runs for every call, sampled or not).
	again, _, _ = run_sampled(work, "v_sample", ["--sample", "64K"], tag="again",
				  extra_env={"MEMLEAKBPF_BENCH_NO_SESSION": "1"})
	for t in truth:
		a, b = site_of(rep, t["site"]), site_of(again, t["site"])
		if b is None or (a["bytes"], a["samples"]) != (b["bytes"], b["samples"]):
			errs.append("%s: %s then %s with the same seed" % (
				t["site"], a and (a["bytes"], a["samples"]), b and (b["bytes"], b["samples"])))
	if os.access(GO, os.X_OK):
		errs += check_pprof(work, rep)
	else:
		lib.log("  no go: the profile is not read back")
	return errs


def check_pprof(work, rep):
	raw = go_pprof(work, ["-raw", "-symbolize=none", work.path("s.pb.gz")], "pprof-raw")
	errs = []
	if "PeriodType: space bytes" not in raw or "Period: 65536" not in raw:
		errs.append("the profile's period is not space/bytes 65536 (see pprof-raw.txt)")
	top = go_pprof(work, ["-top", "-sample_index=inuse_space", "-unit=B", "-symbolize=none",
			      "-nodefraction=0", work.path("s.pb.gz")], "pprof-top")
	m = re.search(r"Total samples = (\d+)B", top) or re.search(r"of (\d+)B total", top)
	if not m or int(m.group(1)) != rep["totals"]["outstanding_bytes"]:
		errs.append("go tool pprof's inuse_space total %s, the JSON's estimate %d" % (
			m and m.group(1), rep["totals"]["outstanding_bytes"]))
	return errs


def case_count(work):
	rep, truth, text = run_sampled(work, "v_sample", ["-s", "10"])
	errs = check_common(rep, text, "count", 10, SAMPLE_CALLS)
	return errs + check_sites(rep, truth)


def case_cxx(work):
	rep, truth, text = run_sampled(work, "v_sample_cxx", ["--sample", "64K"])
	errs = check_common(rep, text, "bytes", 65536, CXX_CALLS)
	errs += check_sites(rep, truth)
	if site_of(rep, "site_temp"):
		errs.append("site_temp listed: it deleted everything")
	return errs


def case_apis(work):
	"""calloc, realloc(NULL, n), the memalign family and valloc sampled, each call decided
	once: glibc hands realloc(NULL, n), memalign(16, n) and posix_memalign(16, n) on to
	malloc(n), which under uprobe sessions must not decide again (the estimate would be
	twice the truth, the calls counted twice). Without sessions (every call's return
	probed, the nested malloc ignored as nested), the same seed gives the same figures."""
	rep, truth, text = run_sampled(work, "v_sample_apis", ["--sample", "64K"])
	errs = check_common(rep, text, "bytes", 65536, APIS_CALLS)
	errs += check_sites(rep, truth, family=True)
	again, _, _ = run_sampled(work, "v_sample_apis", ["--sample", "64K"], tag="again",
				  extra_env={"MEMLEAKBPF_BENCH_NO_SESSION": "1"})
	for t in truth:
		a, b = site_of(rep, t["site"]), site_of(again, t["site"])
		if a is None or b is None or (a["bytes"], a["samples"]) != (b["bytes"], b["samples"]):
			errs.append("%s: %s with uprobe sessions, %s without, with the same seed" % (
				t["site"], a and (a["bytes"], a["samples"]), b and (b["bytes"], b["samples"])))
	return errs


# make demo's victim at a server's rate: 10 batches of 5,000 requests, about a
# second apart, each leaking a 512-byte header (2.4 MiB a batch, 24.4 MiB in all).
DEMO_BATCHES, DEMO_REQUESTS, DEMO_HEADER = 10, 5000, 512
DEMO_MEAN = 512 * 1024
GROWING_LINE = re.compile(r"^  \d+\. ~\+[^,]*/s.*, at (\S+) \(", re.M)


def source_line(path, needle):
	with open(os.path.join(lib.ROOT, path)) as f:
		for n, line in enumerate(f, 1):
			if needle in line:
				return n
	raise CaseFailed("%s: no line with %r" % (path, needle))


def case_demo(work):
	"""make demo's leak, named at its line under --sample 512K when it leaks at a server's rate.

	Each 512-byte header is taken with p = 1 - exp(-512/524288) = 9.76e-4, so
	make demo's own 200 leak 0.195 samples on average (P(none) = 0.82: no
	verdict can see it). 50,000 headers give K ~ Poisson(48.8) samples, P(none)
	= e^-48.8. The site is called growing when what it grew by after start-up
	(~1 s, the first report) exceeds 1.96 sd of its estimate, sqrt(K) samples'
	worth: the growth after the first two batches, ~39 samples (sd 6.2), against
	1.96 sqrt(48.8) = 13.7, is 4 sd clear. The response cache (every tenth
	request, four kept, each taken with p = 1.95e-3) and the freed bodies are
	never called growing, in any report."""
	rep, _, text = run_sampled(work, "demo_leaky", ["--sample", "512K", "1"],
				   vargs="%d %d" % (DEMO_BATCHES, DEMO_REQUESTS), truth=False)
	errs = []
	mean = (rep.get("sampling") or {}).get("mean")
	if mean != DEMO_MEAN:
		errs.append("sampling.mean %r, expected %d" % (mean, DEMO_MEAN))
	if (rep.get("memory") or {}).get("verdict") != "leak":
		errs.append("final verdict %r, not leak" % (rep.get("memory") or {}).get("verdict"))
	line = source_line("tests/victims/demo_leaky.c", "malloc(HEADER_SIZE)")
	lead = [s for s in rep.get("sites") or [] if s.get("leak_rank") == 1]
	frame = lead[0]["frame"] if lead else {}
	if (frame.get("function"), frame.get("line")) != ("parse_header", line):
		errs.append("the most leak-like site is %s:%s, not parse_header:%d" % (
			frame.get("function"), frame.get("line"), line))
	truth = DEMO_BATCHES * DEMO_REQUESTS * DEMO_HEADER
	if lead:
		lo, hi = lead[0]["bytes_interval"]
		lib.log("  parse_header: truth %d, estimate %d, 95%% [%d, %d], %d samples" % (
			truth, lead[0]["bytes"], lo, hi, lead[0]["samples"]))
		if not lo <= truth <= hi:
			errs.append("parse_header: truth %d outside [%d, %d]" % (truth, lo, hi))
	growing = set(GROWING_LINE.findall(text))
	if growing != {"parse_header"}:
		errs.append("sites called growing over the reports: %s, expected parse_header only" %
			    sorted(growing))
	return errs


COST_SAID = re.compile(r"^memleakbpf: pid \d+ makes ([\d,]+) allocations a second traced: exact "
		       r"tracing adds ([\d.]+) us or more .* about (\d+)% of its time: .* --sample 512K",
		       re.M)
# The tool's own rule (user/run/report_say.c): said from a tenth of the time on.
COST_SAID_SHARE = 0.1
FIRST_REPORT_MIN_S = 0.5


def cost_errors(vname, said, allocs):
	"""The sentence's figures against each other and against the victim's count:
	the rate is the first report's allocations over its time (0.5 s or more), so
	at most all of the victim's allocations over 0.5 s. Not a timing bound: how
	fast the machine is changes the rate, not whether the sentence holds."""
	rate, pair_us, pct = int(said[0].replace(",", "")), float(said[1]), int(said[2])
	share = rate * pair_us * 1e-6
	errs = []
	if share < COST_SAID_SHARE:
		errs.append("%s: said at %d allocations a second, %.0f%% of its time: under the "
			    "tenth it is said from" % (vname, rate, 100 * share))
	if abs(pct - 100 * min(share, 1)) > 1:
		errs.append("%s: %d allocations a second at %.1f us is %.0f%% of its time, said %d%%" %
			    (vname, rate, pair_us, 100 * min(share, 1), pct))
	if rate > allocs / FIRST_REPORT_MIN_S:
		errs.append("%s: %d allocations a second, more than its %d allocations in %.1f s" %
			    (vname, rate, allocs, FIRST_REPORT_MIN_S))
	return errs


def stress_allocs(work):
	"""Every allocation v_stress made: its "# total" notes, one per churn site."""
	return sum(int(m) for m in re.findall(r"^# total: \S+ \S+ allocs=(\d+) ", work.read("truth.txt"),
						 re.M))


def case_cost_said(work):
	"""Exact mode on a target that allocates fast says what it costs and names --sample, once;
	on one that allocates little, says nothing of it."""
	errs = []
	for vname, args, want in (("v_stress", "2 200000", True), ("v_basic", "", False)):
		p = work.start([TRACER, "-c", "%s %s" % (victim(vname), args)], env=tracer_env(work),
			       stdin=lib.subprocess.DEVNULL, tag=vname)
		rc = wait_exit(p, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c " + vname)
		said = COST_SAID.findall(work.read(vname + ".stderr"))
		if rc != 0 or len(said) != (1 if want else 0):
			errs.append("%s: exit %s, the cost said %d times, expected %d" % (
				vname, rc, len(said), 1 if want else 0))
		elif want:
			lib.log("  %s: %s" % (vname, said[0]))
			errs += cost_errors(vname, said[0], stress_allocs(work))
	return errs


CASES = [
	# -s 1 takes every call at weight 1: every figure exact, every API.
	("sample_rate_one_apis", TRACE, [], command_case("{V}/v_apis", "v_apis", "v_apis.c",
							 extra_args=["-s", "1"])),
	("sample_rate_one_threads", TRACE, [], command_case("{V}/v_threads", "v_threads",
							    "v_threads.c", extra_args=["-s", "1"])),
	("sample_rate_one_cxx", TRACE, [], command_case("{V}/v_cxx", "v_cxx", "v_cxx.cc",
							extra_args=["-s", "1"])),
	("sample_bytes_victim", TRACE, [], case_bytes),
	("sample_count_victim", TRACE, [], case_count),
	("sample_cxx", TRACE, [], case_cxx),
	("sample_apis", TRACE, [], case_apis),
	("sample_demo_leak", TRACE, [], case_demo),
	("sample_cost_said", TRACE, [], case_cost_said),
	("sample_reach_refused", ERROR, [],
	 error_case(lambda: ["--sample", "512K", "--reach", "-c", "/bin/true"])),
	("sample_bad_size", ERROR, [], error_case(lambda: ["--sample", "12X", "-c", "/bin/true"])),
	("sample_both", ERROR, [], error_case(lambda: ["--sample", "64K", "-s", "10", "-c", "/bin/true"])),
]
