// SPDX-License-Identifier: GPL-2.0
/*
 * What the tracer's memory is for (memuse.h). The BPF maps are kernel
 * memory, in the resident set only where mapped (a window of the tables,
 * the CFI chunks being filled). The rest of it is malloc's heap: what it
 * hands out (the parts, the rest: symbolizer, modules, Python's code,
 * unwind rows, the report being built) and what it keeps free after a
 * report gave it back.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "memuse.h"
#include "model/report.h"
#include "util/proc.h"

/* A "key:" line of our status, in bytes; 0 when it cannot be read. */
static size_t status_bytes(const char *key)
{
	char v[64];

	return proc__status(getpid(), key, v, sizeof(v)) ? 0 : strtoull(v, NULL, 10) * 1024;
}

static const char *mib(size_t bytes, char *buf, size_t len)
{
	return report__human_size(bytes, buf, len);
}

/*
 * The BPF maps: kernel memory charged to our memory cgroup, in the resident
 * set only as far as it is mapped. Each table with how its size was chosen
 * (user/probe/probes.c: size_maps).
 */
static void say_maps(FILE *out, const struct snapshot_memory *p)
{
	char b[8][32], n[4][REPORT_COUNT_LEN];
	size_t listed = p->allocs_bytes + p->sites_bytes + p->cfi_bytes;

	if (!p->maps_bytes)
		return;	/* -k: said at its start */
	fprintf(out, "BPF maps %s of kernel memory besides, charged to our memory cgroup, not in the RSS "
		"but for what is mapped: live blocks %s (%s buckets of %d blocks, %zu B each: 1.5 slots "
		"a block of --max-allocs, to a power of two), sites %s (%s slots of %zu B, the counts in %zu copies, "
		"one a CPU: 1.5 a stack of --stack-storage-size, to a power of two), read through windows of %s at most "
		"(%s mapped so far, %s in all, at about 0.1 ms of the kernel's CPU a MiB); "
		"CFI rows %s (%s chunks, %s of them mapped), the other maps %s",
		mib(p->maps_bytes, b[0], 32), mib(p->allocs_bytes, b[1], 32),
		report__count(p->buckets, n[0]), MEMLEAK_BUCKET_SLOTS, sizeof(struct alloc_bucket),
		mib(p->sites_bytes, b[2], 32), report__count(p->slots, n[1]), p->slot_bytes,
		p->shards,
		mib(p->window, b[3], 32), report__count(p->windows, n[3]), mib(p->window_bytes, b[7], 32),
		mib(p->cfi_bytes, b[4], 32),
		report__count(p->cfi_chunks, n[2]), mib(p->cfi_mapped, b[5], 32),
		mib(p->maps_bytes > listed ? p->maps_bytes - listed : 0, b[6], 32));
	for (int i = 0; i < SNAPSHOT_MAPS_NAMED && p->largest[i].name; i++)
		fprintf(out, "%s%s %s", i ? ", " : " (the largest: ", p->largest[i].name,
			mib(p->largest[i].bytes, b[0], 32));
	fprintf(out, "%s; ", p->largest[0].name ? ")" : "");
}

void memuse__say(FILE *out, const struct snapshot_memory *p, size_t history, size_t history_bytes)
{
	struct mallinfo2 mi = mallinfo2();
	size_t used = mi.uordblks + mi.hblkhd;
	size_t counted = p->stack_bytes + p->frame_bytes + p->retired_bytes + history_bytes +
			 p->snapshot_bytes + p->carried_bytes + p->unwritten_bytes;
	char b[11][32];

	/*
	 * The BPF rings are mapped whole from the start: the stack ring's data
	 * once (util/ringread.h), the small ones' twice (libbpf: wrap-around);
	 * so is the 1.5 MiB array the live sites are copied out into (site_scan.h).
	 */
	fprintf(out, "memleakbpf: our memory: RSS %.1f MiB (peak %.1f MiB), %.1f MiB of it mapped "
		"(the BPF rings, the live sites' copy and files); ",
		status_bytes("VmRSS") / 1048576.0, status_bytes("VmHWM") / 1048576.0,
		(status_bytes("RssFile") + status_bytes("RssShmem")) / 1048576.0);
	say_maps(out, p);
	fprintf(out, "malloc %s in use (%s of it in blocks mapped apart, resident where written), "
		"%s kept free: stack cache %s (%zu stacks), their frames %s "
		"(%zu shared prefix nodes), stacks kept aside %s (%zu, and the figures of %zu sites "
		"folded into the totals), history %s (%zu stacks), "
		"this report's snapshot %s, carried over between reports %s, their slot indexes' "
		"pages not written yet %s, the rest %s (the "
		"report being built: its stacks and site frames; symbolizer, modules, Python code, "
		"unwind rows)\n",
		mib(used, b[1], 32), mib(mi.hblkhd, b[0], 32), mib(mi.fordblks, b[2], 32),
		mib(p->stack_bytes, b[3], 32), p->stacks, mib(p->frame_bytes, b[4], 32),
		p->frame_nodes, mib(p->retired_bytes, b[5], 32), p->retired,
		p->folded,
		mib(history_bytes, b[6], 32), history, mib(p->snapshot_bytes, b[7], 32),
		mib(p->carried_bytes, b[9], 32), mib(p->unwritten_bytes, b[10], 32),
		mib(used > counted ? used - counted : 0, b[8], 32));
}

/*
 * Blocks from this size on are mappings of their own, given back to the
 * kernel when freed, and grown in place (mremap) without a copy. glibc
 * moves its threshold up to 32 MiB as such blocks are freed, and then a
 * report's arrays and maps (hundreds of MiB, freed at its end) came from
 * the heap: 50 to 100 MiB of it kept free in our resident set at the
 * next report's peak on a torch job, whose peak fell from 550 to 500 MiB
 * with the threshold fixed. Each big block is fresh pages, faulted in;
 * the reports' CPU there did not rise beyond the noise (381 ms a report
 * against 395 with the sliding threshold, a report every second).
 */
#define MEMUSE_MMAP_THRESHOLD (1u << 20)

/*
 * glibc gives each thread that meets a busy arena one of its own: the
 * report's worker and the main thread (which reads the stack ring) each
 * kept what the other had freed, 157 MiB kept free after a torch job's
 * report against 67 MiB with one arena (its peak 92 MiB lower). And the
 * big blocks mapped apart (MEMUSE_MMAP_THRESHOLD).
 */
/* The thread that called memuse__setup (the loop's): the only one that drops pages. */
static pthread_t loop_thread;
static bool loop_known;

void memuse__setup(void)
{
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_MMAP_THRESHOLD, MEMUSE_MMAP_THRESHOLD);
	loop_thread = pthread_self();
	loop_known = true;
}

/* A mapping of /proc/self/maps. */
struct mapping {
	uintptr_t start, end;
	char perms[5];
	unsigned long major, minor, inode;
	bool path;		/* of a file (its path begins with '/') */
};

static bool mapping_parse(const char *line, struct mapping *m)
{
	int at = 0;

	if (sscanf(line, "%lx-%lx %4s %*x %lx:%lx %lu %n", &m->start, &m->end, m->perms,
		   &m->major, &m->minor, &m->inode, &at) < 6)
		return false;
	m->path = at && line[at] == '/';
	return true;
}

/* Has the file of m an executable mapping (it is an object loaded into us)? */
static bool file_loaded(const struct mapping *all, size_t nr, const struct mapping *m)
{
	for (size_t i = 0; i < nr; i++)
		if (all[i].inode == m->inode && all[i].major == m->major &&
		    all[i].minor == m->minor && all[i].perms[2] == 'x')
			return true;
	return false;
}

static size_t maps_read(struct mapping **out)
{
	FILE *f = fopen("/proc/self/maps", "re");
	struct mapping *v = NULL, *n;
	size_t nr = 0, cap = 0, len = 0;
	char *line = NULL;

	while (f && getline(&line, &len, f) > 0) {
		if (nr == cap) {
			if (!(n = realloc(v, (cap ? 2 * cap : 256) * sizeof(*v))))
				break;	/* those read so far */
			v = n;
			cap = cap ? 2 * cap : 256;
		}
		if (mapping_parse(line, &v[nr]))
			nr++;
	}
	free(line);
	if (f)
		fclose(f);
	*out = v;
	return nr;
}

/*
 * The pages of the files we only read stay in our RSS while mapped: the
 * target's libraries and their debug files, mapped read-only by libelf
 * to read symbols and unwind rows (libtorch_cpu's 5.4 MiB on a torch
 * job). A mapping never writable has no page of its own: its pages are
 * dropped from our page tables, and come back from the page cache if read
 * again (a minor fault a page). Not those of an object loaded into us (a
 * file with an executable mapping): the loader wrote some before making
 * them read-only (relocations), and a private page written would be lost.
 * Writable mappings are left (libdw maps files privately, writable).
 * Bytes of the mappings dropped.
 *
 * MADV_DONTNEED acts on whatever is mapped at an address when it runs,
 * not on what /proc/self/maps said a moment before: a file another thread
 * unmapped meanwhile, and a block malloc mapped in its place, was zeroed;
 * a BPF map mapped there (a CFI chunk) lost its pages, and the next write
 * to it was a SIGBUS, which ended the tracer without a word in the middle
 * of a torch job's import. MADV_PAGEOUT, which keeps every byte, leaves
 * alone the files of other owners. So only the loop's thread drops, while
 * no other maps or unmaps a file (reports.c: no job runs).
 */
size_t memuse__drop_read_pages(void)
{
	struct mapping *all;
	size_t nr, bytes = 0;

	if (loop_known && !pthread_equal(pthread_self(), loop_thread))
		return 0;
	nr = maps_read(&all);

	for (size_t i = 0; i < nr; i++) {
		const struct mapping *m = &all[i];

		if (!m->path || !m->inode || m->perms[0] != 'r' || m->perms[1] != '-' ||
		    m->perms[2] != '-' || file_loaded(all, nr, m))
			continue;
		if (!madvise((void *)m->start, m->end - m->start, MADV_DONTNEED))
			bytes += m->end - m->start;
	}
	free(all);
	return bytes;
}

/*
 * A report frees what it built (hundreds of MiB on a large job), in holes
 * among what is kept: malloc gives back only the top of its heap. The
 * rest stays in our resident set until the next report reuses some of it.
 * And the pages of the files only read (memuse__drop_read_pages).
 */
void memuse__give_back(FILE *out)
{
	struct timespec t0, t1;
	size_t before = out ? mallinfo2().fordblks : 0;
	size_t files = out ? status_bytes("RssFile") : 0, after;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	malloc_trim(0);
	memuse__drop_read_pages();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	after = out ? status_bytes("RssFile") : 0;
	files = files > after ? files - after : 0;
	if (out)
		fprintf(out, "memleakbpf: gave back the pages of %.1f MiB malloc kept free and of "
			"%.1f MiB of files only read, in %.1f ms of CPU\n",
			before / 1048576.0, files / 1048576.0,
			((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e6);
}
