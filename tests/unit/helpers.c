// SPDX-License-Identifier: GPL-2.0
/* Shared by the unit tests (helpers.h). */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "analyze/sites.h"
#include "helpers.h"

#define MAX_ARGS 32
#define PYTHON "/usr/bin/python3"

char *unit__render(int (*writer)(const struct report *, FILE *), const struct report *r,
		   int *err)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int ret;

	if (!f)
		return NULL;
	ret = writer(r, f);
	fclose(f);
	if (err) {
		*err = ret;
	} else if (ret) {
		free(text);
		return NULL;
	}
	return text;
}

int unit__vparse(struct opts *o, char *err, size_t len, const char *first, va_list ap)
{
	char *argv[MAX_ARGS + 2] = { "memleakbpf" };
	int argc = 1;

	for (const char *a = first; a && argc <= MAX_ARGS; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	argv[argc] = NULL;
	return opts__parse(argc, argv, o, err, len);
}

int unit__parse(struct opts *o, char *err, size_t len, const char *first, ...)
{
	va_list ap;
	int ret;

	va_start(ap, first);
	ret = unit__vparse(o, err, len, first, ap);
	va_end(ap);
	return ret;
}

int unit__parse_argv(struct opts *o, char *err, size_t len, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return opts__parse(argc, argv, o, err, len);
}

/* The stack's site frame among its own frames (analyze/sites.h), or NULL. */
static struct report_frame *site_frame_of(struct report_stack *s, const char *interp)
{
	bool python = false;

	for (size_t i = 0; i < s->nr_frames; i++)
		python |= s->frames[i].language == FRAME_PYTHON;
	s->site_own = false;
	for (size_t i = 0; i < s->nr_frames; i++)
		if (sites__own_frame(&s->frames[i], python, NULL, interp)) {
			s->site_own = true;	/* as symbolize/report_sites.c marks it */
			return &s->frames[i];
		}
	/* None of the user's: the innermost Python line outside importlib, else frames[0]. */
	for (size_t i = 0; python && i < s->nr_frames; i++)
		if (s->frames[i].language == FRAME_PYTHON && !sites__import_file(s->frames[i].file))
			return &s->frames[i];
	return s->nr_frames ? &s->frames[0] : NULL;
}

int unit__group(struct report *r, size_t file_sites, size_t file_stacks)
{
	const char *interp = r->python ? r->python->path : NULL;

	for (size_t i = 0; i < r->nr_stacks; i++)
		r->stacks[i].site_frame = site_frame_of(&r->stacks[i], interp);
	return sites__group(r, file_sites, file_stacks);
}

char *unit__grouped_render(int (*writer)(const struct report *, FILE *), struct report *r)
{
	char *out;

	if (unit__group(r, SITES_FILE_SITES, SITES_FILE_STACKS))
		return NULL;
	out = unit__render(writer, r, NULL);
	unit__ungroup(r);
	return out;
}

void unit__ungroup(struct report *r)
{
	for (size_t i = 0; i < r->nr_stacks; i++)
		r->stacks[i].site_frame = NULL;
	free(r->sites);
	free(r->site_stacks);
	r->sites = NULL;
	r->site_stacks = NULL;
	r->nr_sites = 0;
}

int unit__write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) ? -1 : 0;
}

int unit__run_python(const char *script, const char *text)
{
	char dir[] = "/tmp/memleakbpf-unit-XXXXXX", py[64], file[64], cmd[256];
	int status;

	if (access(PYTHON, X_OK)) {
		fprintf(stderr, "  skip: no %s to check the output\n", PYTHON);
		return -1;
	}
	if (!mkdtemp(dir))
		return 1;
	snprintf(py, sizeof(py), "%s/check.py", dir);
	snprintf(file, sizeof(file), "%s/out", dir);
	if (unit__write_file(py, script) || unit__write_file(file, text))
		return 1;
	snprintf(cmd, sizeof(cmd), PYTHON " %s %s", py, file);
	status = system(cmd);
	unlink(py);
	unlink(file);
	rmdir(dir);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
