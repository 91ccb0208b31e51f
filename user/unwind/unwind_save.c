// SPDX-License-Identifier: GPL-2.0
/*
 * The unwind cache written behind the target's back: the rows a stop
 * built are handed over once they are in BPF, and a thread of its own,
 * at the lowest priority, writes them (the stop's last steps on the
 * loop's thread and then the target run meanwhile: a stop must not wait
 * for 46 MB going to disk), then trims the directory to its cap.
 * A failure to write costs the next run its time, nothing else: it is one
 * -v line at the end. The run's end waits for the writes still queued.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "unwind_internal.h"
#include "util/nice.h"
#include "util/vec.h"

#define SAVE_NICE 19
/* A file changed this recently may change again within its timestamps' tick: not kept. */
#define FRESH_NS 2000000000ll

struct save_job {
	struct unwind_cache_key key;
	struct cfi_table *cfi;		/* a copy: segments and the rest, no rows */
	struct unwind_row *rows;
	size_t nr;
};

struct unwind_save {
	struct unwind_cache *cache;
	pthread_t thread;
	pid_t tid;			/* the thread's, for its priority at the end */
	bool started, closing;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct save_job *jobs;		/* queued, under lock */
	size_t nr_jobs, cap_jobs;
	/* The thread's, read once it is joined. */
	size_t written, failed, removed;
	uint64_t bytes;
	int first_err;
};

struct unwind_save *unwind_save__new(struct unwind_cache *cache)
{
	struct unwind_save *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->cache = cache;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->wake, NULL);
	return s;
}

static void job_free(struct save_job *j)
{
	cfi__table_free(j->cfi);
	free(j->rows);
}

static void write_job(struct unwind_save *s, struct save_job *j)
{
	int err = unwind_cache__put(s->cache, &j->key, j->cfi, j->rows, j->nr);

	if (err) {
		s->failed++;
		s->first_err = s->first_err ?: err;
	} else {
		s->written++;
		s->bytes += j->nr * sizeof(*j->rows);
	}
	job_free(j);
}

static void *save_thread(void *arg)
{
	struct unwind_save *s = arg;

	nice__raise(SAVE_NICE);
	pthread_mutex_lock(&s->lock);
	s->tid = gettid();
	for (;;) {
		struct save_job *jobs = s->jobs;
		size_t nr = s->nr_jobs;

		if (!nr && s->closing)
			break;
		if (!nr) {
			pthread_cond_wait(&s->wake, &s->lock);
			continue;
		}
		s->jobs = NULL;
		s->nr_jobs = s->cap_jobs = 0;
		pthread_mutex_unlock(&s->lock);
		for (size_t i = 0; i < nr; i++)
			write_job(s, &jobs[i]);
		free(jobs);
		s->removed += unwind_cache__trim(s->cache, UNWIND_CACHE_MAX_BYTES);
		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static int start(struct unwind_save *s)
{
	sigset_t all, old;
	int err;

	/* Signals stay with the loop's thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&s->thread, NULL, save_thread, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	s->started = !err;
	return -err;
}

/* A copy of what places cfi's rows in a process, without its rows. */
static struct cfi_table *head_copy(const struct cfi_table *cfi)
{
	struct cfi_table *t = malloc(sizeof(*t));

	if (!t)
		return NULL;
	*t = *cfi;
	t->rows = NULL;
	t->nr = 0;
	t->segs = malloc((cfi->nr_segs ?: 1) * sizeof(*t->segs));
	if (!t->segs) {
		free(t);
		return NULL;
	}
	memcpy(t->segs, cfi->segs, cfi->nr_segs * sizeof(*t->segs));
	return t;
}

static bool fresh(const struct unwind_cache_key *k)
{
	struct timespec ts;
	int64_t now;

	clock_gettime(CLOCK_REALTIME, &ts);
	now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	return now - k->mtime_ns < FRESH_NS || now - k->ctime_ns < FRESH_NS;
}

bool unwind_save__queue(struct unwind_save *s, const struct unwind_cache_key *k,
			const struct cfi_table *cfi, struct unwind_row *rows, size_t nr)
{
	struct save_job j = { *k, NULL, rows, nr };
	bool queued = false;

	if (!s || !cfi || fresh(k) || !(j.cfi = head_copy(cfi)))
		return false;
	pthread_mutex_lock(&s->lock);
	if ((s->started || !start(s)) &&
	    !vec__reserve(&s->jobs, &s->cap_jobs, s->nr_jobs + 1, sizeof(j))) {
		s->jobs[s->nr_jobs++] = j;
		queued = true;
		pthread_cond_signal(&s->wake);
	}
	pthread_mutex_unlock(&s->lock);
	if (!queued)
		cfi__table_free(j.cfi);	/* rows stay the caller's */
	return queued;
}

void unwind_save__free(struct unwind_save *s, int verbose)
{
	if (!s)
		return;
	if (s->started) {
		pthread_mutex_lock(&s->lock);
		/* The run's end waits for it now: not behind everything else on the machine. */
		if (s->tid)
			setpriority(PRIO_PROCESS, (id_t)s->tid, 0);
		s->closing = true;
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	if (verbose && (s->written || s->failed))
		fprintf(stderr, "memleakbpf: unwind cache %s: %zu tables written (%.1f MiB of rows), %zu not (%s), %zu old entries removed\n",
			unwind_cache__dir(s->cache), s->written, (double)s->bytes / (1 << 20),
			s->failed, s->failed ? strerror(-s->first_err) : "-", s->removed);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	unwind_cache__free(s->cache);
	free(s);
}
