// SPDX-License-Identifier: GPL-2.0
/* The Python side of a trace: interpreter, BPF frame walk, code objects. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>
#include "pyarena.h"
#include "pyobjects.h"
#include "python.h"
#include "pytrace.h"
#include "target/target.h"
#include "util/proc.h"
#include "util/vec.h"

#define STOP_WAIT_MS 1000

struct pytrace {
	struct pytrace_ops ops;
	pid_t pid;
	bool spawned;		/* -c: ours to stop at its exit */
	bool looked;		/* this image was found to be Python, or not walkable */
	bool no_frames;		/* pytrace_settings */
	bool objects;		/* pytrace_settings: --py-objects */
	bool objects_said;	/* why --py-objects cannot be had, said once */
	bool objects_checked;	/* ... or this image's code was found fit for it */
	struct python *py;	/* NULL: not (yet) a Python interpreter we walk */
	struct pycode *code;	/* the target's code objects, and exec'd images' */
	uint64_t walked;	/* the reading whose stacks code has (each_stack) */
	struct py_layout code_layout;	/* its interpreters' */
	int memfd;		/* /proc/PID/mem, opened while the target lived */
	struct report_python report;
	bool exiting;		/* at Py_FinalizeEx or _exit: the arenas are read no more */
	char **scanned;		/* objects found not to be Python: not opened again */
	size_t nr_scanned, cap_scanned;
};

struct pytrace *pytrace__new(const struct pytrace_settings *s)
{
	struct pytrace *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->memfd = -1;
	t->spawned = s->spawned;
	t->no_frames = s->no_frames;
	t->objects = s->objects;
	/* The command inherits it; Python reads it once, at its start. */
	if (s->spawned && s->python_malloc && setenv("PYTHONMALLOC", s->python_malloc, 1)) {
		free(t);
		return NULL;
	}
	return t;
}

static void on_exec(void *arg, pid_t pid, uint32_t tag, const struct maps *maps,
		    const struct lookup_order *lo);

void pytrace__set_ops(struct pytrace *t, const struct pytrace_ops *ops)
{
	t->ops = *ops;
	if (ops->on_exec && !t->no_frames)
		ops->on_exec(ops->ctx, on_exec, t);
}

static bool was_scanned(const struct pytrace *t, const char *path)
{
	for (size_t i = 0; i < t->nr_scanned; i++)
		if (!strcmp(t->scanned[i], path))
			return true;
	return false;
}

/* Remember lo's objects: none is Python, and a later look needs only new ones. */
static void remember_scanned(struct pytrace *t, const struct lookup_order *lo)
{
	char **v;

	if (vec__reserve(&t->scanned, &t->cap_scanned, t->nr_scanned + lo->nr, sizeof(*v)))
		return;
	v = t->scanned;
	for (size_t i = 0; i < lo->nr; i++) {
		if (was_scanned(t, lo->objects[i].path))
			continue;
		v[t->nr_scanned] = strdup(lo->objects[i].path);
		if (v[t->nr_scanned])
			t->nr_scanned++;
	}
}

/* lo without the objects already scanned; its objects are borrowed. */
static struct lookup_order unscanned(const struct pytrace *t, const struct lookup_order *lo,
				     struct lookup_object *buf)
{
	struct lookup_order out = *lo;

	out.objects = buf;
	out.nr = 0;
	for (size_t i = 0; i < lo->nr; i++)
		if (!was_scanned(t, lo->objects[i].path))
			buf[out.nr++] = lo->objects[i];
	return out;
}

static void set_report(struct pytrace *t)
{
	t->report = (struct report_python){
		.version = t->py->version,
		.path = t->py->path,
		.malloc = python__malloc_name(t->py->malloc),
		.malloc_why = t->py->malloc_why,
	};
}

/* A copy BPF made of a code object the moment a stack first showed it. */
static int read_target(void *ctx, uint64_t addr, void *buf, size_t len);

static void take_copy(void *arg, const struct py_code *copy)
{
	struct pytrace *t = arg;

	if (t->code)
		pycode__add_copy(t->code, copy, read_target, t);
}

/*
 * Code objects of several interpreters in one table: an exec'd image's
 * linetables carry its process's tag (bpf/python.bpf.h), so only their
 * layout has to be the same, as it is for one version.
 */
static int code_for(struct pytrace *t, const struct python *py)
{
	if (t->code)
		return memcmp(&t->code_layout, &py->layout, sizeof(py->layout)) ? -EXDEV : 0;
	t->code = pycode__new(&py->layout, py->code_type);
	if (!t->code)
		return -ENOMEM;
	t->walked = 0;	/* a new table: every stack's code is new to it */
	t->code_layout = py->layout;
	t->ops.on_code(t->ops.ctx, take_copy, t);
	return 0;
}

/* --follow: a followed process exec'd pid's image; if it is a Python we walk, its frames too. */
static void on_exec(void *arg, pid_t pid, uint32_t tag, const struct maps *maps,
		    const struct lookup_order *lo)
{
	struct pytrace *t = arg;
	struct python *py = NULL;
	char msg[512] = "";
	int err = python__detect(pid, maps, lo, &py, msg, sizeof(msg));

	if (err == -ENOENT)
		return;
	if (!err)
		err = code_for(t, py);
	if (!err)
		err = t->ops.set_image(t->ops.ctx, tag, &py->bpf);
	/* Its shutdown frees what it held: its figures end where the target's would. */
	if (!err && py->finalize_path)
		err = t->ops.attach_image_exit(t->ops.ctx, pid, py->finalize_path,
					       py->finalize_offset);
	if (!err)
		fprintf(stderr, "memleakbpf: pid %d exec'd Python %s (%s): its stacks show its frames%s\n",
			pid, py->version, py->path,
			py->finalize_path ? "; its figures end at its Py_FinalizeEx" : "");
	else if (err == -EXDEV)
		fprintf(stderr, "memleakbpf: pid %d exec'd Python %s, whose code objects are laid out unlike the first interpreter's: its stacks stay native\n",
			pid, py->version);
	else
		fprintf(stderr, "memleakbpf: pid %d exec'd Python, whose frames cannot be followed: %s: its stacks stay native\n",
			pid, msg[0] ? msg : strerror(-err));
	python__free(py);
}

/* BPF walks the frames; the target stops at Py_FinalizeEx and _exit. */
static int start(struct pytrace *t)
{
	const struct pytrace_ops *ops = &t->ops;
	const struct python *py = t->py;
	int err = 0;

	t->memfd = proc__open(t->pid, "mem", O_RDONLY);
	if (t->memfd < 0)
		return t->memfd;
	err = code_for(t, py);
	if (err)
		return err;
	/* Before the walk begins; only a cost saved when it fails (BPF reads every linetable). */
	if (ops->attach_dealloc)
		ops->attach_dealloc(ops->ctx, py->dealloc_path, py->dealloc_offset);
	err = ops->set_python(ops->ctx, &py->bpf, t->spawned);
	if (!err && py->finalize_path)
		err = ops->attach_exit(ops->ctx, py->finalize_path, py->finalize_offset, true);
	if (!err && py->exit_path)
		err = ops->attach_exit(ops->ctx, py->exit_path, py->exit_offset, false);
	return err;
}

static void announce(const struct pytrace *t)
{
	const struct python *py = t->py;

	fprintf(stderr, "memleakbpf: pid %d runs Python %s (%s) with %s (%s): stacks show its frames%s\n",
		t->pid, py->version, py->path, python__malloc_name(py->malloc), py->malloc_why,
		py->malloc == PY_MALLOC_PYMALLOC ?
		"; objects of up to 512 bytes come from pymalloc's arenas" : "");
}

int pytrace__attach(struct pytrace *t, pid_t pid, const struct maps *maps,
		    const struct lookup_order *lo)
{
	struct lookup_object *buf;
	struct lookup_order todo;
	char msg[512];
	int err;

	/* Benchmarking only (make bench): what the Python frames cost. */
	if (t->looked || t->no_frames)
		return 0;
	buf = calloc(lo->nr ? lo->nr : 1, sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	todo = unscanned(t, lo, buf);
	t->pid = pid;
	err = python__detect(pid, maps, &todo, &t->py, msg, sizeof(msg));
	free(buf);
	if (err == -ENOENT) {
		remember_scanned(t, lo);
		return 0;
	}
	t->looked = true;
	if (err) {
		/* An interpreter we cannot walk still gets its native stacks. */
		fprintf(stderr, "memleakbpf: %s\n", msg[0] ? msg : strerror(-err));
		return 0;
	}
	set_report(t);
	err = start(t);
	if (!err) {
		announce(t);
		return 0;
	}
	/* Native stacks are still worth having. */
	if (err == -EOPNOTSUPP)
		fprintf(stderr, "memleakbpf: Python frames need bpf_loop (Linux 5.17 or later): stacks stay native\n");
	else
		fprintf(stderr, "memleakbpf: cannot follow Python in pid %d: %s: stacks stay native\n",
			pid, strerror(-err));
	pytrace__forget(t);
	t->looked = true;
	return 0;
}

/*
 * Would --python-malloc malloc give every object its line where --py-objects
 * cannot? Under -c, to an interpreter on pymalloc that reads PYTHONMALLOC.
 */
static bool malloc_would_do(const struct pytrace *t)
{
	return t->spawned && t->py->malloc == PY_MALLOC_PYMALLOC && !t->py->env_ignored;
}

int pytrace__probe_objects(struct pytrace *t, const struct lookup_order *lo, struct allocator *a)
{
	char msg[512] = "";
	int err = -ENOTSUP;

	if (!t->objects || !t->py || t->objects_said)
		return 0;
	if (t->py->malloc != PY_MALLOC_PYMALLOC)
		snprintf(msg, sizeof(msg), "Python serves its objects from malloc (%s): each is a block already",
			 t->py->malloc_why);
	for (size_t i = 0; i < lo->nr && !msg[0]; i++)
		if (!strcmp(lo->objects[i].path, t->py->path))
			err = pyobjects__add(a, &lo->objects[i], t->objects_checked, msg,
					     sizeof(msg));
	if (!err) {
		if (!t->objects_checked)
			fprintf(stderr, "memleakbpf: --py-objects: every object of pid %d at its line: PyObject_Malloc, PyMem_Malloc and their kin probed in %s\n",
				t->pid, t->py->path);
		t->report.objects = t->objects_checked = true;
		return 0;
	}
	if (err == -ENOMEM)
		return err;
	t->objects_said = true;
	fprintf(stderr, "memleakbpf: --py-objects: %s; small objects stay in pymalloc's arenas%s\n",
		msg[0] ? msg : "the interpreter's file is not among the target's objects",
		malloc_would_do(t) ?
		"; --python-malloc malloc would make each a block of its own, at its line" : "");
	return 0;
}

void pytrace__forget(struct pytrace *t)
{
	if (t->py)
		t->ops.set_python(t->ops.ctx, NULL, false);
	python__free(t->py);
	pycode__free(t->code);
	if (t->memfd >= 0)
		close(t->memfd);
	for (size_t i = 0; i < t->nr_scanned; i++)
		free(t->scanned[i]);
	free(t->scanned);
	t->scanned = NULL;
	t->nr_scanned = t->cap_scanned = 0;
	t->py = NULL;
	t->code = NULL;
	t->memfd = -1;
	t->looked = false;
	t->exiting = false;
	t->objects_said = t->objects_checked = false;
}

/* Is the target gone (or a zombie, whose memory is)? */
static bool gone(pid_t pid)
{
	char state = proc__state(pid);

	return !state || state == 'Z' || state == 'X';
}

/* The target's memory; -ESRCH once it is gone, so that nothing is marked unreadable. */
static int read_target(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct pytrace *t = ctx;
	ssize_t n = pread(t->memfd, buf, len, (off_t)addr);

	if (n >= 0 && (size_t)n == len)
		return 0;
	return gone(t->pid) ? -ESRCH : -EFAULT;
}

/* One stack's code objects not read yet; -ESRCH, to end the walk, once the target is gone. */
static int read_stack(void *arg, const struct py_stack *py)
{
	struct pytrace *t = arg;

	for (uint32_t j = 0; j < py->nr && j < MEMLEAK_PY_MAX_FRAMES; j++)
		if (pycode__add(t->code, &py->frames[j], read_target, t) == -ESRCH)
			return -ESRCH;
	return 0;
}

void pytrace__refresh(struct pytrace *t, const struct snapshot *snap)
{
	if (t->code)
		t->ops.each_stack(t->ops.ctx, snap, &t->walked, read_stack, t);
}

/*
 * The code objects of every Python frame held, read while the target
 * waits at its exit: every site's among them. Not through a reading of
 * the tables (each_stack's): that took 150 to 300 ms of the wait on a
 * torch job's 210,000 sites, most of them sharing a few thousand Python
 * stacks, and each stack's frames were looked up once per site.
 */
static void read_held_frames(struct pytrace *t)
{
	struct py_frame *frames;
	size_t nr;

	if (!t->code)
		return;
	frames = t->ops.py_frames ? t->ops.py_frames(t->ops.ctx, &nr) : NULL;
	if (!frames) {
		pytrace__refresh(t, NULL);
		return;
	}
	for (size_t i = 0; i < nr; i++)
		if (pycode__add(t->code, &frames[i], read_target, t) == -ESRCH)
			break;
	free(frames);
}

void pytrace__on_exit(struct pytrace *t, pid_t pid, bool stopped, bool finalize, double t_s)
{
	int err = stopped ? target__wait_stopped(pid, STOP_WAIT_MS) : 0;

	/* Held at its exit: the arenas as the final report counts them. */
	if (!err && stopped)
		pytrace__read_arenas(t, t_s);
	t->exiting = true;
	if (finalize && t->py)
		t->report.shutdown = true;
	if (err == -ESRCH)
		return;
	if (!err)
		read_held_frames(t);	/* the stacks as they are now */
	/* Even after a timeout: SIGCONT also drops a SIGSTOP still pending. */
	if (stopped)
		target__continue(pid);
}

/*
 * pyarena_read_fn: n pieces of the target's memory in one process_vm_readv
 * (pool headers are 16 KiB apart: one pread each costs 40 times more), or,
 * where it fails, one read_target each, which tells a target gone (-ESRCH).
 */
static int read_pieces(void *ctx, const uint64_t *addrs, size_t n, size_t len, void *out)
{
	const struct pytrace *t = ctx;
	struct iovec local = { out, n * len }, remote[PYARENA_MAX_POOLS] = { { 0 } };
	int err = 0;

	if (n <= PYARENA_MAX_POOLS) {
		for (size_t i = 0; i < n; i++)
			remote[i] = (struct iovec){ (void *)(uintptr_t)addrs[i], len };
		if (process_vm_readv(t->pid, &local, 1, remote, n, 0) == (ssize_t)(n * len))
			return 0;
	}
	for (size_t i = 0; i < n && !err; i++)
		err = read_target(ctx, addrs[i], (char *)out + i * len, len);
	return err;
}

void pytrace__read_arenas(struct pytrace *t, double t_s)
{
	struct report_pyarenas a;
	uint64_t *bases;
	size_t nr;

	/*
	 * Once it exits (BPF no longer follows the arenas shutdown frees), the
	 * last reading stands. Under --py-objects the arenas are not blocks.
	 */
	if (!t || !t->py || t->py->malloc != PY_MALLOC_PYMALLOC || t->memfd < 0 || t->exiting ||
	    t->report.objects || !t->ops.blocks ||
	    t->ops.blocks(t->ops.ctx, API_MMAP, PYARENA_SIZE, &bases, &nr))
		return;
	if (nr && !pyarena__read(bases, nr, read_pieces, t, &a)) {
		a.t_s = t_s;
		t->report.arenas = a;
	}
	free(bases);
}

const struct pycode *pytrace__code(const struct pytrace *t)
{
	return t ? t->code : NULL;
}

const struct report_python *pytrace__report(const struct pytrace *t)
{
	return t && t->py ? &t->report : NULL;
}

void pytrace__free(struct pytrace *t)
{
	if (!t)
		return;
	python__free(t->py);
	pycode__free(t->code);
	if (t->memfd >= 0)
		close(t->memfd);
	for (size_t i = 0; i < t->nr_scanned; i++)
		free(t->scanned[i]);
	free(t->scanned);
	free(t);
}
