// SPDX-License-Identifier: GPL-2.0
/*
 * The object files behind the modules: each known by its build id (else by
 * device, inode and path), read once per run into a Dwfl of its own, and
 * the (device, inode) of the current image mapped to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbolize_internal.h"
#include "util/elfsym.h"
#include "util/vec.h"

/* Give f its own Dwfl, with the file at its link-time addresses. */
static int report_file(struct symbolizer *s, struct sym_file *f, const struct module *m)
{
	Dwarf_Addr bias;
	int fd;

	if (m->fd < 0)
		return 0;	/* modules.c said why */
	/*
	 * Debug info comes from this machine only: libdw would otherwise ask
	 * debuginfod servers when DEBUGINFOD_URLS is set. Not before: a -c
	 * command, started by now, keeps its environment.
	 */
	unsetenv("DEBUGINFOD_URLS");
	f->dwfl = dwfl_begin(&s->callbacks);
	if (!f->dwfl) {
		fprintf(stderr, "memleakbpf: libdwfl: %s\n", dwfl_errmsg(-1));
		return 0;
	}
	/* dwfl_report_elf keeps the fd it is given; the module keeps its own. */
	fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	dwfl_report_begin(f->dwfl);
	/* Base 0 and add_p_vaddr: addresses are the file's own (runtime - load bias). */
	f->dwmod = dwfl_report_elf(f->dwfl, "file", m->path, fd, 0, true);
	dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->dwmod) {
		close(fd);	/* only kept on success */
		fprintf(stderr, "memleakbpf: %s: %s; its frames stay unnamed\n", m->path,
			dwfl_errmsg(-1));
		return 0;
	}
	f->has_dwarf = dwfl_module_getdwarf(f->dwmod, &bias) != NULL;
	return symbolize_names__read_funcs(f);
}

/* The build id of the file open at fd, into f; none is not an error. */
static void read_build_id(int fd, struct sym_file *f)
{
	int len = fd >= 0 ? elf__build_id_fd(fd, f->build_id, sizeof(f->build_id)) : 0;

	f->build_id_len = len > 0 ? (size_t)len : 0;
}

static bool same_file(const struct sym_file *a, const struct sym_file *key, const char *path)
{
	if (key->build_id_len)
		return a->build_id_len == key->build_id_len &&
		       !memcmp(a->build_id, key->build_id, key->build_id_len);
	return !a->build_id_len && a->dev == key->dev && a->inode == key->inode &&
	       !strcmp(a->path, path);
}

void symbolize_file__free(struct sym_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nr_cus; i++) {
		free(f->cus[i].v);
		free(f->cus[i].max_end);
	}
	free(f->cus);
	if (f->dwfl)
		dwfl_end(f->dwfl);
	elf_file__close(f->elf);
	free(f->funcs);
	free(f->max_end);
	free(f->path);
	free(f);
}

/* The file of module m: one already read with the same build id, or m's own. */
static int find_file(struct symbolizer *s, const struct module *m, struct sym_file **out)
{
	struct sym_file key = { .dev = m->dev, .inode = m->inode }, *f;
	int err;

	read_build_id(m->fd, &key);
	for (size_t i = 0; i < s->nr_files; i++) {
		if (same_file(s->files[i], &key, m->path)) {
			*out = s->files[i];
			return 0;
		}
	}
	if (vec__reserve(&s->files, &s->cap_files, s->nr_files + 1, sizeof(*s->files)))
		return -ENOMEM;
	f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	*f = key;
	f->path = strdup(m->path);
	err = f->path ? report_file(s, f, m) : -ENOMEM;
	if (err) {
		symbolize_file__free(f);
		return err;
	}
	s->files[s->nr_files++] = f;
	*out = f;
	return 0;
}

int symbolize_file__for(struct symbolizer *s, const struct module *m, struct sym_file **out)
{
	int err;

	for (size_t i = 0; i < s->nr_refs; i++) {
		if (s->refs[i].dev == m->dev && s->refs[i].inode == m->inode) {
			*out = s->refs[i].file;
			return 0;
		}
	}
	if (vec__reserve(&s->refs, &s->cap_refs, s->nr_refs + 1, sizeof(*s->refs)))
		return -ENOMEM;
	err = find_file(s, m, out);
	if (!err)
		s->refs[s->nr_refs++] = (struct file_ref){ m->dev, m->inode, *out };
	return err;
}
