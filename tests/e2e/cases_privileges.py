# SPDX-License-Identifier: GPL-2.0
"""Privileges and containers: whose files, whose uid, whose /tmp.

Outputs in a sticky world-writable directory where another user planted
symlinks and a FIFO, and in another user's own directories (sticky or not); the -c command's uid, groups and HOME under sudo (and
-u); without the capabilities, one line naming exactly those missing; a
container's perf map that is a symlink within the container's own /tmp.
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import lib
from lib import (CaseFailed, LineReader, TRACE, TRACER, TRACING_LINE, UNSHARE, check_report,
	children, comm, common_checks, find_line, finish_victim, go_until, load_report, log, open_bytes,
	read_truth, run_command_case, start_tracing, tracer_env, tracing_line_count, victim, wait_exit,
	wait_for)
from cases_symbols import jit_specs, start_private_tmp, sym_check


SETPRIV = shutil.which("setpriv") or "setpriv (util-linux: not on PATH)"
CHROOT = shutil.which("chroot") or "chroot (coreutils: not on PATH)"
NOBODY = 65534


def as_nobody(argv):
	return subprocess.run([SETPRIV, "--reuid", str(NOBODY), "--regid", str(NOBODY),
			       "--clear-groups"] + argv, stdout=subprocess.PIPE,
			      stderr=subprocess.STDOUT)


def case_output_symlinks(work):
	"""Outputs in a sticky world-writable directory where uid 65534 planted a
	symlink to a root file (before the start and during the run), a dangling
	symlink and a FIFO: none is followed or opened; each report replaces the
	planted entry, atomically. A symlink root made there is followed."""
	sticky = tempfile.mkdtemp(prefix="memleakbpf-e2e-sticky-")
	try:
		return output_symlinks(work, sticky)
	finally:
		shutil.rmtree(sticky, ignore_errors=True)


def output_symlinks(work, sticky):
	os.chmod(sticky, 0o1777)
	secret = work.path("secret")
	with open(secret, "w") as f:
		f.write("root's file\n")
	p = lambda name: os.path.join(sticky, name)
	errs = []
	for argv in (["ln", "-s", secret, p("j.json")], ["ln", "-s", p("created"), p("f.folded")],
		     ["mkfifo", p("g.svg")]):
		r = as_nobody(argv)
		if r.returncode:
			raise CaseFailed("as uid %d: %s: %s" % (NOBODY, " ".join(argv), r.stdout))
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	t = work.start([TRACER, "--json", p("j.json"), "--folded", p("f.folded"), "--flamegraph",
			p("g.svg"), "--pprof", p("p.pb.gz"), "-c", victim("v_wait")],
		       env=tracer_env(work), stdin=subprocess.PIPE, tag="tracer")
	wait_for(lambda: find_line(work.read("tracer.stdout"), "READY pid="), deadline,
		 "READY from v_wait", alive=t)
	r = as_nobody(["ln", "-s", secret, p("p.pb.gz")])	# after the checks at the start
	if r.returncode:
		raise CaseFailed("as uid %d: ln -s: %s" % (NOBODY, r.stdout))
	t.stdin.write(b"go\nexit\n")
	t.stdin.close()
	rc = wait_exit(t, deadline, "memleakbpf with planted outputs")
	if open(secret).read() != "root's file\n":
		errs.append("the root file a planted symlink pointed to was written")
	if os.path.lexists(p("created")):
		errs.append("a dangling symlink's target was created")
	for name, head in (("j.json", "{"), ("f.folded", ""), ("g.svg", "<?xml"), ("p.pb.gz", "\x1f\ufffd")):
		st = os.lstat(p(name))
		if not stat_is_reg(st) or st.st_uid != 0:
			errs.append("%s: not a regular file of root's (mode %o, uid %d)" % (
				name, st.st_mode, st.st_uid))
		elif not open(p(name), errors="replace").read().startswith(head):
			errs.append("%s: not the report" % name)
	common_checks(work, rc, 0, errs)
	# Root's own symlink in the same directory is followed.
	target = work.path("own-target.json")
	open(target, "w").close()
	os.symlink(target, p("own.json"))
	t = work.start([TRACER, "--json", p("own.json"), "-c", victim("v_basic")],
		       env=tracer_env(work), stdin=subprocess.DEVNULL, tag="own")
	wait_exit(t, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf --json to root's symlink")
	if not os.path.islink(p("own.json")) or not open(target).read().startswith("{"):
		errs.append("root's own symlink was not followed")
	return errs


def case_output_user_dir(work):
	"""Links uid 65534 planted in its own directories (mode 1777, and 755):
	to mode-600 files of root's, at the --json and --folded paths: not
	followed, each report replaces its link. A link there to a directory of
	root's, as a component of --json's path or as --snapshot-dir: refused in
	one line before tracing, nothing written there. Root's own link in such
	a directory is followed."""
	top = tempfile.mkdtemp(prefix="memleakbpf-e2e-userdir-")
	try:
		return output_user_dir(work, top)
	finally:
		shutil.rmtree(top, ignore_errors=True)


def planted_dir(top, name, mode):
	d = os.path.join(top, name)
	os.mkdir(d)
	os.chown(d, NOBODY, NOBODY)
	os.chmod(d, mode)
	return d


def output_user_dir(work, top):
	os.chmod(top, 0o755)
	sticky, private = planted_dir(top, "sticky", 0o1777), planted_dir(top, "private", 0o755)
	secrets, rootdir = (work.path("secret1"), work.path("secret2")), work.path("rootdir")
	os.makedirs(rootdir)
	for secret in secrets:
		with open(secret, "w") as f:
			f.write("root's file\n")
		os.chmod(secret, 0o600)
	j, fo = os.path.join(sticky, "j.json"), os.path.join(private, "f.folded")
	sub, snaps = os.path.join(private, "sub"), os.path.join(sticky, "snaps")
	for argv in (["ln", "-s", secrets[0], j], ["ln", "-s", secrets[1], fo], ["ln", "-s", rootdir, sub],
		     ["ln", "-s", rootdir, snaps]):
		r = as_nobody(argv)
		if r.returncode:
			raise CaseFailed("as uid %d: %s: %s" % (NOBODY, " ".join(argv), r.stdout))
	own, own_target = os.path.join(private, "own.json"), work.path("own-target.json")
	open(own_target, "w").close()
	os.symlink(own_target, own)
	t = work.start([TRACER, "--json", j, "--folded", fo, "--timeline", own, "-c",
			victim("v_basic")], env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(t, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf into uid 65534's directories")
	errs = []
	for secret in secrets:
		if open(secret).read() != "root's file\n":
			errs.append("root's mode-600 %s was written through uid 65534's link" % secret)
	for path, head in ((j, "{"), (fo, "")):
		st = os.lstat(path)
		if not stat_is_reg(st) or st.st_uid != 0:
			errs.append("%s: not a regular file of root's (mode %o, uid %d)" % (
				path, st.st_mode, st.st_uid))
		elif not open(path).read().startswith(head) or not os.path.getsize(path):
			errs.append("%s: not the report" % path)
	if not os.path.islink(own) or not os.path.getsize(own_target):
		errs.append("root's own link in uid 65534's directory was not followed")
	common_checks(work, rc, 0, errs)
	for opt, path in (("--json", os.path.join(sub, "out.json")), ("--snapshot-dir", snaps)):
		errs += refused(work, opt, path, "symbolic link")
	if os.listdir(rootdir):
		errs.append("written through a link into root's directory: %s" % os.listdir(rootdir))
	return errs


def refused(work, opt, path, want):
	"""memleakbpf OPT PATH: one line saying `want`, exit 2, nothing traced."""
	tag = "refused" + opt.replace("-", "_")
	p = work.start([TRACER, opt, path, "-c", victim("v_basic")], env=tracer_env(work),
		       stdin=subprocess.DEVNULL, tag=tag)
	rc = wait_exit(p, time.monotonic() + lib.ERROR_TIMEOUT, "memleakbpf %s %s" % (opt, path))
	lines = work.read(tag + ".stderr").splitlines()
	if rc == 2 and len(lines) == 1 and want in lines[0]:
		return []
	return ["%s %s: exit %s, stderr %r; expected 2 and one line saying %r" % (
		opt, path, rc, lines[:3], want)]


class TempUser:
	"""A system user of the test's own, removed at the end (useradd/userdel)."""

	def __init__(self):
		self.name = "mlbpf-e2e-%d" % os.getpid()
		r = subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
				    "/usr/sbin/nologin", self.name], stdout=subprocess.PIPE,
				   stderr=subprocess.STDOUT)
		if r.returncode:
			raise CaseFailed("useradd %s: %s" % (self.name, r.stdout.decode(errors="replace")))
		import pwd
		pw = pwd.getpwnam(self.name)
		self.uid, self.gid = pw.pw_uid, pw.pw_gid

	def run(self, argv):
		return subprocess.run([SETPRIV, "--reuid", str(self.uid), "--regid", str(self.gid),
				       "--clear-groups"] + argv, stdout=subprocess.PIPE,
				      stderr=subprocess.STDOUT)

	def remove(self):
		subprocess.run(["userdel", self.name], stdout=subprocess.DEVNULL,
			       stderr=subprocess.DEVNULL)


def case_snapshot_dir_symlink(work):
	"""--snapshot-dir names a symlink another user planted in a sticky
	world-writable directory, pointing at a directory of root's (standing for
	/etc): refused in one line, nothing written there. And a snapshot
	directory swapped for such a link while tracing: the snapshots still go
	into the directory opened at the start, never through the link."""
	sticky = tempfile.mkdtemp(prefix="memleakbpf-e2e-sticky-")
	user = TempUser()
	try:
		return snapshot_dir_symlink(work, sticky, user)
	finally:
		user.remove()
		shutil.rmtree(sticky, ignore_errors=True)


def snapshot_dir_symlink(work, sticky, user):
	os.chmod(sticky, 0o1777)
	etc = work.path("etc")
	os.makedirs(etc)
	planted = os.path.join(sticky, "snap")
	r = user.run(["ln", "-s", etc, planted])
	if r.returncode:
		raise CaseFailed("as %s: ln -s: %s" % (user.name, r.stdout))
	errs = []
	p = work.start([TRACER, "--snapshot-dir", planted, "-c", victim("v_basic")],
		       env=tracer_env(work), stdin=subprocess.DEVNULL, tag="refused")
	rc = wait_exit(p, time.monotonic() + 10, "memleakbpf --snapshot-dir planted link")
	lines = work.read("refused.stderr").splitlines()
	if rc is None or rc <= 0 or len(lines) != 1 or "symbolic link" not in lines[0]:
		errs.append("a planted --snapshot-dir link: exit %s, stderr %r; expected a one-line refusal"
			    % (rc, lines[:3]))
	errs += swapped_dir(work, etc)
	if os.listdir(etc):
		errs.append("files written through the link into root's directory: %s" % os.listdir(etc))
	return errs


def swapped_dir(work, etc):
	"""The snapshot directory renamed and a link put in its place mid-run."""
	snaps, moved = work.path("snaps"), work.path("snaps.moved")
	os.makedirs(snaps)
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	t = work.start([TRACER, "--snapshot-dir", snaps, "-c", victim("v_wait"), "0.2"],
		       env=tracer_env(work), stdin=subprocess.PIPE, tag="tracer")
	wait_for(lambda: find_line(work.read("tracer.stdout"), "READY pid="), deadline,
		 "READY from v_wait", alive=t)
	os.rename(snaps, moved)
	os.symlink(etc, snaps)
	time.sleep(0.6)	# periodic snapshots, through the descriptor
	t.stdin.write(b"go\nexit\n")
	t.stdin.close()
	rc = wait_exit(t, deadline, "memleakbpf with its snapshot directory swapped")
	errs = []
	common_checks(work, rc, 0, errs)
	if not any(n.endswith(".pb.gz") for n in os.listdir(moved)):
		errs.append("no snapshot in the directory opened at the start: %s" % os.listdir(moved))
	return errs


def stat_is_reg(st):
	import stat as stat_mod
	return stat_mod.S_ISREG(st.st_mode)


def proc_ids(pid):
	"""Uid, Gid and Groups of /proc/PID/status, and HOME/USER from its environ."""
	out = {}
	with open("/proc/%d/status" % pid) as f:
		for line in f:
			k, _, v = line.partition(":")
			if k in ("Uid", "Gid", "Groups"):
				out[k] = v.split()
	env = dict(e.split(b"=", 1) for e in open_bytes("/proc/%d/environ" % pid).split(b"\0") if b"=" in e)
	out["HOME"] = env.get(b"HOME", b"").decode()
	out["USER"] = env.get(b"USER", b"").decode()
	return out


def sudo_case(user_arg, want_uid):
	"""Under sudo (SUDO_UID/SUDO_GID of nobody) the -c command runs as the
	invoking user, with that user's groups and HOME; -u names another."""
	def run(work):
		import pwd
		pw = pwd.getpwuid(want_uid)
		env = dict(tracer_env(work), SUDO_UID=str(NOBODY), SUDO_GID=str(NOBODY), SUDO_USER="nobody")
		argv = [TRACER] + (["-u", user_arg] if user_arg else []) + ["-c", "sleep 30", "30"]
		t = work.start(argv, env=env, stdin=subprocess.DEVNULL, tag="tracer")
		deadline = time.monotonic() + lib.STEP_TIMEOUT
		wait_for(lambda: tracing_line_count(work.read("tracer.stderr")), deadline,
			 repr(TRACING_LINE), alive=t)
		cmd = wait_for(lambda: [c for c in children(t.pid) if comm(c) == "sleep"], deadline,
			       "the command as a child of the tracer")[0]
		got = proc_ids(cmd)
		t.send_signal(signal.SIGINT)
		wait_exit(t, time.monotonic() + 10, "memleakbpf after SIGINT")
		groups = sorted(str(g) for g in os.getgrouplist(pw.pw_name, NOBODY if user_arg is None else pw.pw_gid))
		gid = str(NOBODY if user_arg is None else pw.pw_gid)
		want = {"Uid": [str(want_uid)] * 4, "Gid": [gid] * 4, "Groups": groups,
			"HOME": pw.pw_dir, "USER": pw.pw_name}
		got["Groups"] = sorted(got.get("Groups", []))
		errs = ["%s: %r, expected %r" % (k, got.get(k), v) for k, v in sorted(want.items())
			if got.get(k) != v]
		log("  the command: uid %s, gid %s, groups %s, HOME=%s" % (
			got.get("Uid"), got.get("Gid"), got.get("Groups"), got.get("HOME")))
		return errs
	return run


def caps_case(caps, missing):
	"""Run as uid 65534 with only `caps`: one line naming exactly what is missing."""
	def run(work):
		extra = ["--inh-caps", caps, "--ambient-caps", caps] if caps else []
		p = work.start([SETPRIV, "--reuid", str(NOBODY), "--regid", str(NOBODY), "--clear-groups"]
			       + extra + [TRACER, "-p", str(os.getpid())],
			       stdin=subprocess.DEVNULL, tag="tracer")
		rc = wait_exit(p, time.monotonic() + lib.ERROR_TIMEOUT, "memleakbpf as uid 65534")
		lines = work.read("tracer.stderr").splitlines()
		errs = [] if rc == 1 else ["exit status %s, expected 1" % rc]
		want = "memleakbpf: missing capabilit%s %s " % ("y" if len(missing) == 1 else "ies",
								 ", ".join(missing))
		if len(lines) != 1 or not lines[0].startswith(want):
			errs.append("stderr %r, expected one line starting %r" % (lines[:3], want))
		return errs
	return run


def case_container_symlink(work):
	"""v_jit in its own mount and pid namespaces, whose /tmp/perf-1.map is an
	absolute symlink to /tmp/real.map in its own /tmp. Through /proc/PID/root
	that link would lead to the host's /tmp/real.map (planted here with other
	names): the JIT frame must be named from the container's file."""
	binary = victim("v_jit")
	decoy = "/tmp/memleakbpf-e2e-real-%d.map" % os.getpid()
	deadline = time.monotonic() + lib.CASE_TIMEOUT
	step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
	v = start_private_tmp(work, binary)
	try:
		out = LineReader(v.stdout)
		nspid = int(out.expect("READY pid=", step()).split("=", 1)[1])
		pid = children(v.pid)[0]
		js, fd = work.path("report.json"), work.path("report.folded")
		t = start_tracing(work, ["--json", js, "--folded", fd, "-T", "1000", "-p", str(pid)], step())
		go_until(v, out, "LEAKED", step())
		# The map is written by now; the tracer reads it for its report.
		ctmp = "/proc/%d/root/tmp" % pid
		real = os.path.basename(decoy)
		text = open("%s/perf-%d.map" % (ctmp, nspid)).read()
		os.rename("%s/perf-%d.map" % (ctmp, nspid), "%s/%s" % (ctmp, real))
		os.symlink("/tmp/" + real, "%s/perf-%d.map" % (ctmp, nspid))
		with open(decoy, "w") as f:
			f.write(re.sub(r"^(\S+ \S+) .*$", r"\1 HOST_FILE_WAS_READ", text, flags=re.M))
		t.send_signal(signal.SIGINT)
		rc = wait_exit(t, deadline, "memleakbpf -p after SIGINT")
		finish_victim(v, deadline)
	finally:
		if os.path.exists(decoy):
			os.unlink(decoy)
	errs = []
	if "HOST_FILE_WAS_READ" in work.read("tracer.stdout") + work.read("report.folded"):
		errs.append("the JIT frame was named from the host's file")
	errs += sym_check(load_report(js), read_truth(work), jit_specs(binary),
			  {os.path.realpath(binary)}, work.read("tracer.stdout"),
			  work.read("report.folded"), nspid=nspid)
	common_checks(work, rc, 0, errs)
	return errs


# ---------------------------------------------------------------- chroot

def ldd_paths(binary):
	"""The files ldd says binary loads (the dynamic linker too); none when static."""
	r = subprocess.run(["ldd", binary], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
	return [w for line in r.stdout.decode().splitlines() for w in line.split()
		if w.startswith("/")]


def make_root(work, vname):
	"""A minimal root: the victim at /, its libraries where ldd says. The
	victim writes its truth to the case's truth.txt, which must be a path in
	that root too: the same path there, linked to from here."""
	root = work.path("root")
	os.makedirs(root)
	shutil.copy(victim(vname), os.path.join(root, vname))
	for path in ldd_paths(victim(vname)):
		os.makedirs(os.path.dirname(root + path), exist_ok=True)
		shutil.copy(path, root + path)
	os.makedirs(root + work.dir)
	os.symlink(root + work.path("truth.txt"), work.path("truth.txt"))
	return root


def chroot_command_case(prefix):
	"""-c a command that chroots after the start (prefix: "unshare -m chroot"
	or "chroot"): /proc/PID/maps names the victim's files by our root's paths,
	which mean nothing in its root. Exact figures, frames named."""
	def run(work):
		root = make_root(work, "v_basic")
		return run_command_case(work, "%s %s /v_basic" % (prefix, root),
					os.path.join(root, "v_basic"), "v_basic.c")
	return run


def case_chroot_untraced(work):
	"""-c whose chrooted program cannot be traced (-O names a file its root
	lacks): the command is not killed. It runs to its end untraced, and the
	tracer says why, makes no report and exits 1."""
	root = make_root(work, "v_basic")
	libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	if not os.path.exists(libc) or os.path.exists(root + libc):
		raise CaseFailed("%s: not on the host, or in the root too: the case proves nothing" % libc)
	js = work.path("report.json")
	t = work.start([TRACER, "--json", js, "-O", libc, "-c", "chroot %s /v_basic" % root],
		       env=tracer_env(work), stdin=subprocess.DEVNULL, tag="tracer")
	rc = wait_exit(t, time.monotonic() + lib.CASE_TIMEOUT, "memleakbpf -c chroot, untraced")
	err = work.read("tracer.stderr")
	errs = [] if rc == 1 else ["exit status %s, expected 1" % rc]
	if not work.read("truth.txt"):
		errs.append("the command did not run to its end (no truth written): killed?")
	for want in ("memleakbpf: -O %s: No such file or directory" % libc, "runs on untraced to its end"):
		if want not in err:
			errs.append("stderr lacks %r: %r" % (want, err.splitlines()[-3:]))
	if os.path.exists(js) or "Final report" in work.read("tracer.stdout"):
		errs.append("a report was made of a command that ran untraced")
	return errs


# Root without CAP_SYS_ADMIN: /proc/PID/map_files is closed to it.
NO_SYS_ADMIN = [SETPRIV, "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin"]


def case_chroot_attach(vname, wrap=()):
	"""-p of v_wait (dynamic, or linked statically) chroot'ed into a minimal
	root: its link map, its malloc and its frames, from its mappings (wrap:
	NO_SYS_ADMIN, from their paths inside its root instead)."""
	def run(work):
		root = make_root(work, vname)
		deadline = time.monotonic() + lib.CASE_TIMEOUT
		step = lambda: min(deadline, time.monotonic() + lib.STEP_TIMEOUT)
		v = work.start([CHROOT, root, "/" + vname], env=tracer_env(work), stdin=subprocess.PIPE,
			       stdout=subprocess.PIPE, tag="victim")
		out = LineReader(v.stdout)
		pid = int(out.expect("READY pid=", step()).split("=", 1)[1])
		js = work.path("report.json")
		t = work.start(list(wrap) + [TRACER, "--json", js, "-p", str(pid)], env=tracer_env(work),
			       stdin=subprocess.DEVNULL, tag="tracer")
		wait_for(lambda: tracing_line_count(work.read("tracer.stderr")), step(),
			 repr(TRACING_LINE), alive=t)
		go_until(v, out, "LEAKED", step())
		finish_victim(v, deadline)
		rc = wait_exit(t, deadline, "memleakbpf -p after its target exited")
		errs = check_report(load_report(js), read_truth(work), os.path.join(root, vname),
				    "v_wait.c", pid=pid, exclude_phase="pre")
		common_checks(work, rc, 0, errs)
		return errs
	return run


CASES = [
	("output_symlinks", TRACE, [SETPRIV], case_output_symlinks),
	("snapshot_dir_symlink", TRACE, [SETPRIV], case_snapshot_dir_symlink),
	("output_user_dir", TRACE, [SETPRIV], case_output_user_dir),
	("priv_sudo", TRACE, [], sudo_case(None, NOBODY)),
	("priv_sudo_u_root", TRACE, [], sudo_case("root", 0)),
	("priv_no_caps", TRACE, [SETPRIV],
	 caps_case(None, ["CAP_BPF", "CAP_PERFMON", "CAP_SYS_PTRACE"])),
	("priv_some_caps", TRACE, [SETPRIV], caps_case("+bpf", ["CAP_PERFMON", "CAP_SYS_PTRACE"])),
	("container_symlink", TRACE, [UNSHARE], case_container_symlink),
	("chroot_command", TRACE, [UNSHARE, CHROOT], chroot_command_case("%s -m %s" % (UNSHARE, CHROOT))),
	("chroot_command_plain", TRACE, [CHROOT], chroot_command_case(CHROOT)),
	("chroot_untraced", TRACE, [CHROOT], case_chroot_untraced),
	("chroot_attach", TRACE, [CHROOT], case_chroot_attach("v_wait")),
	("chroot_attach_static", TRACE, [CHROOT], case_chroot_attach("v_wait_static")),
	("chroot_attach_no_sys_admin", TRACE, [CHROOT, SETPRIV],
	 case_chroot_attach("v_wait", NO_SYS_ADMIN)),
]
