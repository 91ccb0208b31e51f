// SPDX-License-Identifier: GPL-2.0
/*
 * report_gperftools.c (the gperftools heap profile), the --snapshot-dir file
 * helpers of outfile.c, --folded-weight, and the options of these outputs.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli/opts.h"
#include "report/outfile.h"
#include "util/procmaps.h"
#include "model/report.h"
#include "helpers.h"
#include "unit.h"
#include "report/report_folded.h"
#include "report/report_gperftools.h"

#define PYTHON "/usr/bin/python3"

static struct report_frame pp_frames_leak[] = {
	{ .address = 0x55d0c2a4b3b2, .function = "leak_site", .module = "/srv/app" },
	{ .address = 0x55d0c2a4b480, .function = "main", .module = "/srv/app" },
	{ .address = 0x7f00000271ca, .function = "__libc_start_call_main",
	  .module = "/usr/lib/x86_64-linux-gnu/libc.so.6" },
};

/* An inlined frame shares the address of the frame after it. */
static struct report_frame pp_frames_inl[] = {
	{ .address = 0x55d0c2a4b500, .function = "helper", .inlined = true },
	{ .address = 0x55d0c2a4b500, .function = "outer" },
	{ .address = 0x55d0c2a4b600 },
};

static struct report_stack pp_stacks[] = {
	{ .api = API_MALLOC, .bytes = 2097152, .allocs = 512, .total_bytes = 4194304,
	  .total_allocs = 1024, .frames = pp_frames_leak, .nr_frames = 3 },
	{ .api = API_NEW, .bytes = 4096, .allocs = 1, .total_bytes = 8192, .total_allocs = 2,
	  .frames = pp_frames_inl, .nr_frames = 3 },
	{ .api = API_CALLOC, .bytes = 100, .allocs = 1, .total_bytes = 100, .total_allocs = 1,
	  .no_stack = true },
};

/* All freed; a total wider than its column. */
static struct report_stack pp_freed_stacks[] = {
	{ .api = API_MALLOC, .total_bytes = 123456789012, .total_allocs = 3,
	  .frames = pp_frames_leak + 1, .nr_frames = 2 },
};

static const char pp_maps_text[] =
	"55d0c2a4a000-55d0c2a4b000 r--p 00000000 fd:01 1234                       /srv/app\n"
	"55d0c2a4b000-55d0c2a4c000 r-xp 00001000 fd:01 1234                       /srv/app\n"
	"55d0c2a4c000-55d0c2a4d000 rw-p 00002000 fd:01 1234                       /srv/app\n"
	"7f0000000000-7f0000100000 r-xp 00026000 08:02 99 /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f1000000000-7f1000001000 r-xp 00000000 08:02 77 /opt/lib/libgone.so (deleted)\n"
	"7ffd1000000-7ffd1002000 r-xp 00000000 00:00 0                          [vdso]\n";

static const char pp_expected[] =
	"heap profile:    514:  2101348 [  1030: 123460991608] @ heapprofile\n"
	"   512:  2097152 [  1024:  4194304] @ 0x55d0c2a4b3b1 0x55d0c2a4b480 0x7f00000271ca\n"
	"     1:     4096 [     2:     8192] @ 0x55d0c2a4b4ff 0x55d0c2a4b600\n"
	"     1:      100 [     1:      100] @ 0x0\n"
	"     0:        0 [     3: 123456789012] @ 0x55d0c2a4b47f 0x7f00000271ca\n"
	"\n"
	"MAPPED_LIBRARIES:\n"
	"55d0c2a4b000-55d0c2a4c000 r-xp 00001000 fd:01 1234                       /srv/app\n"
	"7f0000000000-7f0000100000 r-xp 00026000 08:02 99                         "
	"/usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f1000000000-7f1000001000 r-xp 00000000 08:02 77                         "
	"/opt/lib/libgone.so (deleted)\n"
	"7ffd1000000-7ffd1002000 r-xp 00000000 00:00 0                            [vdso]\n";

/* The writer's output into a malloc'ed string, or NULL when it failed. */
static bool same_text(const char *got, const char *want)
{
	if (got && !strcmp(got, want))
		return true;
	fprintf(stderr, "  got:\n%s\n  want:\n%s\n", got ? got : "(null)", want);
	return false;
}

TEST(pprof_exact_text)
{
	struct report freed = { .stacks = pp_freed_stacks, .nr_stacks = 1 };
	struct report r = { .pid = 1234, .stacks = pp_stacks, .nr_stacks = 3, .freed = &freed };
	struct maps *maps = NULL;
	char *text;
	bool ok;

	ASSERT_EQ_U64(maps__parse(pp_maps_text, &maps), 0);
	r.maps = maps;
	text = unit__render(report_gperftools__write, &r, NULL);
	ok = same_text(text, pp_expected);
	free(text);
	maps__free(maps);
	return ok;
}

TEST(pprof_empty_report)
{
	struct report r = { .pid = 1 };
	char *text = unit__render(report_gperftools__write, &r, NULL);
	bool ok = same_text(text, "heap profile:      0:        0 [     0:        0] @ heapprofile\n"
				  "\nMAPPED_LIBRARIES:\n");

	free(text);
	return ok;
}

/* The regular expressions of google-pprof (perl) and Go's pprof, checked on every line. */
static const char grammar_check[] =
	"import re, sys\n"
	"lines = open(sys.argv[1]).read().split('\\n')\n"
	"perl_head = r'^heap profile:\\s*(\\d+):\\s+(\\d+)\\s+\\[\\s*(\\d+):\\s+(\\d+)\\](\\s*@\\s*([^/]*)(/(\\d+))?)?'\n"
	"go_head = r'heap profile: *(\\d+): *(\\d+) *\\[ *(\\d+): *(\\d+) *\\] *@ *(heap[_a-z0-9]*)/?(\\d*)'\n"
	"m = re.match(perl_head, lines[0]); assert m and m.group(6) == 'heapprofile', lines[0]\n"
	"m = re.search(go_head, lines[0]); assert m and m.group(5) == 'heapprofile', lines[0]\n"
	"perl_line = r'^\\s*(\\d+):\\s+(\\d+)\\s+\\[\\s*(\\d+):\\s+(\\d+)\\]\\s+@\\s+(.*)$'\n"
	"go_line = r'(-?\\d+): *(-?\\d+) *\\[ *(\\d+): *(\\d+) *] @([ x0-9a-f]*)'\n"
	"i = 1\n"
	"while lines[i].strip():\n"
	"    m = re.match(perl_line, lines[i].strip()); assert m, lines[i]\n"
	"    g = re.search(go_line, lines[i]); assert g and g.group(5).split() == m.group(5).split(), lines[i]\n"
	"    i += 1\n"
	"assert lines[i + 1] == 'MAPPED_LIBRARIES:', lines[i + 1]\n"
	"perl_lib = r'^([a-f0-9]+)-([a-f0-9]+)\\s+..x.\\s+([a-f0-9]+)\\s+\\S+:\\S+\\s+\\d+\\s+(.+\\.(so|dll|dylib|bundle|node)((\\.\\d+)+\\w*(\\.\\d+){0,3})?)$'\n"
	"perl_prog = r'^([a-f0-9]+)-([a-f0-9]+)\\s+..x.\\s+([a-f0-9]+)\\s+\\S+:\\S+\\s+\\d+\\s+(\\S+)$'\n"
	"libs = [re.match(perl_lib, l) for l in lines[i + 2:] if l]\n"
	"assert [m.group(4) if m else None for m in libs][:2] == [None, '/usr/lib/x86_64-linux-gnu/libc.so.6'], libs\n"
	"assert re.match(perl_prog, lines[i + 2]).group(4) == '/srv/app'\n";

TEST(pprof_lines_match_the_readers_grammar)
{
	struct report freed = { .stacks = pp_freed_stacks, .nr_stacks = 1 };
	struct report r = { .stacks = pp_stacks, .nr_stacks = 3, .freed = &freed };
	char dir[] = "/tmp/memleakbpf-unit-XXXXXX", py[64], heap[64], cmd[256];
	struct maps *maps = NULL;
	char *text;
	int status;

	if (access(PYTHON, X_OK)) {
		fprintf(stderr, "  skip: no %s\n", PYTHON);
		return true;
	}
	ASSERT_EQ_U64(maps__parse(pp_maps_text, &maps), 0);
	r.maps = maps;
	text = unit__render(report_gperftools__write, &r, NULL);
	maps__free(maps);
	ASSERT(text && mkdtemp(dir));
	snprintf(py, sizeof(py), "%s/check.py", dir);
	snprintf(heap, sizeof(heap), "%s/x.heap", dir);
	ASSERT(!unit__write_file(py, grammar_check) && !unit__write_file(heap, text));
	free(text);
	snprintf(cmd, sizeof(cmd), PYTHON " %s %s", py, heap);
	status = system(cmd);
	unlink(py);
	unlink(heap);
	rmdir(dir);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return true;
}

TEST(folded_weight_allocs)
{
	struct report r = { .stacks = pp_stacks, .nr_stacks = 2, .folded_allocs = true };
	char *text = unit__render(report_folded__write, &r, NULL);
	bool ok = same_text(text, "__libc_start_call_main;main;leak_site;malloc 512\n"
				  "0x55d0c2a4b600;outer;helper;new 1\n");

	free(text);
	return ok;
}

static int write_hello(const struct report *r, FILE *f)
{
	fprintf(f, "hello %d\n", r->pid);
	return ferror(f) ? -EIO : 0;
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static int count_entries(const char *dir)
{
	char cmd[128], out[16];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
	p = popen(cmd, "r");
	if (p && fgets(out, sizeof(out), p))
		n = atoi(out);
	if (p)
		pclose(p);
	return n;
}

TEST(outfile_write_new_never_replaces)
{
	char dir[] = "/tmp/memleakbpf-unit-XXXXXX", path[64], link_path[64], buf[64], err[256];
	struct report r = { .pid = 7 };
	bool ok = true;
	int dirfd;

	ASSERT(mkdtemp(dir));
	dirfd = outfile__open_dir(dir, err, sizeof(err));
	ASSERT(dirfd >= 0);
	snprintf(path, sizeof(path), "%s/memleak.7.0001.heap", dir);
	snprintf(link_path, sizeof(link_path), "%s/dangling", dir);
	ok &= outfile__write_new(dirfd, "memleak.7.0001.heap", write_hello, &r) == 0;
	ok &= !read_small(path, buf, sizeof(buf)) && !strcmp(buf, "hello 7\n");
	r.pid = 8;
	ok &= outfile__write_new(dirfd, "memleak.7.0001.heap", write_hello, &r) == -EEXIST;
	ok &= !read_small(path, buf, sizeof(buf)) && !strcmp(buf, "hello 7\n");
	/* A dangling symlink is something there: not followed, not replaced. */
	ok &= !symlink("/nonexistent-memleakbpf", link_path);
	ok &= outfile__exists_at(dirfd, "dangling");
	ok &= outfile__write_new(dirfd, "dangling", write_hello, &r) == -EEXIST;
	/* Names only, never paths: everything stays in the directory opened. */
	ok &= outfile__write_new(dirfd, "../escape", write_hello, &r) == -EINVAL;
	/* No temporary left behind: the two names only. */
	ok &= count_entries(dir) == 2;
	close(dirfd);
	unlink(path);
	unlink(link_path);
	rmdir(dir);
	ASSERT(ok);
	return true;
}

TEST(outfile_open_dir)
{
	char dir[] = "/tmp/memleakbpf-unit-XXXXXX", file[64], link[64], err[256];
	int fd;

	ASSERT(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/f", dir);
	snprintf(link, sizeof(link), "%s/l", dir);
	ASSERT(!unit__write_file(file, "x"));
	fd = outfile__open_dir(dir, err, sizeof(err));
	ASSERT(fd >= 0);
	close(fd);
	ASSERT(outfile__open_dir(file, err, sizeof(err)) == -ENOTDIR);
	ASSERT(strstr(err, "not a directory") && !strchr(err, '\n'));
	ASSERT(outfile__open_dir("/nonexistent-memleakbpf/x", err, sizeof(err)) == -ENOENT);
	ASSERT(strstr(err, "does not exist"));
	/* Our own link in our own directory is followed. */
	ASSERT(!symlink(dir, link));
	fd = outfile__open_dir(link, err, sizeof(err));
	ASSERT(fd >= 0);
	close(fd);
	unlink(link);
	if (geteuid()) {
		chmod(dir, 0500);
		ASSERT(outfile__open_dir(dir, err, sizeof(err)) == -EACCES);
		chmod(dir, 0700);
	}
	unlink(file);
	rmdir(dir);
	return true;
}

TEST(outfile_same)
{
	char dir[] = "/tmp/memleakbpf-unit-XXXXXX", a[96], b[96], c[96];

	ASSERT(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/r.json", dir);
	snprintf(b, sizeof(b), "%s/./r.json", dir);
	snprintf(c, sizeof(c), "%s/r.folded", dir);
	ASSERT(outfile__same(a, a));
	ASSERT(outfile__same(a, b));	/* not yet there: same directory, same name */
	ASSERT(!outfile__same(a, c));
	ASSERT(!unit__write_file(a, "x"));
	ASSERT(!symlink(a, c));
	ASSERT(outfile__same(a, c));	/* two names of one file */
	unlink(c);
	unlink(a);
	rmdir(dir);
	return true;
}

TEST(opts_output_options)
{
	struct opts o;
	char err[256];

	ASSERT_EQ_U64(unit__parse(&o, err, sizeof(err), "--pprof", "a.heap", "--flamegraph", "a.svg",
				 "--snapshot-dir", "snaps", "-p", "1", NULL), 0);
	ASSERT_EQ_STR(o.outputs[REPORT_OUT_PPROF], "a.heap");
	ASSERT_EQ_STR(o.outputs[REPORT_OUT_FLAMEGRAPH], "a.svg");
	ASSERT_EQ_STR(o.snapshot_dir, "snaps");
	ASSERT(!o.folded_allocs);
	ASSERT_EQ_U64(unit__parse(&o, err, sizeof(err), "--folded", "f", "--folded-weight", "allocs",
				 "-p", "1", NULL), 0);
	ASSERT(o.folded_allocs);
	ASSERT_EQ_U64(unit__parse(&o, err, sizeof(err), "--snapshot-dir", "d", "--folded-weight",
				 "bytes", "-p", "1", NULL), 0);
	ASSERT(!o.folded_allocs);
	ASSERT(unit__parse(&o, err, sizeof(err), "--folded", "f", "--folded-weight", "blocks",
			  "-p", "1", NULL) == -EINVAL);
	ASSERT(strstr(err, "--folded-weight") && strstr(err, "blocks"));
	ASSERT(unit__parse(&o, err, sizeof(err), "--folded-weight", "allocs", "-p", "1", NULL) ==
	       -EINVAL);
	ASSERT(strstr(err, "needs --folded"));
	ASSERT(unit__parse(&o, err, sizeof(err), "--pprof", "", "-p", "1", NULL) == -EINVAL);
	ASSERT(!o.all_stacks);
	ASSERT_EQ_U64(unit__parse(&o, err, sizeof(err), "--json", "r.json", "--all-stacks", "-p", "1",
				 NULL), 0);
	ASSERT(o.all_stacks);
	ASSERT_EQ_U64(unit__parse(&o, err, sizeof(err), "--all-stacks", "--snapshot-dir", "d", "-p",
				 "1", NULL), 0);
	ASSERT(unit__parse(&o, err, sizeof(err), "--all-stacks", "--pprof", "a.heap", "-p", "1",
			   NULL) == -EINVAL);
	ASSERT_EQ_STR(err, "--all-stacks needs --json, --folded or --snapshot-dir: the stacks it keeps go there");
	return true;
}

TEST(opts_usage_lists_output_options)
{
	static const char *const want[] = {
		"--pprof FILE", "--flamegraph FILE", "--snapshot-dir DIR", "--folded-weight W",
		"--all-stacks",
	};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ASSERT(f);
	opts__usage(f);
	fclose(f);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		if (!strstr(text, want[i])) {
			fprintf(stderr, "  usage lacks \"%s\"\n", want[i]);
			free(text);
			return false;
		}
	}
	free(text);
	return true;
}
