// SPDX-License-Identifier: GPL-2.0
/* The symbolizer tests' fixture: see fixture.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "fixture.h"
#include "util/procmaps.h"

const char *fx_victim(const char *name)
{
	static char bufs[8][PATH_MAX];
	static int next;
	char rel[PATH_MAX];
	char *buf = bufs[next++ % 8];

	snprintf(rel, sizeof(rel), ".output/victims/%s", name);
	if (!realpath(rel, buf))
		snprintf(buf, PATH_MAX, "%s", rel);	/* the test then fails on it */
	return buf;
}

int fx_line_of(const char *source, const char *text)
{
	char line[1024];
	FILE *f = fopen(source, "r");
	int n = 0, found = -1;

	if (!f)
		return -1;
	while (found < 0 && fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, text))
			found = n;
	}
	fclose(f);
	return found;
}

int fx_marker(const char *source, const char *marker)
{
	char text[128];

	/* The marker and the comment end after it: not a prefix of a longer name. */
	snprintf(text, sizeof(text), "@%s */", marker);
	return fx_line_of(source, text);
}

/* Each line of a command's output to fn, until it returns false. */
static int each_line(const char *cmd, bool (*fn)(const char *line, void *arg), void *arg)
{
	char line[4096];
	FILE *p = popen(cmd, "r");

	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p) && fn(line, arg))
		;
	while (fgets(line, sizeof(line), p))
		;
	return pclose(p) ? -EIO : 0;
}

struct nm_query {
	const char *name;
	uint64_t value, size;
};

static bool nm_line(const char *line, void *arg)
{
	struct nm_query *q = arg;
	char type, name[1024];
	uint64_t value, size;

	if (sscanf(line, "%" SCNx64 " %" SCNx64 " %c %1023s", &value, &size, &type, name) != 4 ||
	    strcmp(name, q->name))
		return true;
	q->value = value;
	q->size = size;
	return false;
}

static struct nm_query nm_query(const char *path, const char *name)
{
	struct nm_query q = { name, 0, 0 };
	char cmd[PATH_MAX + 64];

	snprintf(cmd, sizeof(cmd), "nm -S --defined-only '%s' 2>/dev/null", path);
	each_line(cmd, nm_line, &q);
	return q;
}

uint64_t fx_nm(const char *path, const char *name)
{
	return nm_query(path, name).value;
}

uint64_t fx_nm_size(const char *path, const char *name)
{
	return nm_query(path, name).size;
}

struct call_query {
	char fn_header[512];	/* "<fn>:" */
	char callee[512];	/* "<callee>" */
	int nth;
	bool in_fn, take_next;
	uint64_t ret;
};

/* objdump lines: "0000000000001a20 <fn>:" and "    1a5e:\tcall   10f0 <malloc@plt>". */
static bool objdump_line(const char *line, void *arg)
{
	struct call_query *q = arg;
	uint64_t addr;

	if (strstr(line, q->fn_header) && line[0] != ' ') {
		q->in_fn = true;
		return true;
	}
	if (line[0] != ' ') {
		q->in_fn &= line[0] == '\n';
		return true;
	}
	if (!q->in_fn || sscanf(line, " %" SCNx64 ":", &addr) != 1)
		return true;
	if (q->take_next) {
		q->ret = addr;
		return false;
	}
	if (strstr(line, "call") && strstr(line, q->callee) && q->nth-- == 0)
		q->take_next = true;
	return true;
}

uint64_t fx_call_return(const char *path, const char *fn, const char *callee, int nth)
{
	struct call_query q = { .nth = nth };
	char cmd[PATH_MAX + 64];

	snprintf(q.fn_header, sizeof(q.fn_header), "<%s>:", fn);
	snprintf(q.callee, sizeof(q.callee), "<%s>", callee);
	snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn '%s' 2>/dev/null", path);
	each_line(cmd, objdump_line, &q);
	return q.ret;
}

/* One maps line per PT_LOAD, page-aligned as the loader maps it. */
static int maps_text(const char *path, uint64_t bias, char *text, size_t len)
{
	const uint64_t page = sysconf(_SC_PAGESIZE);
	int fd = open(path, O_RDONLY | O_CLOEXEC), n = 0;
	Elf *elf = NULL;
	struct stat st;
	size_t phnum;

	elf_version(EV_CURRENT);
	if (fd < 0 || fstat(fd, &st) || !(elf = elf_begin(fd, ELF_C_READ, NULL)) ||
	    elf_getphdrnum(elf, &phnum)) {
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		n += snprintf(text + n, len - n, "%" PRIx64 "-%" PRIx64 " %c%c%cp %08" PRIx64
			      " %02x:%02x %lu %s\n", bias + (ph.p_vaddr & ~(page - 1)),
			      bias + ((ph.p_vaddr + ph.p_memsz + page - 1) & ~(page - 1)),
			      ph.p_flags & PF_R ? 'r' : '-', ph.p_flags & PF_W ? 'w' : '-',
			      ph.p_flags & PF_X ? 'x' : '-', ph.p_offset & ~(page - 1),
			      major(st.st_dev), minor(st.st_dev), (unsigned long)st.st_ino, path);
	}
	elf_end(elf);
	close(fd);
	return 0;
}

int fx_load(struct modules *mods, const char *path, uint64_t bias)
{
	char text[4096];
	struct maps *maps;
	int err = maps_text(path, bias, text, sizeof(text));

	err = err ?: maps__parse(text, &maps);
	if (err)
		return err;
	err = modules__update(mods, maps);
	maps__free(maps);
	return err;
}

int fx_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own */
}

char *fx_capture_stderr(void (*fn)(void *), void *arg)
{
	char path[] = "/tmp/memleakbpf-sym-err-XXXXXX", *text = calloc(1, 4096);
	int fd = mkstemp(path), saved = dup(2);

	if (fd < 0 || saved < 0 || !text)
		return text;
	fflush(stderr);
	dup2(fd, 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	if (pread(fd, text, 4095, 0) < 0)
		text[0] = '\0';
	close(fd);
	unlink(path);
	return text;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

bool fx_frames_are(const struct report_frame *frames, size_t nr, const struct fx_frame *want,
		   size_t n)
{
	bool ok = nr == n;

	for (size_t i = 0; i < n && i < nr; i++) {
		const struct report_frame *f = &frames[i];
		const struct fx_frame *w = &want[i];

		if (str_eq(f->function, w->function) && str_eq(f->file, w->file) &&
		    f->line == w->line && f->inlined == w->inlined)
			continue;
		ok = false;
	}
	if (ok)
		return true;
	fprintf(stderr, "  frames (%zu, want %zu):\n", nr, n);
	for (size_t i = 0; i < nr || i < n; i++) {
		if (i < nr)
			fprintf(stderr, "    got  #%zu %s (%s:%d)%s\n", i, frames[i].function ?: "-",
				frames[i].file ?: "-", frames[i].line,
				frames[i].inlined ? " inlined" : "");
		if (i < n)
			fprintf(stderr, "    want #%zu %s (%s:%d)%s\n", i, want[i].function ?: "-",
				want[i].file ?: "-", want[i].line, want[i].inlined ? " inlined" : "");
	}
	return false;
}

void fx_frames_free(struct report_frame *frames, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		report__frame_free(&frames[i]);
	free(frames);
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

struct report_frame *fx_frames_copy(const struct report_frame *frames, size_t nr)
{
	struct report_frame *v = calloc(nr ?: 1, sizeof(*v));

	for (size_t i = 0; v && i < nr; i++) {
		v[i] = frames[i];
		v[i].function = dup_or_null(frames[i].function);
		v[i].symbol = dup_or_null(frames[i].symbol);
		v[i].module = dup_or_null(frames[i].module);
		v[i].file = dup_or_null(frames[i].file);
		v[i].borrowed = false;
	}
	return v;
}
