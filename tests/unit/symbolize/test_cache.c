// SPDX-License-Identifier: GPL-2.0
/*
 * What the symbolizer reads, and how often: a file once per run whatever its
 * loads (keyed by build id), and a file with broken debug info given up
 * after the failure limit. "Read" is seen from outside: libdwfl keeps a
 * descriptor of every file it was given, so a file read again shows as one
 * more open descriptor.
 */
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "fixture.h"
#include "symbolize/symbolize.h"
#include "unit.h"

#define BIAS_A 0x555555554000ull
#define BIAS_B 0x7f0000100000ull
#define BIAS_C 0x561234560000ull

static bool same_frames(const struct report_frame *a, size_t na, const struct report_frame *b,
			size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++) {
		if (strcmp(a[i].function ?: "", b[i].function ?: "") ||
		    strcmp(a[i].file ?: "", b[i].file ?: "") || a[i].line != b[i].line ||
		    a[i].inlined != b[i].inlined || a[i].module_offset != b[i].module_offset)
			return false;
	}
	return true;
}

/* Resolve vaddr at bias; *new_fds: the descriptors the symbolizer opened for it. */
static bool resolve_counting(struct symbolizer *s, const struct modules *mods, uint64_t bias,
			     uint64_t vaddr, struct report_frame **frames, size_t *nr, int *new_fds)
{
	int before = fx_open_fds();

	*frames = NULL;
	*nr = 0;
	if (symbolizer__resolve(s, mods, bias + vaddr, true, frames, nr))
		return false;
	*new_fds = fx_open_fds() - before;
	return true;
}

static int copy_file(const char *from, const char *to)
{
	char cmd[2 * PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
	return system(cmd) ? -1 : 0;
}

TEST(sym_file_read_once_per_run)
{
	const char *bin = fx_victim("v_inline");
	uint64_t vaddr = fx_call_return(bin, "via_inl_host", "calloc@plt", 0);
	char copy[] = "/tmp/memleakbpf-sym-copy-XXXXXX";
	struct modules *mods = modules__new(getpid());
	struct symbolizer *s = symbolizer__new(NULL, 0);
	struct report_frame *first = NULL, *f = NULL;
	size_t nfirst = 0, nf = 0;
	int fds = 0, fd = mkstemp(copy);
	bool ok = mods && s && vaddr && fd >= 0 && !copy_file(bin, copy);

	/* The first load: the file is read (one descriptor kept by libdwfl). */
	ok = ok && !fx_load(mods, bin, BIAS_A) &&
	     resolve_counting(s, mods, BIAS_A, vaddr, &f, &nfirst, &fds);
	ASSERT(ok && nfirst == 3 && fds == 1);
	/* Kept past the resets below, which end what the frames borrow. */
	first = fx_frames_copy(f, nfirst);
	fx_frames_free(f, nfirst);
	ASSERT(first);
	/* The same file loaded again elsewhere (dlopen after dlclose): not reread. */
	ok = !fx_load(mods, bin, BIAS_B) && resolve_counting(s, mods, BIAS_B, vaddr, &f, &nf, &fds);
	ok = ok && same_frames(first, nfirst, f, nf) && fds == 0 && f[0].address == BIAS_B + vaddr;
	fx_frames_free(f, nf);
	ASSERT(ok);
	/* An exec: a new image of the same file. */
	symbolizer__reset(s);
	modules__clear(mods);
	ok = !fx_load(mods, bin, BIAS_C) && resolve_counting(s, mods, BIAS_C, vaddr, &f, &nf, &fds);
	ok = ok && same_frames(first, nfirst, f, nf) && fds == 0;
	fx_frames_free(f, nf);
	ASSERT(ok);
	/* Another file with the same build id (a container's copy): not read either. */
	symbolizer__reset(s);
	modules__clear(mods);
	ok = !fx_load(mods, copy, BIAS_A) && resolve_counting(s, mods, BIAS_A, vaddr, &f, &nf, &fds);
	ok = ok && same_frames(first, nfirst, f, nf) && fds == 0 && !strcmp(f[0].module, copy);
	fx_frames_free(f, nf);
	fx_frames_free(first, nfirst);
	symbolizer__free(s);
	modules__free(mods);
	close(fd);
	unlink(copy);
	return ok;
}

/* Overwrite section name of the file at path with zeros. */
static int zero_section(const char *path, const char *name)
{
	int fd = open(path, O_RDWR | O_CLOEXEC), err = -1;
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			char *zeros;

			if (!gelf_getshdr(scn, &sh) ||
			    strcmp(elf_strptr(elf, shstrndx, sh.sh_name) ?: "", name))
				continue;
			zeros = calloc(1, sh.sh_size);
			if (zeros && pwrite(fd, zeros, sh.sh_size, sh.sh_offset) == (ssize_t)sh.sh_size)
				err = 0;
			free(zeros);
			break;
		}
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return err;
}

struct broken {
	struct symbolizer *s;
	struct modules *mods;
	uint64_t start, size;	/* of via_inl_host */
	size_t most_frames;	/* over the first 31 addresses: before the limit of 32 */
	bool failed;
};

/* Every address of via_inl_host: each is a function with no line: a failure. */
static void resolve_all(void *arg)
{
	struct broken *b = arg;

	for (uint64_t a = b->start; a < b->start + b->size && !b->failed; a++) {
		struct report_frame *frames = NULL;
		size_t nr = 0;

		b->failed = symbolizer__resolve(b->s, b->mods, BIAS_A + a, false, &frames, &nr) ||
			    !nr || strcmp(frames[nr - 1].function ?: "", "via_inl_host");
		if (a - b->start < 31 && nr > b->most_frames)
			b->most_frames = nr;
		fx_frames_free(frames, nr);
	}
}

TEST(sym_failure_limit)
{
	const char *bin = fx_victim("v_inline");
	char copy[] = "/tmp/memleakbpf-sym-broken-XXXXXX";
	uint64_t ret = fx_call_return(bin, "via_inl_host", "calloc@plt", 0);
	struct broken b = { .start = fx_nm(bin, "via_inl_host"),
			    .size = fx_nm_size(bin, "via_inl_host") };
	struct report_frame *frames = NULL;
	int fd = mkstemp(copy);
	size_t nr = 0;
	char *err;
	bool ok;

	b.mods = modules__new(getpid());
	b.s = symbolizer__new(NULL, 0);
	ok = b.mods && b.s && ret && b.size > 64 && fd >= 0 && !copy_file(bin, copy) &&
	     !zero_section(copy, ".debug_line") && !fx_load(b.mods, copy, BIAS_A);
	ASSERT(ok);
	err = fx_capture_stderr(resolve_all, &b);
	/* Said once, with the file's name. */
	ok = !b.failed && err && strstr(err, copy) && strstr(err, "32 lookups failed") &&
	     !strstr(strstr(err, "32 lookups failed") + 17, "lookups failed");
	if (!ok)
		fprintf(stderr, "  stderr: %s\n", err ?: "(none)");
	free(err);
	/* Before the limit, DWARF still gave inlined frames; past it, the symbol only. */
	ok = ok && b.most_frames >= 2 &&
	     !symbolizer__resolve(b.s, b.mods, BIAS_A + ret, true, &frames, &nr) && nr == 1 &&
	     !strcmp(frames[0].function ?: "", "via_inl_host") && !frames[0].file;
	if (!ok)
		fprintf(stderr, "  most frames %zu; past the limit %zu frames, %s\n", b.most_frames,
			nr, nr ? frames[0].function : "-");
	fx_frames_free(frames, nr);
	symbolizer__free(b.s);
	modules__free(b.mods);
	close(fd);
	unlink(copy);
	return ok;
}

/*
 * modules__find through its index: the module over an address, none in
 * the gaps and at an end, and where two loads overlap (a library loaded
 * again where another was), the newest.
 */
TEST(sym_modules_find_newest_over_an_address)
{
	const char *a = fx_victim("v_inline"), *b = fx_victim("v_basic");
	struct modules *mods = modules__new(getpid());
	const struct module *ma, *mb, *m;

	ASSERT(mods && !fx_load(mods, a, BIAS_A) && !fx_load(mods, b, BIAS_B));
	ma = modules__find(mods, BIAS_A + 0x1000);
	mb = modules__find(mods, BIAS_B + 0x1000);
	ASSERT(ma && mb && ma != mb && !strcmp(ma->path, a) && !strcmp(mb->path, b));
	ASSERT(modules__find(mods, ma->start) == ma && !modules__find(mods, ma->end));
	ASSERT(!modules__find(mods, ma->start - 1) && !modules__find(mods, 0));
	ASSERT(modules__find(mods, mb->end - 1) == mb && !modules__find(mods, UINT64_MAX));
	/* b loaded again over a's place: the newest answers there, a where only it is. */
	ASSERT(!fx_load(mods, b, BIAS_A));
	m = modules__find(mods, BIAS_A + 0x1000);
	ASSERT(m && !strcmp(m->path, b) && m->start == BIAS_A);
	if (ma->end > m->end)
		ASSERT(modules__find(mods, m->end) == ma);
	modules__free(mods);
	return true;
}

/*
 * A report's frames borrow the cache's strings (no copy per frame), and
 * freeing them leaves the cache's: the next report gets the same.
 */
TEST(sym_frames_borrow_the_cache)
{
	const char *bin = fx_victim("v_inline");
	uint64_t vaddr = fx_call_return(bin, "via_inl_host", "calloc@plt", 0);
	struct modules *mods = modules__new(getpid());
	struct symbolizer *s = symbolizer__new(NULL, 0);
	struct report_frame *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	int fds;
	bool ok = mods && s && vaddr && !fx_load(mods, bin, BIAS_A) &&
		  resolve_counting(s, mods, BIAS_A, vaddr, &a, &na, &fds) && na == 3;

	for (size_t i = 0; ok && i < na; i++)
		ok = a[i].borrowed && a[i].function;
	ok = ok && resolve_counting(s, mods, BIAS_A, vaddr, &b, &nb, &fds) && nb == na &&
	     b[0].function == a[0].function && b[2].file == a[2].file;
	fx_frames_free(a, na);
	ok = ok && same_frames(b, nb, b, nb) && b[0].function && strlen(b[0].function) > 0;
	fx_frames_free(b, nb);
	symbolizer__free(s);
	modules__free(mods);
	ASSERT(ok);
	return true;
}
