// SPDX-License-Identifier: GPL-2.0
/*
 * v_jit: code that lives in no file, as a JIT makes it. The victim copies a
 * small stub into an anonymous executable page and describes it in
 * /tmp/perf-PID.map, as JIT runtimes do for perf; the stub calls malloc
 * through a pointer, keeping the frame-pointer chain, so the stack is
 * malloc <- stub <- via_jit <- main. The map also has an older line for
 * the stub's range under another name (a later line wins: JITs reuse
 * memory) and a decoy just below it.
 *   v_jit        leaks, writes its truth, exits 0; the map stays (the test
 *                removes it): tracers read it after the process is gone
 *   v_jit wait   prints "READY pid=N", waits for a line on stdin, leaks,
 *                prints "LEAKED", waits for another line, removes its map,
 *                exits 0 (for -p)
 * The stub's name is JIT_NAME; x86-64 only (elsewhere: "# jit: unsupported").
 * Comments "@name" mark the call lines tests/e2e/run.py expects.
 * Truth: TRUTH lines (see truth.h) to $VICTIM_TRUTH or stdout.
 *
 * Truth: 2 TRUTH lines; heap 555 bytes in 3 blocks (site_jit_stub), mappings
 * 4,096 bytes in 1 (site_jit_page, the code page).
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include "truth.h"

#define JIT_NAME "jit::site_stub demo.js:3"
#define STUB_OFFSET 64	/* the stub is not at the page start; the decoy is */

typedef void *alloc_fn(size_t n);
typedef void *stub_fn(alloc_fn *fn, size_t n);

#if defined(__x86_64__)
/* void *stub(alloc_fn *fn, size_t n) { return fn(n); }, with a frame. */
static const unsigned char stub_code[] = {
	0x55,			/* push %rbp */
	0x48, 0x89, 0xe5,	/* mov %rsp,%rbp */
	0x48, 0x89, 0xf8,	/* mov %rdi,%rax */
	0x48, 0x89, 0xf7,	/* mov %rsi,%rdi */
	0xff, 0xd0,		/* call *%rax */
	0x5d,			/* pop %rbp */
	0xc3,			/* ret */
};
#endif

static char map_path[64];

static int wait_line(void)
{
	char c;
	ssize_t n;

	for (;;) {
		n = read(0, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || c == '\n')
			return n > 0;
	}
}

static void map_line(int fd, uintptr_t start, size_t size, const char *name)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "%lx %zx %s\n", (unsigned long)start, size, name);

	tr_write_all(fd, line, n);
}

/* The JIT's code page: kept, as a JIT keeps its code. */
SITE unsigned char *site_jit_page(void)
{
	int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS;
	void *p = mmap(NULL, 4096, prot, flags, -1, 0); TR_ALLOC(p == MAP_FAILED ? NULL : p, 4096, "mmap");

	if (p == MAP_FAILED)
		tr_die("mmap");
	ESCAPE(p);
	return p;
}

/* The stub, copied into fresh anonymous executable memory and announced. */
VIA stub_fn *make_stub(void)
{
	unsigned char *page;
	uintptr_t stub;
	int fd;

	TR_ENTER();
	page = site_jit_page();	/* @make_calls_page */
	stub = (uintptr_t)page + STUB_OFFSET;

	memset(page, 0xcc, 4096);	/* int3 */
	memcpy(page + STUB_OFFSET, stub_code, sizeof(stub_code));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC))
		tr_die("mprotect");
	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
	fd = open(map_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		tr_die("cannot write /tmp/perf-PID.map");
	map_line(fd, stub, sizeof(stub_code), "jit::stale_code");
	map_line(fd, (uintptr_t)page, STUB_OFFSET, "jit::decoy");
	map_line(fd, stub, sizeof(stub_code), JIT_NAME);
	close(fd);
	TR_LEAVE();
	return (stub_fn *)stub;
}

VIA void via_jit(stub_fn *stub)
{
	TR_ENTER();
	for (size_t n = 184; n <= 186; n++) {
		void *p = stub(malloc, n);	/* @stub_call */
		tr_alloc_at(p, n, "site_jit_stub", "malloc", 0);
		ESCAPE(p);
	}
	TR_LEAVE();
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "wait");
	char line[64];

	TR_ENTER();
#if defined(__x86_64__)
	if (wait) {
		int n = snprintf(line, sizeof(line), "READY pid=%d\n", (int)getpid());

		tr_write_all(1, line, n);
		if (!wait_line())
			_exit(3);
	}
	via_jit(make_stub());	/* @main_jit */
#else
	tr_note("jit", "unsupported");
#endif
	tr_report();
	if (wait) {
		tr_say(1, "LEAKED\n");
		wait_line();
		unlink(map_path);
	}
	TR_LEAVE();
	return 0;
}
