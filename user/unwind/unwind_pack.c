// SPDX-License-Identifier: GPL-2.0
/*
 * The CFI of many files read and packed at once, on the machine's cores:
 * under -c the target stays stopped until the tables of what it just
 * mapped are in BPF, and `import torch` maps 279 libraries in one go, 0.4
 * s of reading on one core (libtorch_cpu.so's 1.4 million rows half of it).
 * Each file is its own work (its own fd and libelf handle); the rows are
 * put in order afterwards, on the caller's thread.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "unwind_internal.h"
#include "util/nice.h"

#define PACK_THREADS 4	/* at most; one per core, the caller's among them */
/*
 * The readers' nice value: the target waits for them, as for a sweep the
 * churn outruns or a report's reading of the tables, which run at the
 * same; at 0 they shared the two cores with whatever else ran (`import
 * torch`'s 0.35 s of CPU took 0.3 to 1 s at a load of 3 to 5).
 */
#define PACK_NICE (-10)

struct pack_work {
	struct table *tables;
	const struct unwind_cache *cache;
	const size_t *which;
	struct unwind_packed *out;
	size_t *order;		/* of which[]: the largest file first; NULL: as given */
	size_t nr;
	size_t next;		/* atomic: the next of order[] to take */
	uint64_t cpu_ns;	/* atomic: the CPU time of every thread at it (for -v) */
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* t's rows from the cache, if it holds them (a miss leaves out keyed, for the writer). */
static bool from_cache(struct table *t, const struct unwind_cache *cache,
		       struct unwind_packed *out)
{
	if (!cache || unwind_cache__key(t->fd, t->build_id, t->build_id_len, &out->key))
		return false;
	out->keyed = true;
	out->cached = !unwind_cache__get(cache, &out->key, &t->cfi, &out->lent);
	out->nr = out->lent.nr;
	return out->cached;
}

void unwind_pack__release(struct unwind_packed *p)
{
	free(p->rows);
	unwind_cache__put_back(&p->lent);
	p->rows = NULL;
	p->nr = 0;
}

void unwind_pack__one(struct table *t, const struct unwind_cache *cache,
		      struct cfi_scratch *scratch, struct unwind_packed *out)
{
	*out = (struct unwind_packed){ 0 };
	if (!from_cache(t, cache, out))
		out->err = cfi__read_packed_fd(t->fd, scratch, &t->cfi, &out->rows, &out->nr);
	if (!out->err && out->nr > MEMLEAK_CFI_MAX_ROWS)
		out->err = -ENOSPC;	/* more than BPF's binary search reaches */
	if (out->err) {
		unwind_pack__release(out);
		cfi__table_free(t->cfi);
		t->cfi = NULL;
	}
	close(t->fd);
	t->fd = -1;
}

static void *work(void *arg)
{
	struct pack_work *w = arg;
	struct cfi_scratch scratch = { 0 };	/* this thread's, the largest file's size from the first */
	uint64_t cpu0 = thread_cpu_ns();
	int was = nice__raise(PACK_NICE);
	size_t i;

	while ((i = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < w->nr) {
		size_t k = w->order ? w->order[i] : i;

		unwind_pack__one(&w->tables[w->which[k]], w->cache, &scratch, &w->out[k]);
	}
	cfi__scratch_free(&scratch);
	__atomic_fetch_add(&w->cpu_ns, thread_cpu_ns() - cpu0, __ATOMIC_RELAXED);
	nice__restore(was);
	return NULL;
}

struct sized {
	off_t size;
	size_t index;
};

static int by_size_down(const void *a, const void *b)
{
	const struct sized *x = a, *y = b;

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The largest files first (their size stands for their rows): the cores
 * end together, instead of one of them reading libtorch_cpu.so's 1.4
 * million rows alone at the end while the target waits. NULL: no memory.
 */
static size_t *largest_first(const struct table *tables, const size_t *which, size_t nr)
{
	struct sized *s = calloc(nr, sizeof(*s));
	size_t *order = calloc(nr, sizeof(*order));
	struct stat st;

	if (!s || !order) {
		free(s);
		free(order);
		return NULL;
	}
	for (size_t i = 0; i < nr; i++)
		s[i] = (struct sized){ fstat(tables[which[i]].fd, &st) ? 0 : st.st_size, i };
	qsort(s, nr, sizeof(*s), by_size_down);
	for (size_t i = 0; i < nr; i++)
		order[i] = s[i].index;
	free(s);
	return order;
}

static size_t helpers_for(size_t nr)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = cores > 1 ? (size_t)cores - 1 : 0;

	n = n < PACK_THREADS - 1 ? n : PACK_THREADS - 1;
	return n < nr - 1 ? n : nr - 1;
}

uint64_t unwind_pack__tables(struct table *tables, const size_t *which, size_t nr,
			     const struct unwind_cache *cache, struct unwind_packed *out)
{
	struct pack_work w = { tables, cache, which, out, NULL, nr, 0, 0 };
	pthread_t threads[PACK_THREADS];
	size_t started = 0, want = nr ? helpers_for(nr) : 0;
	sigset_t all, old;

	if (want)
		w.order = largest_first(tables, which, nr);

	/* Signals stay with the loop's thread: the helpers block them all. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	while (started < want && !pthread_create(&threads[started], NULL, work, &w))
		started++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	work(&w);	/* without a helper thread, all of it here */
	for (size_t i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	free(w.order);
	return w.cpu_ns;
}
