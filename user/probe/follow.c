// SPDX-License-Identifier: GPL-2.0
/*
 * --follow: the uprobe links of each process the target starts. BPF tags a
 * child at its fork and stops it there (bpf/follow.bpf.h); the tracer makes
 * the target's allocator links again for it, filtered by its pid (a link
 * never fires in another process, even one that shares its file), and
 * resumes it. At its exit (or exec) its links are closed on a thread of
 * their own: each close waits for a grace period, which the loop must not,
 * a thousand times over for a thousand short children.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "probes.h"
#include "probes_internal.h"
#include "model/processes.h"
#include "target/images.h"
#include "target/target.h"
#include "util/fatal.h"
#include "util/fdclose.h"
#include "util/proc.h"
#include "util/vec.h"

#define CLOSE_BATCH 256		/* link fds closed side by side at most */

struct child_links {
	pid_t pid;
	int *fds;
	size_t nr;
};

struct follow {
	struct memleak_event *events;	/* forks and ends, in order, not yet taken */
	size_t nr_events, cap_events;
	struct child_links *children;
	size_t nr_children, cap_children;
	uint64_t links_made, links_closed;
	unsigned failed;	/* children that could not be probed */
	long fds_before;	/* our open fds when the first child came: none is left per child */
	/* Link fds to close, and the thread that closes them. */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int *closing;
	size_t nr_closing, cap_closing;
	bool stop, started;
	pthread_t closer;
};

static void *closer_main(void *arg)
{
	struct follow *f = arg;
	int batch[CLOSE_BATCH];
	size_t n;

	pthread_mutex_lock(&f->lock);
	for (;;) {
		while (!f->nr_closing && !f->stop)
			pthread_cond_wait(&f->wake, &f->lock);
		if (!f->nr_closing)
			break;
		n = f->nr_closing < CLOSE_BATCH ? f->nr_closing : CLOSE_BATCH;
		f->nr_closing -= n;
		memcpy(batch, f->closing + f->nr_closing, n * sizeof(*batch));
		pthread_mutex_unlock(&f->lock);
		fdclose__together(batch, n);
		pthread_mutex_lock(&f->lock);
		f->links_closed += n;
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

int follow__new(struct probes *p)
{
	struct follow *f;
	sigset_t all, old;
	int err;

	if (!p->follow.on)
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f || image_links__new(p)) {
		free(f);
		return -ENOMEM;
	}
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->wake, NULL);
	p->follow.children = f;
	/* The closer takes no signal: they are the loop's. */
	fatal__thread_signals(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&f->closer, NULL, closer_main, f);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	f->started = !err;
	/* Without it, links are closed in the loop (close_later): slower, not wrong. */
	if (err && p->verbose)
		fprintf(stderr, "memleakbpf: no thread to close the children's links: %s\n",
			strerror(err));
	return 0;
}

/* Hand fds to the closer (or close them here if it cannot take them). */
static void close_later(struct follow *f, const int *fds, size_t n)
{
	pthread_mutex_lock(&f->lock);
	if (f->started && !vec__reserve(&f->closing, &f->cap_closing, f->nr_closing + n,
					sizeof(*f->closing))) {
		memcpy(f->closing + f->nr_closing, fds, n * sizeof(*fds));
		f->nr_closing += n;
		pthread_cond_signal(&f->wake);
		n = 0;
	}
	pthread_mutex_unlock(&f->lock);
	if (!n)
		return;
	fdclose__together(fds, n);
	pthread_mutex_lock(&f->lock);
	f->links_closed += n;
	pthread_mutex_unlock(&f->lock);
}

/*
 * The end: no fork comes any more; a child stopped at its fork and not yet
 * taken runs on, untraced, rather than stay stopped for good.
 */
static void resume_pending(struct probes *p, struct follow *f)
{
	bpf_link__destroy(p->skel->links.fork_follow);
	p->skel->links.fork_follow = NULL;
	if (p->events.rb)
		ring_buffer__consume(p->events.rb);
	for (size_t i = 0; i < f->nr_events; i++)
		if (f->events[i].kind == EVENT_FORK)
			target__continue((pid_t)f->events[i].tgid);
	f->nr_events = 0;
}

void follow__free(struct probes *p)
{
	struct follow *f = p->follow.children;

	if (!f)
		return;
	resume_pending(p, f);
	for (size_t i = 0; i < f->nr_children; i++) {
		close_later(f, f->children[i].fds, f->children[i].nr);
		free(f->children[i].fds);
	}
	pthread_mutex_lock(&f->lock);
	f->stop = true;
	pthread_cond_signal(&f->wake);
	pthread_mutex_unlock(&f->lock);
	if (f->started)
		pthread_join(f->closer, NULL);
	pthread_mutex_destroy(&f->lock);
	pthread_cond_destroy(&f->wake);
	free(f->closing);
	free(f->children);
	free(f->events);
	free(f);
	p->follow.children = NULL;
	image_links__free(p);
}

/*
 * Never dropped as the other events may be: a fork left untaken is a child
 * stopped for good. Without memory for it, the child runs on, untraced.
 */
void follow__queue(struct probes *p, const struct memleak_event *ev)
{
	struct follow *f = p->follow.children;

	if (f && !vec__reserve_min(&f->events, &f->cap_events, f->nr_events + 1,
				   sizeof(*f->events), 64))
		f->events[f->nr_events++] = *ev;
	else if (ev->kind == EVENT_FORK)
		target__continue((pid_t)ev->tgid);
}

size_t follow__take(struct probes *p, struct memleak_event *evs, size_t max)
{
	struct follow *f = p->follow.children;
	size_t n;

	if (!f)
		return 0;
	n = f->nr_events < max ? f->nr_events : max;
	memcpy(evs, f->events, n * sizeof(*evs));
	memmove(f->events, f->events + n, (f->nr_events - n) * sizeof(*evs));
	f->nr_events -= n;
	return n;
}

/* Python's exit probes, when the target has them, for the child too. */
static int link_python(struct probes *p, pid_t pid, int *fds, size_t *n)
{
	int err = 0;

	for (int i = 0; i < 2 && !err; i++) {
		__u64 cookie = (__u64)i;
		struct recipe r = { &p->py_exit.offsets[i], &cookie, 1 };

		if (p->py_exit.files[i] >= 0)
			err = probes_attach__link_again(p, pid, bpf_program__fd(p->skel->progs.py_exit),
						 p->py_exit.files[i], &r, false, fds, n);
	}
	return err;
}

/* Our open file descriptors. */
static long count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	long n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3;	/* ".", ".." and the directory's own */
}

/*
 * The target's links, made again for pid (a process of the target's
 * image): its allocator's, Python's exit and its dynamic linker's.
 */
static int link_target(struct probes *p, pid_t pid, int *fds, size_t *n)
{
	int err = probes_attach__link_child(p, pid, fds, n);

	if (!err) {
		size_t more = 0;

		err = link_python(p, pid, fds + *n, &more);
		*n += more;
	}
	return err ?: probes_attach__link_dl_child(p, pid, fds, n);
}

/*
 * Image tag's links made again for pid, one of its forks, into fds (room
 * for image_links__max), their number in *n: 0 or -errno (the links made
 * are in fds all the same).
 */
static int link_image(struct probes *p, uint32_t tag, pid_t pid, int *fds, size_t *n)
{
	size_t nr;
	const struct image_link *r = image_links__of(p, tag, &nr);
	int err = 0;

	*n = 0;
	if (!nr)
		return -ENOENT;	/* its image could not be probed: neither can it */
	/* In the order they were made: returns before entries. */
	for (size_t i = 0; i < nr && !err; i++)
		err = probes_attach__link_again(p, pid, r[i].prog_fd, r[i].file_fd, &r[i].r, r[i].ret,
					 fds, n);
	return err;
}

/* pid's links: those of the image it runs (image: an exec'd one's tag; 0: the target's). */
static int adopt(struct probes *p, pid_t pid, uint32_t image)
{
	struct follow *f = p->follow.children;
	struct child_links c = { .pid = pid };
	int err;

	if (!f)
		return -EINVAL;
	if (!f->fds_before)
		f->fds_before = count_fds();
	c.fds = calloc((image ? image_links__max(p, image) : probes_attach__child_links_max(p) + 3) ?: 1,
		       sizeof(*c.fds));
	if (!c.fds)
		return -ENOMEM;
	err = image ? link_image(p, image, pid, c.fds, &c.nr) :
		      link_target(p, pid, c.fds, &c.nr);
	f->links_made += c.nr;
	if (!err && vec__reserve(&f->children, &f->cap_children, f->nr_children + 1,
				 sizeof(*f->children)))
		err = -ENOMEM;
	if (err) {
		close_later(f, c.fds, c.nr);
		free(c.fds);
		return err;
	}
	f->children[f->nr_children++] = c;
	return 0;
}

size_t follow__count(const struct probes *p)
{
	const struct follow *f = p->follow.children;
	size_t n = 0;

	if (!f)
		return 0;
	for (size_t i = 0; i < f->nr_events; i++)
		n += f->events[i].kind == EVENT_FORK;
	return n + f->nr_children;
}

void follow__let_go(struct probes *p, pid_t pid)
{
	struct follow *f = p->follow.children;

	for (size_t i = 0; f && i < f->nr_children; i++) {
		if (f->children[i].pid != pid)
			continue;
		close_later(f, f->children[i].fds, f->children[i].nr);
		free(f->children[i].fds);
		f->children[i] = f->children[--f->nr_children];
		return;
	}
}

/* Entries in the BPF table of followed processes (a walk: for the end's check). */
static size_t procs_entries(const struct probes *p)
{
	return bpfmaps__proc_count(p->skel);
}

struct follow_stats {
	uint64_t links_made, links_closed;
	size_t children_held;	/* processes with links now */
	size_t procs_entries;	/* BPF's table of followed processes */
	long fds_before, fds_now;
};

/* Wait (a while) for the closer to close what it was given: the end's counts are final. */
static void drain(struct follow *f)
{
	for (int ms = 0; ms < 5000; ms += 10) {
		bool idle;

		pthread_mutex_lock(&f->lock);
		idle = f->links_closed >= f->links_made;
		pthread_mutex_unlock(&f->lock);
		if (idle)
			return;
		usleep(10000);
	}
}

static void follow_stats(struct probes *p, struct follow_stats *st)
{
	struct follow *f = p->follow.children;

	memset(st, 0, sizeof(*st));
	if (!f)
		return;
	drain(f);
	pthread_mutex_lock(&f->lock);
	st->links_made = f->links_made;
	st->links_closed = f->links_closed;
	pthread_mutex_unlock(&f->lock);
	st->children_held = f->nr_children;
	st->procs_entries = procs_entries(p);
	st->fds_before = f->fds_before;
	st->fds_now = count_fds();
}

#define FORK_STOP_WAIT_MS 1000

/*
 * The child is stopped, or will be before its first instruction: BPF
 * queued its SIGSTOP at the fork. Probe it, name it, resume it, without
 * waiting for it to be scheduled just to stop (the SIGCONT cancels a stop
 * not yet taken).
 */
void follow__on_fork(struct probes *p, struct processes *ps, struct images *im, int verbose,
		     const struct memleak_event *ev)
{
	struct process_info info = { .tag = ev->proc, .pid = (pid_t)ev->tgid,
				     .ppid = (pid_t)ev->ppid };
	/* The child of an exec'd image runs it: its links, names and interpreter. */
	int err = ev->image ? image_links__hold(p, ev->image) : 0;

	if (!err && !target__stop_queued(info.pid))
		err = target__wait_stopped(info.pid, FORK_STOP_WAIT_MS);
	if (!err && ev->image)
		err = images__share(im, info.tag, ev->image);
	/* A fork of one that loaded its own libraries has them too (if it did). */
	if (!err && !ev->image && ev->prev && images__share(im, info.tag, ev->prev) == -ENOMEM)
		err = -ENOMEM;
	if (!err) {
		err = adopt(p, info.pid, ev->image);
		if (err && !p->follow.children->failed++)
			fprintf(stderr, "memleakbpf: cannot probe pid %d, started by pid %d: %s: it runs untraced\n",
				info.pid, info.ppid, strerror(-err));
	}
	info.traced = !err;
	target__cmdline(info.pid, &info.command);
	/* Named before it runs: a report never meets a site of a process it does not know. */
	info.hold_ms = clock__ms_since_ns(ev->time_ns);
	processes__add(ps, &info);
	target__continue(info.pid);
	/* Resumed: not the watchdog's any more (unless a later fork took the slot). */
	bpfmaps__release_held(p->skel, ev->proc, info.pid);
	if (verbose > 1)
		fprintf(stderr, "memleakbpf: following pid %d, started by pid %d: held %.1f ms\n",
			info.pid, info.ppid, info.hold_ms);
	free(info.command);
}

/*
 * pid ran exec: its links, on its old image's files, are closed now, and
 * waited for: the same library mapped again would trap into them as well
 * as into the new ones.
 */
void follow__close_now(struct probes *p, pid_t pid)
{
	struct follow *f = p->follow.children;

	for (size_t i = 0; f && i < f->nr_children; i++) {
		if (f->children[i].pid != pid)
			continue;
		fdclose__together(f->children[i].fds, f->children[i].nr);
		pthread_mutex_lock(&f->lock);
		f->links_closed += f->children[i].nr;
		pthread_mutex_unlock(&f->lock);
		f->children[i].nr = 0;
		return;
	}
}

/* More links of pid (its new image's), closed with the others at its end. */
int follow__add_links(struct probes *p, pid_t pid, const int *fds, size_t n)
{
	struct follow *f = p->follow.children;
	struct child_links *c = NULL;
	int *grown;

	for (size_t i = 0; f && i < f->nr_children && !c; i++)
		if (f->children[i].pid == pid)
			c = &f->children[i];
	if (f)
		f->links_made += n;
	grown = c ? realloc(c->fds, (c->nr + n) * sizeof(*grown) ?: 1) : NULL;
	if (!grown) {
		if (f)
			close_later(f, fds, n);
		return c ? -ENOMEM : -ESRCH;	/* ESRCH: it was never probed */
	}
	memcpy(grown + c->nr, fds, n * sizeof(*fds));
	c->fds = grown;
	c->nr += n;
	return 0;
}

/* The children of every thread of pid, appended to *kids. */
static int children_of(pid_t pid, pid_t **kids, size_t *nr, size_t *cap)
{
	char path[300], *text = NULL, *s, *end;
	struct dirent *e;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while (!err && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "task/%s/children", e->d_name);
		if (proc__read(pid, path, &text))
			continue;	/* the thread ended meanwhile */
		for (s = text; !err; s = end) {
			long v = strtol(s, &end, 10);

			if (end == s)
				break;
			err = vec__reserve_min(kids, cap, *nr + 1, sizeof(**kids), 16);
			if (!err)
				(*kids)[(*nr)++] = (pid_t)v;
		}
		free(text);
		text = NULL;
	}
	closedir(d);
	return err;
}

/* -p: a descendant running before the attach, followed from now on (not stopped). */
static void adopt_running(struct probes *p, struct processes *ps, pid_t pid, pid_t ppid)
{
	struct memleak_proc e = {
		.tag = bpfmaps__next_proc_tag(p->skel),
	};
	struct process_info info = { .tag = e.tag, .pid = pid, .ppid = ppid, .attached = true };
	int err;

	/* Already followed: it was forked by one we took in first, and BPF saw the fork. */
	if (bpfmaps__proc_add(p->skel, pid, &e))
		return;
	err = adopt(p, pid, 0);
	if (err && !p->follow.children->failed++)
		fprintf(stderr, "memleakbpf: cannot probe pid %d, started by pid %d: %s: it runs untraced\n",
			pid, ppid, strerror(-err));
	info.traced = !err;
	target__cmdline(pid, &info.command);
	processes__add(ps, &info);
	free(info.command);
}

struct kin {
	pid_t pid, ppid;
};

/* The children of parent, queued after what *queue holds. */
static int queue_children(pid_t parent, struct kin **queue, size_t *nr, size_t *cap)
{
	pid_t *kids = NULL;
	size_t n = 0, kcap = 0;
	int err = children_of(parent, &kids, &n, &kcap);

	if (err == -ENOENT || err == -ESRCH)
		err = 0;	/* it ended meanwhile */
	for (size_t i = 0; !err && i < n; i++) {
		err = vec__reserve_min(queue, cap, *nr + 1, sizeof(**queue), 16);
		if (!err)
			(*queue)[(*nr)++] = (struct kin){ kids[i], parent };
	}
	free(kids);
	return err;
}

/*
 * Parents before their children: once a parent is in BPF's table, the
 * children it forks are BPF's to follow, and the walk finds them there.
 */
int follow__running(struct probes *p, struct processes *ps, pid_t pid)
{
	struct kin *queue = NULL;
	size_t nr = 0, cap = 0, done = 0;
	int err;

	if (!p || !p->follow.children)
		return 0;
	err = queue_children(pid, &queue, &nr, &cap);
	for (; !err && done < nr; done++) {
		adopt_running(p, ps, queue[done].pid, queue[done].ppid);
		err = queue_children(queue[done].pid, &queue, &nr, &cap);
	}
	free(queue);
	return err < 0 ? err : (int)nr;
}

void follow__say(struct probes *p, struct processes *ps)
{
	struct follow_stats st;
	size_t exited = 0, execed = 0;
	struct process_info worst = {};

	if (!p->follow.children)
		return;
	follow_stats(p, &st);
	pthread_mutex_lock(&ps->lock);
	for (size_t i = 0; i < ps->nr; i++) {
		exited += ps->v[i].exited;
		execed += ps->v[i].execed;
	}
	pthread_mutex_unlock(&ps->lock);
	processes__get(ps, ps->max_hold_tag, &worst);
	fprintf(stderr, "memleakbpf: followed %zu processes (%zu exited, %zu ran exec)", ps->nr,
		exited, execed);
	if (ps->execs_probed) {
		processes__get(ps, ps->max_exec_tag, &worst);
		fprintf(stderr, "; %zu exec'd images probed, each from its exec until its allocator's probes were in place: at most %.1f ms (pid %d), %.2f ms on average",
			ps->execs_probed, ps->max_exec_ms, worst.pid,
			ps->total_exec_ms / (double)ps->execs_probed);
		processes__get(ps, ps->max_hold_tag, &worst);
	}
	if (ps->held)
		fprintf(stderr, "; each held from its fork until its probes were in place: at most %.1f ms (pid %d), %.2f ms on average",
			ps->max_hold_ms, worst.pid, ps->total_hold_ms / (double)ps->held);
	fprintf(stderr, "; links made %llu, closed %llu; processes with links now %zu, in BPF's table %zu; our fds %ld at the first fork, %ld now\n",
		(unsigned long long)st.links_made, (unsigned long long)st.links_closed,
		st.children_held, st.procs_entries, st.fds_before, st.fds_now);
}
