// SPDX-License-Identifier: GPL-2.0
/* memuse.c: -v's account of the tracer's memory names each part with its figure. */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "analyze/history_internal.h"
#include "analyze/memuse.h"
#include "model/report.h"
#include "model/retired.h"
#include "probe/snapshot_kept_internal.h"
#include "unit.h"

/*
 * The records there are one of for every site or stack (250,000 and more
 * at a torch job's reports, issue 27) keep their size: a field that only
 * some mode reads goes beside them (snapshot.blocks, report_stack.blocks),
 * not into each. A slot's memo is its site's index (the key is the site's).
 */
TEST(memuse_per_site_records_keep_their_size)
{
	ASSERT(sizeof(struct snap_site) <= 112);
	ASSERT(sizeof(struct report_stack) <= 216);
	ASSERT(sizeof(struct retired_site) <= 56);
	ASSERT(sizeof(struct hstack) <= 120);
	ASSERT(sizeof(*((struct snapshot_kept *)NULL)->slots) == 4);
	return true;
}

TEST(memuse_names_each_part)
{
	struct snapshot_memory m = {
		.allocs_bytes = 58ull << 20, .buckets = 262144, .sites_bytes = 160ull << 20,
		.slots = 524288, .slot_bytes = 320, .shards = 4, .cfi_bytes = 1ull << 20, .cfi_chunks = 8, .cfi_mapped = 640 << 10,
		.maps_bytes = 250ull << 20, .largest = { { "py_code_freed", 24ull << 20 },
							   { "stack_ring", 4ull << 20 } },
		.window = (4 << 20) + 4096, .windows = 1234, .window_bytes = 3ull << 30, .stacks = 3, .stack_bytes = 5ull << 20,
		.frame_nodes = 9, .frame_bytes = 4ull << 20, .retired = 7, .retired_bytes = 3ull << 20,
		.folded = 13, .snapshot_bytes = 2ull << 20, .carried_bytes = 6ull << 20,
		.unwritten_bytes = 3ull << 20,
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ASSERT(f);
	memuse__say(f, &m, 11, 1ull << 20);
	fclose(f);
	/* The BPF maps: kernel memory, each table with how its size was chosen. */
	ASSERT(strstr(text, "BPF maps 250.0 MiB of kernel memory besides, charged to our memory "
			  "cgroup, not in the RSS but for what is mapped: "));
	ASSERT(strstr(text, "live blocks 58.0 MiB (262,144 buckets of 7 blocks, 232 B each: 1.5 "
			  "slots a block of --max-allocs, to a power of two)"));
	ASSERT(strstr(text, "sites 160.0 MiB (524,288 slots of 320 B, the counts in 4 copies, one a "
			  "CPU: 1.5 a stack of --stack-storage-size, to a power of two), read through "
			  "windows of 4.0 MiB "
			  "at most (1,234 mapped so far, 3.0 GiB in all, "));
	ASSERT(strstr(text, "CFI rows 1.0 MiB (8 chunks, 640.0 KiB of them mapped), the other maps "
			  "31.0 MiB (the largest: py_code_freed 24.0 MiB, stack_ring 4.0 MiB); malloc "));
	ASSERT(strstr(text, "stack cache 5.0 MiB (3 stacks)"));
	ASSERT(strstr(text, "their frames 4.0 MiB (9 shared prefix nodes)"));
	ASSERT(strstr(text, "stacks kept aside 3.0 MiB (7, and the figures of 13 sites folded into "
			  "the totals)"));
	ASSERT(strstr(text, "history 1.0 MiB (11 stacks)"));
	ASSERT(strstr(text, "this report's snapshot 2.0 MiB"));
	ASSERT(strstr(text, "carried over between reports 6.0 MiB, their slot indexes' pages not "
			  "written yet 3.0 MiB, the rest "));
	ASSERT(strstr(text, "RSS ") && strstr(text, "(peak "));
	free(text);
	return true;
}

/* After a report: what malloc keeps free is given back, and -v says how much and at what cost. */
TEST(memuse_gives_back_what_malloc_keeps_free)
{
	enum { N = 64 };
	char *keep[N], *hole[N];
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ASSERT(f);
	/* Holes of 64 KiB among blocks kept: below the mmap threshold, in the heap. */
	for (int i = 0; i < N; i++) {
		hole[i] = malloc(64 << 10);
		keep[i] = malloc(2048);	/* past tcache and fastbins: from the top, between the holes */
		ASSERT(hole[i] && keep[i]);
		memset(hole[i], 1, 64 << 10);
	}
	for (int i = 0; i < N; i++)
		free(hole[i]);
	memuse__give_back(f);
	memuse__give_back(NULL);	/* without -v: says nothing */
	fclose(f);
	ASSERT(strstr(text, "memleakbpf: gave back the pages of ") &&
	       strstr(text, " MiB malloc kept free and of ") &&
	       strstr(text, " MiB of files only read, in ") && strstr(text, " ms of CPU\n"));
	ASSERT(strchr(text, '\n') == text + len - 1);	/* one line */
#ifndef __SANITIZE_ADDRESS__
	/* glibc's malloc (not ASan's): the 4 MiB of holes were kept free, and said. */
	ASSERT(strtod(strstr(text, "pages of ") + strlen("pages of "), NULL) >= 4.0);
#endif
	for (int i = 0; i < N; i++)
		free(keep[i]);
	free(text);
	return true;
}

/* The resident KiB of our mapping that starts at addr (/proc/self/smaps); -1: not found. */
static long rss_of(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	bool in = false;
	long kib = -1;
	uintptr_t start;

	while (f && fgets(line, sizeof(line), f)) {
		const char *dash = strchr(line, '-'), *space = strchr(line, ' ');

		if (dash && space && dash < space && sscanf(line, "%lx-", &start) == 1)
			in = start == (uintptr_t)addr;
		else if (in && sscanf(line, "Rss: %ld kB", &kib) == 1)
			break;
	}
	if (f)
		fclose(f);
	return kib;
}

/* A file of 1 MiB of byte c; its fd, or -1. */
static int file_of(char *path, char c)
{
	static char buf[1 << 20];
	int fd = mkstemp(path);

	memset(buf, c, sizeof(buf));
	if (fd >= 0 && write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * The pages of a file only read leave our resident set, also where the
 * file has a private writable mapping besides (libdw's), which keeps its
 * pages and what was written in them; a file with an executable mapping
 * (as an object loaded into us) keeps all its pages.
 */
TEST(memuse_drops_the_pages_of_files_only_read)
{
	char read_path[] = "/tmp/memuse-read-XXXXXX", wrote_path[] = "/tmp/memuse-wrote-XXXXXX";
	char code_path[] = "/tmp/memuse-code-XXXXXX";
	int rfd = file_of(read_path, 'r'), wfd = file_of(wrote_path, 'w');
	int cfd = file_of(code_path, 'c');
	size_t len = 1 << 20;
	char *r = rfd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ, MAP_PRIVATE, rfd, 0);
	char *w = wfd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, wfd, 0);
	char *wr = wfd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ, MAP_PRIVATE, wfd, 0);
	char *c = cfd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ, MAP_PRIVATE, cfd, 0);
	char *cx = cfd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, cfd, 0);
	volatile char sum = 0;
	bool ok;

	unlink(read_path);
	unlink(wrote_path);
	unlink(code_path);
	ASSERT(r != MAP_FAILED && w != MAP_FAILED && wr != MAP_FAILED && c != MAP_FAILED &&
	       cx != MAP_FAILED);
	for (size_t i = 0; i < len; i += 4096) {
		sum += r[i] + wr[i] + c[i];
		w[i] = 'x';	/* private copies: the file stays 'w' */
	}
	ok = rss_of(r) == 1024 && rss_of(wr) == 1024 && rss_of(c) == 1024;
	ok = ok && memuse__drop_read_pages() >= 2 * len;
	ok = ok && rss_of(r) == 0 && rss_of(wr) == 0 && r[4096] == 'r' && wr[4096] == 'w';
	ok = ok && rss_of(w) == 1024 && w[8192] == 'x';	/* writable: left as it was */
	ok = ok && rss_of(c) == 1024;	/* a file with code mapped: left */
	munmap(r, len);
	munmap(w, len);
	munmap(wr, len);
	munmap(c, len);
	munmap(cx, 4096);
	close(rfd);
	close(wfd);
	close(cfd);
	return ok;
}

static void *drop_elsewhere(void *arg)
{
	*(size_t *)arg = memuse__drop_read_pages();
	return NULL;
}

/*
 * Pages are dropped on the loop's thread (memuse__setup's) only: off it, a
 * drop raced the loop's stops, which unmap files and map blocks and BPF
 * maps in their place, and zeroed a block of ours or left a BPF map
 * without pages (a SIGBUS at its next write: the torch job's lost report).
 * A file only read keeps its pages through a drop on another thread, and
 * loses them through one on the loop's.
 */
TEST(memuse_drops_pages_only_on_the_loops_thread)
{
	char path[] = "/tmp/memuse-loop-XXXXXX";
	int fd = file_of(path, 'r');
	size_t len = 1 << 20, elsewhere = 1;
	char *r = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	volatile char sum = 0;
	pthread_t t;
	bool ok;

	unlink(path);
	ASSERT(r != MAP_FAILED);
	memuse__setup();	/* this thread is the loop's */
	for (size_t i = 0; i < len; i += 4096)
		sum += r[i];
	ok = rss_of(r) == 1024 && !pthread_create(&t, NULL, drop_elsewhere, &elsewhere) &&
	     !pthread_join(t, NULL);
	ok = ok && elsewhere == 0 && rss_of(r) == 1024;	/* another thread's: nothing dropped */
	ok = ok && memuse__drop_read_pages() >= len && rss_of(r) == 0 && r[4096] == 'r';
	munmap(r, len);
	close(fd);
	return ok;
}
