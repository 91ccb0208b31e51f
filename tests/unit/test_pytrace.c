// SPDX-License-Identifier: GPL-2.0
/*
 * python/pytrace against a fake of BPF (struct pytrace_ops): PYTHONMALLOC
 * for the command, a native target left alone, and, on a live
 * /usr/bin/python3, the walk set up (offsets, exit probes, code copies),
 * the stacks read through the fake until the target is gone, and the
 * fallbacks to native stacks when BPF cannot follow.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "allocator/allocator.h"
#include "python/pytrace.h"
#include "util/procmaps.h"
#include "unit.h"

#define PYTHON "/usr/bin/python3"

/* What BPF was asked, and the Python stacks it holds. */
struct fake_bpf {
	int set_err, exit_err;		/* set_python (turning on), attach_exit fail with them */
	unsigned sets, offs, walks, visits;
	bool stop_at_exit;
	uint64_t runtime;		/* py_offsets.runtime set */
	char exits[4];			/* attach_exit in order: 'F' Py_FinalizeEx, 'x' _exit */
	void (*code_fn)(void *arg, const struct py_code *c);
	void *code_arg;
	const struct snapshot *walked;	/* what each_stack was given */
	const struct py_stack *stacks;
	size_t nr_stacks;
	const struct py_frame *frames;	/* py_frames gives these; NULL: no such op */
	size_t nr_frames;
	unsigned frame_calls;
};

static int fake_set_python(void *ctx, const struct py_offsets *py, bool stop_at_exit)
{
	struct fake_bpf *f = ctx;

	if (!py) {
		f->offs++;
		return 0;
	}
	f->sets++;
	f->runtime = py->runtime;
	f->stop_at_exit = stop_at_exit;
	return f->set_err;
}

static void fake_on_code(void *ctx, void (*fn)(void *arg, const struct py_code *c), void *arg)
{
	struct fake_bpf *f = ctx;

	f->code_fn = fn;
	f->code_arg = arg;
}

static int fake_attach_exit(void *ctx, const char *path, uint64_t offset, bool finalize)
{
	struct fake_bpf *f = ctx;
	size_t n = strlen(f->exits);

	if (n < sizeof(f->exits) - 1)
		f->exits[n] = finalize ? 'F' : 'x';
	return f->exit_err;
}

static int fake_each_stack(void *ctx, const struct snapshot *snap, uint64_t *walked,
			   int (*fn)(void *arg, const struct py_stack *py), void *arg)
{
	struct fake_bpf *f = ctx;
	int err = 0;

	f->walks++;
	f->walked = snap;
	for (size_t i = 0; i < f->nr_stacks && !err; i++, f->visits++)
		err = fn(arg, &f->stacks[i]);
	return err;
}

static struct py_frame *fake_py_frames(void *ctx, size_t *nr)
{
	struct fake_bpf *f = ctx;
	struct py_frame *out = malloc(f->nr_frames * sizeof(*out));

	f->frame_calls++;
	*nr = out ? f->nr_frames : 0;
	if (out)
		memcpy(out, f->frames, f->nr_frames * sizeof(*out));
	return out;
}

static struct pytrace *fake_pytrace(struct fake_bpf *f, bool spawned)
{
	struct pytrace_settings s = { .spawned = spawned };
	struct pytrace_ops ops = {
		.ctx = f,
		.set_python = fake_set_python,
		.on_code = fake_on_code,
		.attach_exit = fake_attach_exit,
		.each_stack = fake_each_stack,
		.py_frames = f->frames ? fake_py_frames : NULL,
	};
	struct pytrace *t = pytrace__new(&s);

	if (t)
		pytrace__set_ops(t, &ops);
	return t;
}

/* A snapshot is only handed back to each_stack: any address tells it apart. */
static const struct snapshot *const some_snapshot = (const struct snapshot *)&some_snapshot;

TEST(pytrace_python_malloc_for_the_command)
{
	struct pytrace_settings p_malloc = { .spawned = false, .python_malloc = "malloc" };
	struct pytrace_settings c_none = { .spawned = true };
	struct pytrace_settings c_malloc = { .spawned = true, .python_malloc = "malloc" };
	struct pytrace *t;

	unsetenv("PYTHONMALLOC");
	ASSERT((t = pytrace__new(&p_malloc)) != NULL);
	pytrace__free(t);
	ASSERT(!getenv("PYTHONMALLOC"));	/* -p: a running interpreter keeps its own */
	ASSERT((t = pytrace__new(&c_none)) != NULL);
	pytrace__free(t);
	ASSERT(!getenv("PYTHONMALLOC"));
	ASSERT((t = pytrace__new(&c_malloc)) != NULL);
	pytrace__free(t);
	ASSERT_EQ_STR(getenv("PYTHONMALLOC"), "malloc");
	unsetenv("PYTHONMALLOC");
	return true;
}

/* The maps and lookup order of a live process. */
struct objects {
	struct maps *maps;
	struct lookup_order *lo;
};

static bool objects__read(pid_t pid, struct objects *o)
{
	o->maps = NULL;
	o->lo = NULL;
	return !maps__read(pid, &o->maps) && !lookup_order__read(pid, o->maps, NULL, &o->lo);
}

static void objects__free(struct objects *o)
{
	lookup_order__free(o->lo);
	maps__free(o->maps);
}

TEST(pytrace_native_target_left_alone)
{
	struct fake_bpf f = { 0 };
	struct pytrace *t = fake_pytrace(&f, true);
	struct objects o;

	ASSERT(t && objects__read(getpid(), &o));
	ASSERT_EQ_U64(pytrace__attach(t, getpid(), o.maps, o.lo), 0);
	ASSERT_EQ_U64(pytrace__attach(t, getpid(), o.maps, o.lo), 0);	/* scanned: not opened again */
	pytrace__refresh(t, some_snapshot);
	pytrace__on_exit(t, getpid(), false, true, 1.0);
	pytrace__forget(t);
	ASSERT(!pytrace__report(t) && !pytrace__code(t));
	/* BPF was asked nothing: no walk, no stacks read, nothing turned off. */
	ASSERT_EQ_U64(f.sets + f.offs + f.walks, 0);
	ASSERT(!f.code_fn && !f.exits[0]);
	pytrace__free(t);
	objects__free(&o);
	return true;
}

/* PYTHON, started and waited for until its interpreter runs; -1 if it cannot be. */
static pid_t start_python(void)
{
	char ready[8] = "";
	int fds[2];
	pid_t pid;

	if (access(PYTHON, X_OK) || pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		unsetenv("PYTHONMALLOC");
		execl(PYTHON, PYTHON, "-c", "import time; print('ready', flush=True); time.sleep(60)",
		      (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (pid > 0 && read(fds[0], ready, sizeof(ready) - 1) <= 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(fds[0]);
	return pid;
}

static void stop_python(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* A live PYTHON, attached to by a pytrace on the fake. */
struct live {
	struct fake_bpf f;
	struct pytrace *t;
	pid_t pid;
	struct objects o;
	int err;		/* of pytrace__attach */
	char said[512];		/* what it said */
};

/* false with x->pid -1 when PYTHON cannot be run: see live__skip. */
static bool live__attach(struct live *x, bool spawned)
{
	struct unit_stderr c;

	x->t = fake_pytrace(&x->f, spawned);
	x->pid = start_python();
	x->err = -EBADF;
	if (!x->t || x->pid < 0 || !objects__read(x->pid, &x->o) || !unit__capture_stderr(&c))
		return false;
	x->err = pytrace__attach(x->t, x->pid, x->o.maps, x->o.lo);
	unit__stderr_text(&c, x->said, sizeof(x->said));
	return true;
}

static void live__end(struct live *x)
{
	if (x->pid > 0)
		stop_python(x->pid);
	pytrace__free(x->t);
	objects__free(&x->o);
}

/* live__attach failed: a pass, said, when there is no PYTHON to run; else a failure. */
static bool live__skip(struct live *x, const char *test)
{
	bool skip = x->pid < 0;

	if (skip)
		printf("skip %s: cannot run %s\n", test, PYTHON);
	else
		fprintf(stderr, "  %s: cannot read pid %d or capture stderr\n", test, (int)x->pid);
	live__end(x);
	return skip;
}

/* Two stacks of one frame each, on code objects at addresses nothing maps. */
static void bogus_stacks(struct py_stack *s, uint64_t code)
{
	memset(s, 0, 2 * sizeof(*s));
	for (int i = 0; i < 2; i++) {
		s[i].nr = 1;
		s[i].frames[0].code = code + 0x100 * (uint64_t)i;
		s[i].frames[0].linetable = code + 0x80;
	}
}

/* The walk set up, code copies and stacks taken, the target's end seen. */
static bool follows(struct fake_bpf *f, struct pytrace *t, pid_t pid)
{
	struct py_code copy = { .code = 0x5000, .linetable = 0x6000, .qualname = "f",
				.filename = "x.py" };
	static struct py_stack stacks[2];

	ASSERT_EQ_U64(f->sets, 1);
	ASSERT(f->stop_at_exit && f->runtime);
	ASSERT_EQ_STR(f->exits, "Fx");		/* Py_FinalizeEx, then _exit */
	ASSERT(f->code_fn && pytrace__code(t) && pytrace__report(t));
	ASSERT(!strncmp(pytrace__report(t)->version, "3.", 2));
	f->code_fn(f->code_arg, &copy);
	ASSERT_EQ_U64(pycode__count(pytrace__code(t)), 1);
	/* While the target lives, every stack is read (here: not readable). */
	bogus_stacks(stacks, 0x1000);
	f->stacks = stacks;
	f->nr_stacks = 2;
	pytrace__refresh(t, some_snapshot);
	ASSERT(f->walks == 1 && f->walked == some_snapshot && f->visits == 2);
	ASSERT_EQ_U64(pycode__count(pytrace__code(t)), 3);
	/* Gone: the walk ends at the first stack, and nothing is learnt. */
	stop_python(pid);
	bogus_stacks(stacks, 0x2000);
	ASSERT(!pytrace__report(t)->shutdown);
	pytrace__on_exit(t, pid, false, true, 1.0);
	ASSERT(f->walks == 2 && !f->walked && f->visits == 3);
	ASSERT(pytrace__report(t)->shutdown);	/* the report says where it stopped */
	ASSERT_EQ_U64(pycode__count(pytrace__code(t)), 3);
	return true;
}

TEST(pytrace_python_target_followed)
{
	struct live x = { 0 };

	if (!live__attach(&x, true))
		return live__skip(&x, "pytrace_python_target_followed");
	ASSERT_EQ_U64(x.err, 0);
	ASSERT(strstr(x.said, "runs Python 3.") && strstr(x.said, "with pymalloc (by default)"));
	/* The image is known: not looked at again until it is forgotten. */
	ASSERT_EQ_U64(pytrace__attach(x.t, x.pid, x.o.maps, x.o.lo), 0);
	ASSERT_EQ_U64(x.f.sets, 1);
	ASSERT(follows(&x.f, x.t, x.pid));
	x.pid = -1;		/* follows ended it */
	pytrace__forget(x.t);
	ASSERT_EQ_U64(x.f.offs, 1);
	ASSERT(!pytrace__report(x.t) && !pytrace__code(x.t));
	live__end(&x);
	return true;
}

/*
 * At Python's exit, while the target waits: the code of every frame held is
 * read (two code objects, one of them on two stacks), without a reading
 * of the tables (each_stack not called).
 */
TEST(pytrace_exit_reads_held_frames_not_the_tables)
{
	static const struct py_frame frames[3] = {
		{ .code = 0x7000, .linetable = 0x7080 },
		{ .code = 0x7100, .linetable = 0x7180 },
		{ .code = 0x7000, .linetable = 0x7080 },
	};
	struct live x = { .f = { .frames = frames, .nr_frames = 3 } };

	if (!live__attach(&x, true))
		return live__skip(&x, "pytrace_exit_reads_held_frames_not_the_tables");
	ASSERT_EQ_U64(x.err, 0);
	ASSERT_EQ_U64(pycode__count(pytrace__code(x.t)), 0);
	pytrace__on_exit(x.t, x.pid, false, true, 1.0);
	ASSERT(x.f.frame_calls == 1 && x.f.walks == 0);
	ASSERT_EQ_U64(pycode__count(pytrace__code(x.t)), 2);
	live__end(&x);
	return true;
}

/* BPF cannot follow: one line says why, the walk is turned off again, stacks stay native. */
static bool stays_native(int set_err, int exit_err, const char *why)
{
	struct live x = { .f = { .set_err = set_err, .exit_err = exit_err } };

	if (!live__attach(&x, false))
		return live__skip(&x, why);
	ASSERT_EQ_U64(x.err, 0);
	ASSERT(strstr(x.said, why));
	ASSERT(x.f.sets == 1 && !x.f.stop_at_exit);	/* -p: announced, not stopped */
	ASSERT_EQ_U64(x.f.offs, 1);
	ASSERT(!pytrace__report(x.t) && !pytrace__code(x.t));
	ASSERT_EQ_U64(pytrace__attach(x.t, x.pid, x.o.maps, x.o.lo), 0);	/* not tried again */
	ASSERT_EQ_U64(x.f.sets, 1);
	live__end(&x);
	return true;
}

TEST(pytrace_no_bpf_loop_stays_native)
{
	return stays_native(-EOPNOTSUPP, 0,
			    "memleakbpf: Python frames need bpf_loop (Linux 5.17 or later): stacks stay native\n");
}

TEST(pytrace_exit_probe_failure_stays_native)
{
	return stays_native(0, -EINVAL, ": Invalid argument: stacks stay native\n");
}
