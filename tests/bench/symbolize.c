// SPDX-License-Identifier: GPL-2.0
/*
 * symbolize: how long symbolization takes, without BPF (`make bench`, through
 * scripts/bench_symbolize.py). MODULES object files of this machine are laid
 * out as if one process had loaded them (modules made from their program
 * headers), and FRAMES distinct return addresses, spread evenly over the
 * functions of each, are resolved:
 *   cold_ms     the first time: every file opened, its symbols sorted, its
 *               DWARF and separate debug file found and read;
 *   report1_ms  a report over STACKS stacks of those frames with a fresh
 *               symbolizer (aggregate, resolve every frame, write the text
 *               report), as the first periodic report of a run pays;
 *   report_ms   the same report again, the median of the next REPEAT:
 *               what every later periodic report costs.
 * The files: the victims built with -g and their plugins, libc (with its
 * debug info when libc6-dbg is installed), libstdc++, then the largest
 * shared libraries of /usr/lib/x86_64-linux-gnu until MODULES. Prints
 * "key=value" lines: the figures, then the files with their frame counts.
 *
 * Usage: symbolize [MODULES [FRAMES [STACKS]]]   (50 10000 10000)
 */
#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "analyze/aggregate.h"
#include "target/modules.h"
#include "util/procmaps.h"
#include "model/stackcache.h"
#include "symbolize/report_build.h"
#include "probe/snapshot.h"
#include "symbolize/symbolize.h"
#include "report/report_text.h"

#define MAX_FILES 512
#define REPEAT 5
#define DEPTH 10
#define LIBDIR "/usr/lib/x86_64-linux-gnu"
#define BASE 0x7f0000000000ull
#define SPACING 0x10000000ull	/* 256 MiB between two files' load addresses */

struct file {
	char path[PATH_MAX];
	off_t size;
	uint64_t *funcs;	/* addresses inside functions, file-relative */
	size_t nr_funcs;
	uint64_t bias;
};

static struct file files[MAX_FILES];
static size_t nr_files;

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int by_addr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The middle of every sized function of the symbol table (else .dynsym). */
static void read_funcs(struct file *f, Elf *elf)
{
	Elf_Scn *scn = NULL;
	Elf_Scn *best = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) &&
		    (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !best)))
			best = scn;
	}
	if (best) {
		Elf_Data *data = elf_getdata(best, NULL);
		GElf_Shdr sh;
		size_t n;

		gelf_getshdr(best, &sh);
		n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		f->funcs = calloc(n ?: 1, sizeof(*f->funcs));
		for (size_t i = 0; f->funcs && data && i < n; i++) {
			GElf_Sym sym;

			if (gelf_getsym(data, i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
			    sym.st_shndx != SHN_UNDEF && sym.st_size >= 4)
				f->funcs[f->nr_funcs++] = sym.st_value + sym.st_size / 2;
		}
	}
	if (f->nr_funcs)
		qsort(f->funcs, f->nr_funcs, sizeof(*f->funcs), by_addr);
}

/* One maps line per PT_LOAD of f, as the loader maps it at f->bias. */
static int maps_lines(struct file *f, FILE *out)
{
	const uint64_t page = sysconf(_SC_PAGESIZE);
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	Elf *elf = NULL;
	struct stat st;
	size_t phnum;
	int loads = 0;

	if (fd < 0 || fstat(fd, &st) || !(elf = elf_begin(fd, ELF_C_READ, NULL)) ||
	    elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &phnum)) {
		if (elf)
			elf_end(elf);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		loads++;
		fprintf(out, "%" PRIx64 "-%" PRIx64 " %c%c%cp %08" PRIx64 " %02x:%02x %lu %s\n",
			f->bias + (ph.p_vaddr & ~(page - 1)),
			f->bias + ((ph.p_vaddr + ph.p_memsz + page - 1) & ~(page - 1)),
			ph.p_flags & PF_R ? 'r' : '-', ph.p_flags & PF_W ? 'w' : '-',
			ph.p_flags & PF_X ? 'x' : '-', ph.p_offset & ~(page - 1),
			major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino, f->path);
	}
	if (!f->funcs)
		read_funcs(f, elf);
	elf_end(elf);
	close(fd);
	return loads ? 0 : -1;
}

static bool have_file(const char *path)
{
	for (size_t i = 0; i < nr_files; i++)
		if (!strcmp(files[i].path, path))
			return true;
	return false;
}

/* Add path if it is an ELF file with some functions; ignored otherwise. */
static void add_file(const char *path)
{
	struct file *f = &files[nr_files];
	char *text = NULL;
	size_t len = 0;
	FILE *out;
	int err;

	if (nr_files == MAX_FILES || have_file(path) || !realpath(path, f->path) ||
	    have_file(f->path))
		return;
	f->bias = BASE + nr_files * SPACING;
	out = open_memstream(&text, &len);
	err = out ? maps_lines(f, out) : -1;
	if (out)
		fclose(out);
	free(text);
	if (!err && f->nr_funcs >= 4)
		nr_files++;
	else
		free(f->funcs), memset(f, 0, sizeof(*f));
}

static int by_size_desc(const void *a, const void *b)
{
	const struct file *x = a, *y = b;

	return x->size < y->size ? 1 : x->size > y->size ? -1 : strcmp(x->path, y->path);
}

/* The largest shared libraries of LIBDIR, after the files already chosen. */
static void add_libdir(size_t want)
{
	static struct file cand[2048];
	size_t n = 0;
	DIR *d = opendir(LIBDIR);
	struct dirent *e;

	while (d && (e = readdir(d)) && n < 2048) {
		struct stat st;

		if (!strstr(e->d_name, ".so"))
			continue;
		snprintf(cand[n].path, sizeof(cand[n].path), "%s/%s", LIBDIR, e->d_name);
		if (!lstat(cand[n].path, &st) && S_ISREG(st.st_mode)) {
			cand[n].size = st.st_size;
			n++;
		}
	}
	if (d)
		closedir(d);
	qsort(cand, n, sizeof(*cand), by_size_desc);
	for (size_t i = 0; i < n && nr_files < want; i++)
		add_file(cand[i].path);
}

/* Everything as one process's maps. */
static struct modules *load_all(void)
{
	struct modules *mods = modules__new(getpid());
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct maps *maps;

	for (size_t i = 0; out && i < nr_files; i++)
		maps_lines(&files[i], out);
	if (!out || fclose(out) || maps__parse(text, &maps) || modules__update(mods, maps)) {
		fprintf(stderr, "symbolize: cannot lay the files out\n");
		exit(1);
	}
	maps__free(maps);
	free(text);
	return mods;
}

/* frames distinct addresses, shared out evenly, each file's over its functions. */
static uint64_t *pick_frames(size_t frames, size_t *nr)
{
	static size_t quota[MAX_FILES];
	uint64_t *v = calloc(frames ?: 1, sizeof(*v));
	size_t left = frames, n = 0;
	bool more = true;

	while (left && more) {
		more = false;
		for (size_t i = 0; i < nr_files && left; i++) {
			if (quota[i] < files[i].nr_funcs) {
				quota[i]++;
				left--;
				more = true;
			}
		}
	}
	for (size_t i = 0; v && i < nr_files; i++)
		for (size_t k = 0; k < quota[i]; k++)
			v[n++] = files[i].bias + files[i].funcs[k * files[i].nr_funcs / quota[i]];
	*nr = n;
	return v;
}

static double resolve_all(struct symbolizer *s, const struct modules *mods, const uint64_t *v,
			  size_t n, size_t *named)
{
	double t0 = now_ms();

	*named = 0;
	for (size_t i = 0; i < n; i++) {
		struct report_frame *frames = NULL;
		size_t nr = 0;

		symbolizer__resolve(s, mods, v[i], true, &frames, &nr);
		*named += nr && frames[nr - 1].function;
		for (size_t k = 0; k < nr; k++)
			report__frame_free(&frames[k]);	/* a mapped file's frame borrows its strings */
		free(frames);
	}
	return now_ms() - t0;
}

/* stacks sites of DEPTH frames each, drawn from v with a fixed generator. */
static struct snapshot *make_snapshot(const uint64_t *v, size_t n, size_t stacks)
{
	struct snapshot *snap = calloc(1, sizeof(*snap));
	uint64_t x = 88172645463325252ull;

	snap->sites = calloc(stacks, sizeof(*snap->sites));
	snap->nr = stacks;
	for (size_t i = 0; i < stacks; i++) {
		struct snap_site *site = &snap->sites[i];

		site->stack_id = i + 1;
		site->api = API_MALLOC;
		uint64_t ips[DEPTH];

		site->nr_ips = DEPTH;
		site->stats.outstanding_bytes = site->stats.total_bytes = 64 * (i % 100 + 1);
		site->stats.outstanding_allocs = site->stats.total_allocs = i % 7 + 1;
		for (int d = 0; d < DEPTH; d++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			ips[d] = v[x % n];
		}
		/* A site's frames are a shared blob now (model/stackcache.h). */
		site->stack = stack_blob__new(site->stack_id,
					      &(struct stack_copy){ .ips = ips, .nr_ips = DEPTH });
	}
	return snap;
}

/* One periodic report: aggregate, symbolize every stack, write the text. */
static double one_report(struct symbolizer *s, const struct modules *mods,
			 const struct snapshot *snap, FILE *sink)
{
	struct report_meta meta = { .pid = getpid(), .top = 10 };
	struct aggregate *agg = NULL;
	struct report *r = NULL;
	double t0 = now_ms();

	if (aggregate__build(snap, &agg) || report_build__report(agg, s, mods, &meta, &r) ||
	    report_text__write(r, sink)) {
		fprintf(stderr, "symbolize: report failed\n");
		exit(1);
	}
	report__free(r);
	aggregate__free(agg);
	return now_ms() - t0;
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void choose_files(size_t want)
{
	static const char *const first[] = {
		".output/victims/v_inline", ".output/victims/v_cxxsym", ".output/victims/v_debug",
		".output/victims/plugins/libp_kept.so", LIBDIR "/libc.so.6",
		LIBDIR "/libstdc++.so.6",
	};

	elf_version(EV_CURRENT);
	for (size_t i = 0; i < sizeof(first) / sizeof(first[0]) && nr_files < want; i++)
		add_file(first[i]);
	add_libdir(want);
}

int main(int argc, char **argv)
{
	size_t want = argc > 1 ? strtoul(argv[1], NULL, 0) : 50;
	size_t frames = argc > 2 ? strtoul(argv[2], NULL, 0) : 10000;
	size_t stacks = argc > 3 ? strtoul(argv[3], NULL, 0) : 10000;
	double cold, first, again[REPEAT];
	FILE *sink = fopen("/dev/null", "w");
	struct symbolizer *s;
	struct snapshot *snap;
	struct modules *mods;
	size_t n, named;
	uint64_t *v;

	choose_files(want);
	mods = load_all();
	v = pick_frames(frames, &n);
	s = symbolizer__new(NULL, 0);
	cold = resolve_all(s, mods, v, n, &named);
	printf("modules=%zu\nframes=%zu\nnamed=%zu\ncold_ms=%.1f\n", nr_files, n, named, cold);
	printf("warm_ms=%.1f\n", resolve_all(s, mods, v, n, &named));
	symbolizer__free(s);

	snap = make_snapshot(v, n, stacks);
	s = symbolizer__new(NULL, 0);
	first = one_report(s, mods, snap, sink);
	for (int i = 0; i < REPEAT; i++)
		again[i] = one_report(s, mods, snap, sink);
	qsort(again, REPEAT, sizeof(*again), by_double);
	printf("stacks=%zu\ndepth=%d\nreport1_ms=%.1f\nreport_ms=%.1f\n", stacks, DEPTH, first,
	       again[REPEAT / 2]);
	for (size_t i = 0; i < nr_files; i++)
		printf("file=%s funcs=%zu\n", files[i].path, files[i].nr_funcs);
	symbolizer__free(s);
	modules__free(mods);
	fclose(sink);
	return 0;
}
