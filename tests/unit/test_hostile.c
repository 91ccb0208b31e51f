// SPDX-License-Identifier: GPL-2.0
/*
 * Input from the target, or from the user, that must not hurt the tracer:
 * names with escape sequences and invalid UTF-8 in the writers, a newline in
 * a quoted argument, an ELF file lying about its PT_INTERP. Each is a case
 * the fuzz targets (tests/fuzz/) found or check, kept here so that `make
 * test` keeps checking it.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include "util/elfsym.h"
#include "cli/opts.h"
#include "model/report.h"
#include "helpers.h"
#include "unit.h"
#include "report/report_folded.h"
#include "report/report_text.h"

/* ESC [31m, a C1 CSI (U+009B), an invalid byte, a ';' and a newline. */
#define HOSTILE "evil\x1b[31m\xc2\x9b\xff;x\ny"

static struct report_frame hostile_frames[] = {
	{ .address = 0x1000, .function = HOSTILE, .module = "/srv/lib\x1b]0;t\x07.so",
	  .file = "a\x1b[2Jb.c", .line = 3 },
	{ .address = 0x2000, .function = "main", .module = "/srv/app" },
};

static struct report_stack hostile_stack = {
	.api = API_MALLOC, .bytes = 64, .allocs = 1, .total_bytes = 64, .total_allocs = 1,
	.frames = hostile_frames, .nr_frames = 2,
};

static char *render(int (*w)(const struct report *, FILE *), const char *command)
{
	struct report r = { .pid = 1, .command = command, .final = true, .top = 10,
			    .stacks = &hostile_stack, .nr_stacks = 1 };
	char *out = NULL;

	if (!unit__group(&r, SIZE_MAX, SIZE_MAX))
		out = unit__render(w, &r, NULL);
	unit__ungroup(&r);
	return out;
}

static bool valid_utf8(const char *s)
{
	for (int n; *s; s += n)
		if (!(n = report__utf8_len(s)))
			return false;
	return true;
}

/* Nothing a terminal would act on: no C0 but newlines, no DEL, no C1. */
TEST(hostile_text_report_is_printable)
{
	char *t = render(report_text__write, "cmd\x1b[31m\xc2\x9bx");

	ASSERT(t);
	ASSERT(valid_utf8(t));
	for (const unsigned char *c = (const unsigned char *)t; *c; c++) {
		ASSERT(*c == '\n' || (*c >= 0x20 && *c != 0x7f));
		ASSERT(!(c[0] == 0xc2 && c[1] >= 0x80 && c[1] < 0xa0));
	}
	ASSERT(strstr(t, "evil?[31m??"));
	free(t);
	return true;
}

/* One line, the frames where they belong, valid UTF-8 (U+FFFD for 0xff). */
TEST(hostile_folded_line)
{
	char *t = render(report_folded__write, NULL);
	size_t semis = 0;

	ASSERT(t);
	ASSERT(valid_utf8(t));
	ASSERT(strchr(t, '\n') == t + strlen(t) - 1);
	for (const char *c = t; *c; c++)
		semis += *c == ';';
	ASSERT_EQ_U64(semis, 2);	/* main;function;malloc */
	ASSERT(strstr(t, "\xef\xbf\xbd:x y"));
	free(t);
	return true;
}

/* A usage error quotes the argument on one line, whatever it holds. */
TEST(hostile_option_message_one_line)
{
	char *argv[] = { "memleakbpf", "-p", "1", "0.5", "bad\narg\x1b[2J", NULL };
	char err[256];
	struct opts o;

	ASSERT(opts__parse(5, argv, &o, err, sizeof(err)) < 0);
	ASSERT(!strchr(err, '\n') && !strchr(err, '\x1b'));
	ASSERT(strstr(err, "bad?arg?[2J"));
	return true;
}

/*
 * An ELF file whose PT_INTERP claims 2^64 - 1 bytes: the +1 for the NUL
 * used to wrap to a zero-byte buffer that pread then filled.
 */
TEST(hostile_elf_interp_size)
{
	int in = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), fd = memfd_create("elf", 0);
	struct elf_file *ef = NULL;
	char path[64], buf[65536];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	ssize_t n;
	bool patched = false;

	ASSERT(in >= 0 && fd >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ASSERT(write(fd, buf, n) == n);
	close(in);
	ASSERT(pread(fd, &eh, sizeof(eh), 0) == sizeof(eh));
	for (int i = 0; i < eh.e_phnum; i++) {
		off_t at = (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize);

		ASSERT(pread(fd, &ph, sizeof(ph), at) == sizeof(ph));
		if (ph.p_type != PT_INTERP)
			continue;
		ph.p_filesz = UINT64_MAX;
		ASSERT(pwrite(fd, &ph, sizeof(ph), at) == sizeof(ph));
		patched = true;
	}
	ASSERT(patched);	/* the unit test binary is dynamically linked */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ASSERT_EQ_U64(elf_file__open(path, &ef), (uint64_t)-ENOEXEC);
	close(fd);
	return true;
}
