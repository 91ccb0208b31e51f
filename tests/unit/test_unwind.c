// SPDX-License-Identifier: GPL-2.0
/*
 * unwind/ against a fake of the BPF tables (struct unwind_ops): which mode
 * --unwind gets, rows loaded once per file (all of one update at once),
 * mappings published only when they change, a file without rows left to
 * frame pointers, and the lazy tables of -p: published pending, built
 * named files first, then those BPF asked for; an exec'd image's mappings
 * (--follow) published apart, on the rows the target's files loaded.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/types.h>
#include "memleak.h"
#include "unwind/cfi.h"
#include "unwind/unwind.h"
#include "util/procmaps.h"
#include "unit.h"

/* What the BPF side was asked. */
struct fake_tables {
	int add_err;		/* add_rows fails with it when set */
	unsigned adds, publishes, queries;
	uint32_t rows;		/* rows "loaded" */
	struct unwind_mapping pub[MEMLEAK_UNWIND_MAPPINGS];
	size_t nr_pub;
	size_t wanted;		/* the mapping BPF "met" pending, plus one; 0: none */
	/* --follow's images: the one published (image 0: none), and how many others fit. */
	uint32_t image, image_room;
	struct unwind_mapping image_pub[MEMLEAK_UNWIND_MAPPINGS];
	size_t nr_image_pub;
	unsigned image_publishes, image_drops;
	struct unwind_row *store;	/* every row "loaded", where BPF would have it */
};

static int fake_add_rows(void *ctx, const struct unwind_rows *parts, size_t nr, uint32_t *first)
{
	struct fake_tables *f = ctx;

	if (f->add_err)
		return f->add_err;
	f->adds++;
	*first = f->rows;
	for (size_t i = 0; i < nr; i++) {
		struct unwind_row *v = realloc(f->store, (f->rows + parts[i].nr) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memcpy(v + f->rows, parts[i].rows, parts[i].nr * sizeof(*v));
		f->store = v;
		f->rows += (uint32_t)parts[i].nr;
	}
	return 0;
}

static int fake_set_mappings(void *ctx, const struct unwind_mapping *m, size_t nr)
{
	struct fake_tables *f = ctx;

	f->publishes++;
	memcpy(f->pub, m, nr * sizeof(*m));
	f->nr_pub = nr;
	return 0;
}

/* One image's slot, as BPF's would hold several. */
static int fake_set_image(void *ctx, uint32_t image, const struct unwind_mapping *m, size_t nr)
{
	struct fake_tables *f = ctx;

	if (!m) {
		f->image_drops++;
		if (f->image == image)
			f->image = 0;
		return 0;
	}
	if (f->image && f->image != image)
		return -ENOSPC;
	f->image = image;
	f->image_publishes++;
	memcpy(f->image_pub, m, nr * sizeof(*m));
	f->nr_image_pub = nr;
	return 0;
}

static bool fake_wanted(void *ctx, size_t i)
{
	const struct fake_tables *f = ctx;

	return f->wanted == i + 1;
}

static uint64_t fake_rows(void *ctx)
{
	struct fake_tables *f = ctx;

	f->queries++;
	return f->rows;
}

static uint64_t fake_bytes(void *ctx)
{
	struct fake_tables *f = ctx;

	f->queries++;
	return (uint64_t)f->rows * 16;
}

static unsigned walk_asked;

static bool can_walk(void)
{
	walk_asked++;
	return true;
}

static bool cannot_walk(void)
{
	walk_asked++;
	return false;
}

/* unwind__choose, what it says in said. */
static int choose_said(enum unwind_mode mode, bool (*walk)(void), bool *tables, char *said,
		       size_t len)
{
	struct unit_stderr c;
	int err;

	if (!unit__capture_stderr(&c))
		return -EBADF;
	err = unwind__choose(mode, walk, tables);
	unit__stderr_text(&c, said, len);
	return err;
}

TEST(unwind_choose)
{
	bool tables = true;
	char said[512];

	walk_asked = 0;
	ASSERT(choose_said(UNWIND_FP, can_walk, &tables, said, sizeof(said)) == 0 && !tables);
	ASSERT_EQ_U64(walk_asked, 0);	/* fp: the kernel is not asked */
	ASSERT(choose_said(UNWIND_AUTO, can_walk, &tables, said, sizeof(said)) == 0 && tables);
	ASSERT(choose_said(UNWIND_DWARF, can_walk, &tables, said, sizeof(said)) == 0 && tables);
	ASSERT_EQ_STR(said, "");
	ASSERT(choose_said(UNWIND_AUTO, cannot_walk, &tables, said, sizeof(said)) == 0 && !tables);
	ASSERT_EQ_STR(said, "memleakbpf: this kernel cannot run the CFI unwinder (bpf_loop, Linux 5.17): stacks are walked by frame pointers\n");
	ASSERT(choose_said(UNWIND_DWARF, cannot_walk, &tables, said, sizeof(said)) == -EOPNOTSUPP);
	ASSERT(!tables);
	ASSERT_EQ_STR(said, "memleakbpf: --unwind=dwarf needs bpf_loop (Linux 5.17 or later); use --unwind=fp\n");
	ASSERT_EQ_U64(walk_asked, 4);
	return true;
}

/* The executable file mapping of this test program, from its maps. */
static const struct map_entry *own_text(const struct maps *maps)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	for (size_t i = 0; i < maps->nr; i++)
		if (maps->entries[i].executable && !strcmp(maps->entries[i].path, exe))
			return &maps->entries[i];
	return NULL;
}

/* An unwind on the fake, and this program's mappings to feed it. */
struct fixture {
	struct fake_tables f;
	struct unwind *u;
	struct maps *maps;
	const struct map_entry *text;	/* in maps */
	char said[512];			/* stderr of the last update_said */
};

static bool fixture__init_lazy(struct fixture *x, bool lazy, int verbose)
{
	struct unwind_ops ops = {
		.ctx = &x->f,
		.add_rows = fake_add_rows,
		.set_mappings = fake_set_mappings,
		.set_image_mappings = fake_set_image,
		.wanted = fake_wanted,
		.rows = fake_rows,
		.bytes = fake_bytes,
	};

	memset(x, 0, sizeof(*x));
	x->u = unwind__new(&ops, lazy, verbose);
	if (!x->u || maps__read(getpid(), &x->maps))
		return false;
	x->text = own_text(x->maps);
	return x->text != NULL;
}

static bool fixture__init(struct fixture *x, int verbose)
{
	return fixture__init_lazy(x, false, verbose);
}

static void fixture__fini(struct fixture *x)
{
	free(x->f.store);
	unwind__free(x->u);
	maps__free(x->maps);
}

/* unwind__update, what it says kept in x->said. */
static int update_said(struct fixture *x, const struct maps *maps)
{
	struct unit_stderr c;
	int err;

	if (!unit__capture_stderr(&c))
		return -EBADF;
	err = unwind__update(x->u, getpid(), maps);
	unit__stderr_text(&c, x->said, sizeof(x->said));
	return err;
}

static struct maps *new_maps(size_t nr)
{
	struct maps *m = calloc(1, sizeof(*m));

	if (!m || !(m->entries = calloc(nr ? nr : 1, sizeof(*m->entries)))) {
		free(m);
		return NULL;
	}
	return m;
}

/* nr copies of e, each 1 GiB above the last: one file mapped again and again. */
static struct maps *copies(const struct map_entry *e, size_t nr)
{
	struct maps *m = new_maps(nr);

	for (size_t i = 0; m && i < nr; i++) {
		m->entries[i] = *e;
		m->entries[i].start += i << 30;
		m->entries[i].end += i << 30;
		m->nr++;
	}
	return m;
}

/* maps without its last executable file mapping. */
static struct maps *but_last(const struct maps *maps)
{
	struct maps *m = new_maps(maps->nr);
	size_t last = maps->nr;

	for (size_t i = 0; i < maps->nr; i++)
		if (maps->entries[i].executable && map_entry__is_file(&maps->entries[i]))
			last = i;
	for (size_t i = 0; m && i < maps->nr; i++)
		if (i != last)
			m->entries[m->nr++] = maps->entries[i];
	return m;
}

/* Paths borrowed from the maps read: only the arrays are ours. */
static void free_copies(struct maps *m)
{
	if (m)
		free(m->entries);
	free(m);
}

TEST(unwind_update_loads_once_publishes_on_change)
{
	struct fixture x;
	struct maps *fewer = NULL;
	const struct fake_tables *f = &x.f;
	size_t files = 0;
	unsigned adds;

	ASSERT(fixture__init(&x, 0));
	for (size_t i = 0; i < x.maps->nr; i++)
		files += x.maps->entries[i].executable && map_entry__is_file(&x.maps->entries[i]);
	ASSERT_EQ_U64(update_said(&x, x.maps), 0);
	ASSERT_EQ_U64(f->publishes, 1);
	ASSERT_EQ_U64(f->nr_pub, files);
	ASSERT_EQ_U64(f->adds, 1);	/* every file's rows in one go */
	ASSERT(f->rows > 0);
	for (size_t i = 0; i < f->nr_pub; i++) {
		const struct unwind_mapping *m = &f->pub[i];

		ASSERT(m->start < m->end);
		ASSERT(!i || f->pub[i - 1].start < m->start);	/* the order BPF searches */
		ASSERT((uint64_t)m->first_row + m->nr_rows <= f->rows);
	}
	adds = f->adds;
	/* The same mappings: nothing loaded, nothing switched. */
	ASSERT_EQ_U64(update_said(&x, x.maps), 0);
	ASSERT_EQ_U64(f->publishes, 1);
	ASSERT_EQ_U64(f->adds, adds);
	/* One mapping fewer: published again, from the rows already loaded. */
	ASSERT((fewer = but_last(x.maps)) != NULL);
	ASSERT_EQ_U64(update_said(&x, fewer), 0);
	ASSERT_EQ_U64(f->publishes, 2);
	ASSERT_EQ_U64(f->nr_pub, files - 1);
	ASSERT_EQ_U64(f->adds, adds);
	free_copies(fewer);
	fixture__fini(&x);
	return true;
}

/* The file mapped at m's start, in maps. */
static const struct map_entry *entry_at(const struct maps *maps, uint64_t start)
{
	for (size_t i = 0; i < maps->nr; i++)
		if (maps->entries[i].start == start)
			return &maps->entries[i];
	return NULL;
}

/* Each file's rows are where its mapping says, as its own reading packs them. */
TEST(unwind_update_places_each_files_rows)
{
	struct fixture x;
	const struct fake_tables *f = &x.f;
	size_t checked = 0;

	ASSERT(fixture__init(&x, 0));
	ASSERT_EQ_U64(update_said(&x, x.maps), 0);
	for (size_t i = 0; i < f->nr_pub; i++) {
		const struct unwind_mapping *m = &f->pub[i];
		const struct map_entry *e = entry_at(x.maps, m->start);
		struct cfi_table *t = NULL;
		struct unwind_row *rows = NULL;
		size_t nr = 0;

		if (!m->nr_rows)
			continue;
		ASSERT(e && cfi__read(e->path, &t) == 0 && cfi_table__pack(t, &rows, &nr) == 0);
		ASSERT_EQ_U64(m->nr_rows, nr);
		ASSERT(!memcmp(f->store + m->first_row, rows, nr * sizeof(*rows)));
		free(rows);
		cfi__table_free(t);
		checked++;
	}
	ASSERT(checked >= 3);	/* this program, libc, ld.so at least */
	fixture__fini(&x);
	return true;
}

TEST(unwind_update_shares_a_files_rows)
{
	struct fixture x;
	struct maps *twice = NULL;
	const struct unwind_mapping *pub = x.f.pub;

	ASSERT(fixture__init(&x, 1));	/* -v: a line per table, with the totals */
	ASSERT((twice = copies(x.text, 2)) != NULL);
	ASSERT_EQ_U64(update_said(&x, twice), 0);
	ASSERT(!strncmp(x.said, "memleakbpf: unwind table unit_tests: ", 37));
	ASSERT(strstr(x.said, " rows from .eh_frame"));
	ASSERT_EQ_U64(x.f.adds, 1);
	ASSERT_EQ_U64(x.f.queries, 2);
	ASSERT_EQ_U64(x.f.nr_pub, 2);
	ASSERT(pub[0].nr_rows > 0);
	ASSERT_EQ_U64(pub[1].first_row, pub[0].first_row);
	ASSERT_EQ_U64(pub[1].nr_rows, pub[0].nr_rows);
	ASSERT_EQ_U64(pub[1].base - pub[0].base, 1ull << 30);
	free_copies(twice);
	fixture__fini(&x);
	return true;
}

TEST(unwind_update_without_rows_is_frame_pointers)
{
	char nowhere[] = "/nonexistent/memleakbpf-unit";
	struct fixture x;
	struct maps *one = NULL;

	ASSERT(fixture__init(&x, 0));
	/* Tables full: the file is published, without rows. */
	x.f.add_err = -ENOSPC;
	ASSERT((one = copies(x.text, 1)) != NULL);
	ASSERT_EQ_U64(update_said(&x, one), 0);
	ASSERT(strstr(x.said, "unit_tests: no unwind table (No space left on device): its frames are walked by frame pointers\n"));
	ASSERT_EQ_U64(x.f.publishes, 1);
	ASSERT_EQ_U64(x.f.nr_pub, 1);
	ASSERT_EQ_U64(x.f.pub[0].nr_rows, 0);
	/* A file that cannot be opened: the same, and BPF is not asked to load it. */
	x.f.add_err = 0;
	one->entries[0].path = nowhere;
	one->entries[0].inode++;
	ASSERT_EQ_U64(update_said(&x, one), 0);
	ASSERT_EQ_U64(x.f.adds, 0);
	ASSERT_EQ_U64(x.f.nr_pub, 1);
	ASSERT_EQ_U64(x.f.pub[0].nr_rows, 0);
	free_copies(one);
	fixture__fini(&x);
	return true;
}

TEST(unwind_update_caps_the_mappings)
{
	struct fixture x;
	struct maps *many = NULL;

	ASSERT(fixture__init(&x, 0));
	ASSERT((many = copies(x.text, MEMLEAK_UNWIND_MAPPINGS + 3)) != NULL);
	ASSERT_EQ_U64(update_said(&x, many), 0);
	ASSERT_EQ_STR(x.said, "memleakbpf: more than 512 executable mappings: the rest are walked by frame pointers\n");
	many->entries[0].end--;		/* a change: published again, not said again */
	ASSERT_EQ_U64(update_said(&x, many), 0);
	ASSERT_EQ_STR(x.said, "");
	ASSERT_EQ_U64(x.f.publishes, 2);
	ASSERT_EQ_U64(x.f.nr_pub, MEMLEAK_UNWIND_MAPPINGS);
	ASSERT_EQ_U64(x.f.adds, 1);
	ASSERT_EQ_U64(unwind__update(NULL, getpid(), many), 0);	/* frame pointers: no unwind */
	free_copies(many);
	fixture__fini(&x);
	return true;
}

/* Executable file mappings of the fake's last publish that are pending. */
static size_t nr_pending(const struct fake_tables *f)
{
	size_t n = 0;

	for (size_t i = 0; i < f->nr_pub; i++)
		n += f->pub[i].first_row == MEMLEAK_ROWS_PENDING && !f->pub[i].nr_rows;
	return n;
}

/* The index of the published mapping that starts at start. */
static size_t pub_at(const struct fake_tables *f, uint64_t start)
{
	for (size_t i = 0; i < f->nr_pub; i++)
		if (f->pub[i].start == start)
			return i;
	return SIZE_MAX;
}

TEST(unwind_lazy_publishes_pending_then_builds)
{
	struct fixture x;
	const struct fake_tables *f = &x.f;
	size_t files;

	ASSERT(fixture__init_lazy(&x, true, 0));
	ASSERT_EQ_U64(update_said(&x, x.maps), 0);
	files = f->nr_pub;
	/* Published at once, nothing read: every file this test maps is readable. */
	ASSERT(files > 1);
	ASSERT_EQ_U64(f->publishes, 1);
	ASSERT_EQ_U64(f->adds, 0);
	ASSERT_EQ_U64(nr_pending(f), files);
	ASSERT(unwind__pending(x.u));
	/* A slice long enough for all of them: one load, published again. */
	ASSERT_EQ_U64(unwind__build(x.u, 60000), 0);
	ASSERT(!unwind__pending(x.u));
	ASSERT_EQ_U64(f->adds, 1);
	ASSERT_EQ_U64(f->publishes, 2);
	ASSERT_EQ_U64(nr_pending(f), 0);
	ASSERT(f->pub[pub_at(f, x.text->start)].nr_rows > 0);
	/* Nothing left: no work, no publish. */
	ASSERT_EQ_U64(unwind__build(x.u, 60000), 0);
	ASSERT_EQ_U64(f->publishes, 2);
	fixture__fini(&x);
	return true;
}

TEST(unwind_lazy_builds_named_files_now)
{
	const char *paths[] = { NULL, "/nonexistent/memleakbpf-unit" };
	struct fixture x;
	const struct fake_tables *f = &x.f;
	size_t files, text;

	ASSERT(fixture__init_lazy(&x, true, 0));
	ASSERT_EQ_U64(update_said(&x, x.maps), 0);
	files = f->nr_pub;
	paths[0] = x.text->path;
	ASSERT_EQ_U64(unwind__build_now(x.u, x.maps, paths, 2), 0);
	text = pub_at(f, x.text->start);
	ASSERT(text != SIZE_MAX);
	ASSERT(f->pub[text].nr_rows > 0 && f->pub[text].first_row != MEMLEAK_ROWS_PENDING);
	ASSERT_EQ_U64(f->adds, 1);
	ASSERT_EQ_U64(f->publishes, 2);
	/* Every mapping of the program's file has its rows; the others wait. */
	ASSERT(nr_pending(f) > 0 && nr_pending(f) < files);
	for (size_t i = 0; i < f->nr_pub; i++)
		if (f->pub[i].first_row == MEMLEAK_ROWS_PENDING)
			ASSERT(f->pub[i].start != x.text->start);
	ASSERT(unwind__pending(x.u));
	/* Not lazy: nothing is left pending, and build_now has nothing to do. */
	fixture__fini(&x);
	ASSERT(fixture__init(&x, 0));
	ASSERT_EQ_U64(update_said(&x, x.maps), 0);
	ASSERT(!unwind__pending(x.u));
	ASSERT_EQ_U64(unwind__build_now(x.u, x.maps, paths, 1), 0);
	ASSERT_EQ_U64(x.f.publishes, 1);
	fixture__fini(&x);
	return true;
}

TEST(unwind_lazy_builds_what_bpf_met_first)
{
	struct fixture x;
	const struct fake_tables *f = &x.f;
	size_t last;

	ASSERT(fixture__init_lazy(&x, true, 0));
	ASSERT_EQ_U64(update_said(&x, x.maps), 0);
	ASSERT(f->nr_pub > 1);
	/* BPF met the last mapping pending: a slice already over builds it alone. */
	last = f->nr_pub - 1;
	x.f.wanted = last + 1;
	ASSERT_EQ_U64(unwind__build(x.u, 0), 0);
	ASSERT_EQ_U64(f->adds, 1);
	ASSERT(f->pub[last].first_row != MEMLEAK_ROWS_PENDING);
	ASSERT(f->pub[0].first_row == MEMLEAK_ROWS_PENDING || f->pub[0].nr_rows == f->pub[last].nr_rows);
	ASSERT(unwind__pending(x.u));
	fixture__fini(&x);
	return true;
}

/* unwind_image__update, what it says kept in x->said. */
static int update_image_said(struct fixture *x, uint32_t image, bool add)
{
	struct unit_stderr c;
	int err;

	if (!unit__capture_stderr(&c))
		return -EBADF;
	err = unwind_image__update(x->u, image, getpid(), x->maps, add);
	unit__stderr_text(&c, x->said, sizeof(x->said));
	return err;
}

TEST(unwind_images_apart_on_shared_rows)
{
	struct fixture x;
	const struct fake_tables *f = &x.f;
	unsigned adds, publishes;

	ASSERT(fixture__init_lazy(&x, true, 0));	/* -p: the target's tables pending */
	ASSERT_EQ_U64(update_said(&x, x.maps), 0);
	ASSERT_EQ_U64(f->adds, 0);
	publishes = f->publishes;
	/* An image is built at once, and the target's mappings take the rows too. */
	ASSERT_EQ_U64(update_image_said(&x, 7, true), 0);
	ASSERT_EQ_U64(f->image, 7);
	ASSERT_EQ_U64(f->nr_image_pub, f->nr_pub);
	ASSERT(!unwind__pending(x.u));
	ASSERT_EQ_U64(f->publishes, publishes + 1);
	for (size_t i = 0; i < f->nr_pub; i++) {
		ASSERT(f->image_pub[i].first_row != MEMLEAK_ROWS_PENDING);
		ASSERT_EQ_U64(f->image_pub[i].first_row, f->pub[i].first_row);
		ASSERT_EQ_U64(f->image_pub[i].start, f->pub[i].start);
	}
	/* Its library events: published again, nothing loaded twice. */
	adds = f->adds;
	ASSERT_EQ_U64(update_image_said(&x, 7, false), 0);
	ASSERT_EQ_U64(f->image_publishes, 2);
	ASSERT_EQ_U64(f->adds, adds);
	/* Not an image (a fork's tag): nothing. */
	ASSERT_EQ_U64(update_image_said(&x, 9, false), 0);
	ASSERT_EQ_U64(f->image_publishes, 2);
	/* No slot left: said once, frame pointers for it, and forgotten. */
	ASSERT_EQ_U64(update_image_said(&x, 8, true), 0);
	ASSERT(strstr(x.said, "forks with libraries of their own, alive at once: the later ones are walked by frame pointers"));
	ASSERT_EQ_U64(f->image, 7);
	ASSERT_EQ_U64(update_image_said(&x, 8, false), 0);
	ASSERT_EQ_U64(f->image_publishes, 2);
	/* 7's last process gone: its slot is free for the next. */
	unwind_image__forget(x.u, 7);
	ASSERT_EQ_U64(f->image, 0);
	ASSERT_EQ_U64(update_image_said(&x, 8, true), 0);
	ASSERT_EQ_U64(f->image, 8);
	ASSERT_EQ_STR(x.said, "");
	fixture__fini(&x);
	return true;
}
