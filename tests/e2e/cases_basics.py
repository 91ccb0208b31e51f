# SPDX-License-Identifier: GPL-2.0
"""Tracing basics and usage errors.

Every allocator API (v_apis), a plain victim, threads, C++ and a static
binary; tcmalloc and jemalloc through LD_PRELOAD; -c's exit status (exit,
return from main) and shell commands (exec, a pipe, a redirect, a nested sh);
--folded; -p until the target exits or until SIGINT; SIGINT and SIGTERM to
the tracer under -c (SIGTERM with -t too). Then --help and the usage errors: exactly one stderr line
starting with "memleakbpf: " and a non-zero exit, within a few seconds.
"""

import os
import re
import signal
import subprocess
import time

import cases_placement
import lib
from lib import (CaseFailed, ERROR, JEMALLOC, LineReader, Skip, TCMALLOC, TRACE, TRACER,
	TRACING_LINE, check_report, command_case, common_checks, error_case, find_line, finish_victim,
	go_until, load_report, read_truth, start_tracing, tracer_env, tracing_line_count, uses_allocator,
	victim, wait_exit, wait_for)


def attach_case(work, on_leaked):
	"""v_wait under -p: READY, attach, trigger, LEAKED, then on_leaked(...)."""
	binary = victim("v_wait")
	js = work.path("report.json")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	v = work.start([binary], env=tracer_env(work), stdin=subprocess.PIPE,
		       stdout=subprocess.PIPE, tag="victim")
	out = LineReader(v.stdout)
	ready = out.expect("READY pid=", min(deadline, time.monotonic() + lib.STEP_TIMEOUT))
	pid = int(ready.split("=", 1)[1])
	if pid != v.pid:
		raise CaseFailed("victim says pid %d, started as %d" % (pid, v.pid))

	t = start_tracing(work, ["--json", js, "-p", str(pid)],
			  min(deadline, time.monotonic() + lib.STEP_TIMEOUT))
	go_until(v, out, "LEAKED", min(deadline, time.monotonic() + lib.STEP_TIMEOUT))
	rc = on_leaked(v, t, deadline)

	errs = []
	truth = read_truth(work)
	if os.path.exists(js):
		errs += check_report(load_report(js), truth, binary, "v_wait.c",
				     pid=pid, exclude_phase="pre")
	else:
		errs.append("no JSON report written")
	common_checks(work, rc, 0, errs)
	return errs


def case_attach(work):
	def on_leaked(v, t, deadline):
		finish_victim(v, deadline)
		return wait_exit(t, deadline, "memleakbpf -p after its target exited")
	return attach_case(work, on_leaked)


def case_attach_sigint(work):
	def on_leaked(v, t, deadline):
		t.send_signal(signal.SIGINT)
		rc = wait_exit(t, deadline, "memleakbpf -p after SIGINT")
		if v.poll() is not None:
			raise CaseFailed("the target died with the tracer (status %s)" % v.returncode)
		finish_victim(v, deadline)
		return rc
	return attach_case(work, on_leaked)


def signal_c_case(sig, args=()):
	return lambda work: stop_command_case(work, sig, list(args))


def stop_command_case(work, sig, args):
	"""-c v_wait, `sig` to the tracer while the target still runs: both phases count."""
	binary = victim("v_wait")
	js = work.path("report.json")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	t = work.start([TRACER, "--json", js] + args + ["-c", binary], env=tracer_env(work),
		       stdin=subprocess.PIPE, tag="tracer")
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	wait_for(lambda: tracing_line_count(work.read("tracer.stderr")), step(),
		 repr(TRACING_LINE), alive=t)
	ready = wait_for(lambda: find_line(work.read("tracer.stdout"), "READY pid="), step(),
			 "READY from v_wait (through the tracer's stdin/stdout)", alive=t)
	pid = int(ready.split("=", 1)[1])
	work.pids.append((pid, "v_wait"))
	t.stdin.write(b"go\n")
	t.stdin.flush()
	wait_for(lambda: find_line(work.read("tracer.stdout"), "LEAKED"), step(), "LEAKED", alive=t)
	t.send_signal(sig)
	rc = wait_exit(t, deadline, "memleakbpf -c after %s" % signal.Signals(sig).name)
	try:
		t.stdin.close()	# v_wait's second wait ends at EOF, if it is still there
	except OSError:
		pass

	errs = []
	truth = read_truth(work)
	if os.path.exists(js):
		errs += check_report(load_report(js), truth, binary, "v_wait.c", pid=pid)
	else:
		errs.append("no JSON report written")
	# The contract: the signal reaches the command too, the final report is
	# written, and -c exits with the command's status (128 + signal here).
	common_checks(work, rc, 128 + sig, errs)
	return errs


# A command that takes its time over SIGINT: 4 s in its handler, then exit 3.
SLOW_SIGINT = ("/usr/bin/python3 -c 'import signal, sys, time\n"
	       "signal.signal(signal.SIGINT, lambda *a: (time.sleep(4), sys.exit(3)))\n"
	       "print(\"READY\", flush=True)\ntime.sleep(60)'")


def case_sigint_slow_command(work):
	"""SIGINT to -c whose command outlives the grace: 130 and a line, not 0, not a hang."""
	js = work.path("report.json")
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	t = work.start([TRACER, "--json", js, "-c", SLOW_SIGINT], env=tracer_env(work),
		       stdin=subprocess.DEVNULL, tag="tracer")
	wait_for(lambda: find_line(work.read("tracer.stdout"), "READY"),
		 min(deadline, time.monotonic() + lib.STEP_TIMEOUT), "READY from the command", alive=t)
	t.send_signal(signal.SIGINT)
	rc = wait_exit(t, deadline, "memleakbpf -c after SIGINT")
	errs = [] if os.path.exists(js) else ["no JSON report written"]
	said = [l for l in work.read("tracer.stderr").splitlines() if "after SIGINT" in l]
	if not said or not re.match(r"memleakbpf: pid \d+ still runs 2 s after SIGINT: left running",
				    said[0]):
		errs.append("stderr does not say the command was left running: %r" % said)
	common_checks(work, rc, 128 + signal.SIGINT, errs)
	return errs


def check_folded(work, truth):
	"""--folded: `frame;frame;... N` lines, every truth site named somewhere."""
	text = work.read("report.folded")
	errs = []
	if not text.strip():
		return ["folded report empty or missing"]
	for line in text.splitlines():
		if not re.match(r"^\S.* \d+$", line):
			errs.append("folded line not 'stack count': %r" % line[:120])
			break
	for t in truth:
		if t["site"] not in text:
			errs.append("folded report does not name %s" % t["site"])
	return errs


# The names of the allocation API, by the test's own reading of `nm -D`:
# standard C and C++, glibc's __libc_*, gperftools' tc_*, jemalloc's *allocx
# (xallocx too, a resize in place) and tbbmalloc's proxy. Not the queries
# (nallocx, sallocx, malloc_usable_size).
ALLOC_NAME = re.compile(r"^(malloc|calloc|realloc|reallocarray|free|cfree|posix_memalign|"
			r"aligned_alloc|memalign|valloc|pvalloc|mmap|mmap64|munmap|mremap|"
			r"_Zn[wa]m\w*|_Zd[la]Pv\w*|"
			r"__libc_(malloc|calloc|realloc|free|cfree|memalign|valloc|pvalloc)|"
			r"__posix_memalign|__TBB_malloc_proxy|mallocx|rallocx|xallocx|dallocx|sdallocx|"
			r"tc_(malloc|malloc_skip_new_handler|free|free_sized|cfree|calloc|realloc|"
			r"memalign|posix_memalign|valloc|pvalloc|new\w*|delete\w*))$")


TCMALLOC_FULL = "/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4"	# with the heap profiler
TBBMALLOC = "/usr/lib/x86_64-linux-gnu/libtbbmalloc_proxy.so.2"	# its __libc_free is its own


def alias_addresses(path):
	"""{address: [names]} of the allocation functions path defines (nm -D)."""
	out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True)
	by_addr = {}
	for line in out.stdout.splitlines():
		f = line.split()
		if len(f) == 3 and f[1] in "TWi" and ALLOC_NAME.match(f[2].split("@")[0]):
			by_addr.setdefault(int(f[0], 16), []).append(f[2].split("@")[0])
	return by_addr


def probes_every_alias(path):
	"""-v names every entry point of the allocator at path, each once per image probed."""
	def check(work, truth):
		errs = uses_allocator(path)(work, truth)
		by_addr = alias_addresses(path)
		addr_of = {n: a for a, names in by_addr.items() for n in names}
		probed = {}
		for line in work.read("tracer.stderr").splitlines():
			m = cases_placement.PROBE_AT.match(line)
			if m and os.path.realpath(m.group(2)) == os.path.realpath(path):
				a = addr_of.get(m.group(1))
				if a is None:
					errs.append("-v: %s probed in %s, not an allocation function there"
						    % (m.group(1), path))
				probed[a] = probed.get(a, 0) + 1
		images = max(probed.values(), default=0)
		for a, names in sorted(by_addr.items()):
			if probed.get(a, 0) != images or not images:
				errs.append("-v: %s (%s) probed %d times in %s, %d images probed"
					    % (names[0], "/".join(names), probed.get(a, 0), path, images))
		return errs
	return check


# -v's line for each probe of each image: placed anew, or kept through an exec.
PROBE_NAMED = re.compile(r"^memleakbpf:\s+(\S+) in (.+?): (?:probe at|entry and return probes at|"
			 r"probes kept through the exec)")


def check_named_per_image(images):
	"""-v names the object of every probe once for each of the images run in
	the target's process (probes kept through an exec too)."""
	def check(work, truth):
		named = {}
		for line in work.read("tracer.stderr").splitlines():
			m = PROBE_NAMED.match(line)
			if m:
				named[m.groups()] = named.get(m.groups(), 0) + 1
		if not named:
			return ["-v names no probe with its object"]
		return ["-v names %s in %s %d times, for %d images" % (sym, path, n, images)
			for (sym, path), n in sorted(named.items()) if n != images]
	return check


def free_pid():
	pid_max = int(open("/proc/sys/kernel/pid_max").read())
	for pid in range(pid_max - 1, 1, -1):
		if not os.path.exists("/proc/%d" % pid):
			return pid
	raise Skip("no free pid")


def case_help(work):
	p = work.start([TRACER, "--help"], stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(p, time.monotonic() + lib.ERROR_TIMEOUT, "memleakbpf --help")
	errs = []
	if rc != 0:
		errs.append("exit status %s, expected 0" % rc)
	if "-p" not in work.read("tracer.stdout"):
		errs.append("no usage on stdout")
	return errs


CASES = [
	# (name, kind, needs extra files, function)
	("apis", TRACE, [], command_case("{V}/v_apis", "v_apis", "v_apis.c")),
	# Every API on the preloaded allocators too (jemalloc has no pvalloc:
	# glibc's would hand jemalloc a block of its own heap to free).
	("apis_tcmalloc", TRACE, [TCMALLOC],
	 command_case("env LD_PRELOAD={TC} {V}/v_apis", "v_apis", "v_apis.c",
		      check=uses_allocator(TCMALLOC))),
	("apis_jemalloc", TRACE, [JEMALLOC],
	 command_case("env VICTIM_NO_PVALLOC=1 LD_PRELOAD={JE} {V}/v_apis", "v_apis", "v_apis.c",
		      check=uses_allocator(JEMALLOC))),
	# Other names of the API: mmap64 (tcmalloc's own), glibc's __libc_*
	# (glibc's heap under jemalloc), tc_* and jemalloc's *allocx; with -v,
	# every entry point of the allocator probed once, named with its object.
	("aliases", TRACE, [], command_case("{V}/v_aliases", "v_aliases", "v_aliases.c")),
	("aliases_tcmalloc", TRACE, [TCMALLOC],
	 command_case("env LD_PRELOAD={TC} {V}/v_aliases", "v_aliases", "v_aliases.c",
		      extra_args=("-v",), check=probes_every_alias(TCMALLOC))),
	("aliases_tcmalloc_full", TRACE, [TCMALLOC_FULL],
	 command_case("env LD_PRELOAD=%s {V}/v_aliases" % TCMALLOC_FULL, "v_aliases", "v_aliases.c",
		      extra_args=("-v",), check=probes_every_alias(TCMALLOC_FULL))),
	("aliases_tbbmalloc", TRACE, [TBBMALLOC],
	 command_case("env LD_PRELOAD=%s {V}/v_aliases" % TBBMALLOC, "v_aliases", "v_aliases.c",
		      extra_args=("-v",), check=probes_every_alias(TBBMALLOC))),
	("aliases_jemalloc", TRACE, [JEMALLOC],
	 command_case("env LD_PRELOAD={JE} {V}/v_aliases", "v_aliases", "v_aliases.c",
		      extra_args=("-v",), check=probes_every_alias(JEMALLOC))),
	# The shell execs the victim in its own process: the C library's probes
	# stay through the exec, and -v names them again for the new image.
	("verbose_exec", TRACE, [],
	 command_case("exec {V}/v_basic >/dev/null", "v_basic", "v_basic.c", extra_args=("-v",),
		      check=check_named_per_image(2))),
	("basic", TRACE, [], command_case("{V}/v_basic", "v_basic", "v_basic.c")),
	("threads", TRACE, [], command_case("{V}/v_threads", "v_threads", "v_threads.c")),
	("cxx", TRACE, [], command_case("{V}/v_cxx", "v_cxx", "v_cxx.cc")),
	("static", TRACE, [], command_case("{V}/v_static", "v_static", "v_static.c")),
	("tcmalloc", TRACE, [TCMALLOC],
	 command_case("env LD_PRELOAD={TC} {V}/v_basic", "v_basic", "v_basic.c",
		      check=uses_allocator(TCMALLOC))),
	("jemalloc", TRACE, [JEMALLOC],
	 command_case("env LD_PRELOAD={JE} {V}/v_basic", "v_basic", "v_basic.c",
		      check=uses_allocator(JEMALLOC))),
	("cxx_tcmalloc", TRACE, [TCMALLOC],
	 command_case("env LD_PRELOAD={TC} {V}/v_cxx", "v_cxx", "v_cxx.cc",
		      check=uses_allocator(TCMALLOC))),
	("cxx_jemalloc", TRACE, [JEMALLOC],
	 command_case("env LD_PRELOAD={JE} {V}/v_cxx", "v_cxx", "v_cxx.cc",
		      check=uses_allocator(JEMALLOC))),
	("exit_now", TRACE, [], command_case("{V}/v_exit", "v_exit", "v_exit.c", 7)),
	("exit_return", TRACE, [],
	 command_case("{V}/v_exit return", "v_exit", "v_exit.c", 5)),
	# Shell syntax: run through /bin/sh -c. dash forks for every command but an
	# `exec`: shell_exec traces the victim in the shell's own process, the
	# others in the first child the shell starts, which tracing follows.
	("shell_exec", TRACE, [],
	 command_case("exec {V}/v_exit return >/dev/null 2>&1", "v_exit", "v_exit.c", 5)),
	("shell_pipe", TRACE, [],
	 command_case("{V}/v_basic | cat >/dev/null", "v_basic", "v_basic.c", 0)),
	("shell_redirect", TRACE, [],
	 command_case("{V}/v_exit return >/dev/null 2>&1", "v_exit", "v_exit.c", 5)),
	("nested_sh", TRACE, [],
	 command_case("sh -c '{V}/v_exit return'", "v_exit", "v_exit.c", 5)),
	("folded", TRACE, [],
	 command_case("{V}/v_exit", "v_exit", "v_exit.c", 7,
		      ["--folded", "{W}/report.folded"], check_folded)),
	("attach", TRACE, [], case_attach),
	("attach_sigint", TRACE, [], case_attach_sigint),
	("sigint_c", TRACE, [], signal_c_case(signal.SIGINT)),
	("sigterm_c", TRACE, [], signal_c_case(signal.SIGTERM)),
	# -t's thread starts before SIGTERM is held for the loop: it took it, and the report was lost.
	("sigterm_trace_c", TRACE, [], signal_c_case(signal.SIGTERM, ["-t"])),
	# A closed terminal: the final report all the same (it was a death by SIGHUP, no report).
	("sighup_c", TRACE, [], signal_c_case(signal.SIGHUP)),
	("sigint_slow_command", TRACE, ["/usr/bin/python3"], case_sigint_slow_command),

	("help", ERROR, [], case_help),
	("err_pid_and_command", ERROR, [], error_case(lambda: ["-p", "1", "-c", "true"])),
	("err_unknown_option", ERROR, [], error_case(lambda: ["--no-such-option", "-c", "true"])),
	("err_pid_not_number", ERROR, [], error_case(lambda: ["-p", "12x"])),
	("err_pid_missing", ERROR, [], error_case(lambda: ["-p", str(free_pid())])),
	("err_command_not_found", ERROR, [],
	 error_case(lambda: ["-c", "memleakbpf-e2e-no-such-command"])),
	("err_json_dir_missing", ERROR, [],
	 error_case(lambda: ["--json", "/nonexistent-memleakbpf-e2e/report.json", "-c", "true"])),
]
