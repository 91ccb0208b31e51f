// SPDX-License-Identifier: GPL-2.0
/*
 * Each stack's site frame (analyze/sites.h), found without symbolizing the
 * whole stack: its Python frames are named from BPF's copy of them, and of
 * its native addresses only those in objects that may hold the user's
 * code, innermost first, until one is found. A report of thousands of deep
 * stacks, of which the text prints a few, so costs a few lookups per
 * stack, not one per frame.
 *
 * A Python stack's site frame depends only on its Python frames, the
 * rules and the code table, whose answers never change once found: a
 * carry (struct report_sites_carry) finds it once per Python stack, for
 * all the sites whose native stacks pair with it, and keeps it for each
 * site from report to report, by the index the site keeps in a carried
 * reading (probe/snapshot_kept.h). It holds while the table is the same
 * one and either every frame of the stack was found in it or it learnt no
 * code since. So does a native
 * stack's, found among the target's modules (no JIT's code) while they
 * are the same ones (their count: they are only added to until an exec,
 * which starts the carry anew). Reports borrow them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "analyze/runtime_frames.h"
#include "analyze/sites.h"
#include "model/stackcache.h"
#include "probe/snapshot.h"
#include "python/pycode.h"
#include "python/pystack.h"
#include "report_build.h"
#include "runtime_sites.h"
#include "target/images.h"
#include "util/idmap.h"
#include "util/vec.h"

/* What decides whether a frame is the user's: --own, and the interpreter's object. */
struct site_rules {
	const struct sites_own *own;
	const char *interp;
};

static void frames_free(struct report_frame *frames, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		report__frame_free(&frames[i]);
	free(frames);
}

/* Frame `at` of frames (moved out of them), in *out: 0 or -ENOMEM. */
static int take_frame(struct report_frame *frames, size_t nr, size_t at, uint64_t ip,
		      struct report_frame **out)
{
	*out = calloc(1, sizeof(**out));
	if (*out && at < nr) {
		**out = frames[at];
		frames[at] = (struct report_frame){ 0 };
	}
	if (*out)
		(*out)->address = ip;	/* the captured address, as every frame shows */
	frames_free(frames, nr);
	return *out ? 0 : -ENOMEM;
}

/* Which of an address's frames frame_at() takes: the user's, or a named one not the runtime's. */
typedef bool frame_pick(const struct report_frame *f, const struct site_rules *rules);

static bool pick_own(const struct report_frame *f, const struct site_rules *rules)
{
	return sites__own_native(f, rules->own, rules->interp);
}

static bool pick_named(const struct report_frame *f, const struct site_rules *rules)
{
	(void)rules;
	return f->function && !runtime_frames__internal(f);
}

/*
 * Of ip's frames (its inlined calls' innermost first, then its function's),
 * the first that pick takes, or with pick NULL the innermost: *out, or
 * NULL when none is. 0 or -ENOMEM.
 */
static int frame_at(struct symbolizer *sym, const struct modules *mods, uint64_t ip,
		    frame_pick *pick, const struct site_rules *rules, struct report_frame **out,
		    bool *lasts)
{
	struct report_frame *frames = NULL;
	size_t nr = 0, at = 0;
	int err = sym ? symbolizer__resolve(sym, mods, ip, true, &frames, &nr) : 0;

	/* A JIT's (perf map) or the kernel's, a failure, no symbolizer: not for keeps. */
	if (!sym || err || !mods || !modules__find(mods, ip))
		*lasts = false;
	*out = NULL;
	/* Any other failure only costs names, as in the report's frames. */
	if (err == -ENOMEM) {
		frames_free(frames, nr);
		return err;
	}
	if (pick) {
		while (at < nr && !pick(&frames[at], rules))
			at++;
		if (at == nr) {	/* none, or not even a name */
			frames_free(frames, nr);
			return 0;
		}
	}
	return take_frame(frames, nr, at, ip, out);
}

/*
 * Can Python frame i be a site: the user's (strict), or at least not
 * importlib's bootstrap (the fallback)? Asked of the code's table, without
 * building the frame: the library frames a torch stack passes over would
 * cost three copies of names each. Code the table does not know (a
 * module's body, freed once it ran) is no user's line, but a fallback.
 */
static bool python_candidate(const struct py_stack *py, uint32_t i, const struct pycode *pc,
			     const struct site_rules *rules, bool strict)
{
	struct pycode_where w;

	if (!pc || !pycode__where(pc, &py->frames[i], &w))
		return !strict;
	if (w.setup)
		return false;
	return strict ? sites__own_python_file(w.file, rules->own) : !sites__import_file(w.file);
}

/* Is every frame of py's in the code table: then what it says of them holds for good. */
static bool python_known(const struct py_stack *py, const struct pycode *pc)
{
	struct pycode_where w;

	for (uint32_t i = 0; i < py->nr && i < MEMLEAK_PY_MAX_FRAMES; i++)
		if (!pc || !pycode__where(pc, &py->frames[i], &w))
			return false;
	return true;
}

/* Was the stack's allocation made by an import: importlib's bootstrap among its frames? */
static bool python_import(const struct py_stack *py, const struct pycode *pc)
{
	struct pycode_where w;

	for (uint32_t i = 0; pc && i < py->nr && i < MEMLEAK_PY_MAX_FRAMES; i++)
		if (pycode__where(pc, &py->frames[i], &w) && sites__import_file(w.file))
			return true;
	return false;
}

/* The innermost Python frame the user's (strict), else outside importlib: in *out; false: none. */
static bool python_site(const struct py_stack *py, const struct pycode *pc,
			const struct site_rules *rules, bool strict, struct report_frame *out)
{
	for (uint32_t i = 0; i < py->nr && i < MEMLEAK_PY_MAX_FRAMES; i++)
		if (python_candidate(py, i, pc, rules, strict) && !pystack__frame(py, i, pc, out))
			return true;
	return false;
}

/*
 * What a Python stack gives as its site's frame. Its Python frames, the
 * rules and the code table decide it, not its native frames: a torch
 * job's 200,000 stacks pair as many native stacks with some 6,000 Python
 * ones, so a carry finds it once per Python stack (struct py_site below)
 * and its sites share it. The frame's names are the code table's.
 */
struct py_site {
	uint64_t id;		/* the Python stack's */
	struct report_frame frame;	/* when found */
	uint64_t key;		/* sites__key(&frame) */
	uint32_t codes;		/* the code table's count then */
	bool found, own, import;
	bool known;		/* every frame was in the code table: it holds for good */
};

/* How many code objects the table knows (none without one). */
static uint32_t codes_of(const struct pycode *pc)
{
	return pc ? (uint32_t)pycode__count(pc) : 0;
}

static void py_site_find(const struct py_stack *py, const struct pycode *pc,
			 const struct site_rules *rules, struct py_site *ps)
{
	ps->found = ps->own = python_site(py, pc, rules, true, &ps->frame);
	/* None of the user's: the innermost Python line, as the rules had it. */
	if (!ps->found)
		ps->found = python_site(py, pc, rules, false, &ps->frame);
	ps->import = python_import(py, pc);
	ps->known = python_known(py, pc);
	ps->codes = codes_of(pc);
	ps->key = ps->found ? sites__key(&ps->frame) : 0;
}

/*
 * A stripped program's frame has no name (fstminimize+0x38cd): the user
 * cannot act on it. The innermost named frame inside it that is not the
 * runtime's says what did the work: *out replaced by it when there is
 * one (*own false: a library's frame), else left.
 */
static int named_instead(const uint64_t *ips, uint32_t first, uint32_t own_at,
			 struct symbolizer *sym, const struct modules *mods,
			 struct report_frame **out, bool *own, bool *lasts)
{
	struct report_frame *named = NULL;
	int err = 0;

	if ((*out)->function || (*out)->file)
		return 0;
	for (uint32_t i = first; i < own_at && !err && !named; i++)
		err = frame_at(sym, mods, ips[i], pick_named, NULL, &named, lasts);
	if (named) {
		report__frame_free(*out);
		free(*out);
		*out = named;
		*own = false;
	}
	return err;
}

/*
 * The innermost native frame of the user's code, or none. Addresses in an
 * object that holds none of it are passed over unresolved (with --own,
 * every address is resolved: its source file decides); those in no object
 * may be a JIT's, named by its perf map. *own: the frame is the user's
 * (false: a library's named in place of a stripped program's). *lasts
 * cleared when an address looked at was in no module or failed.
 */
static int native_site(const uint64_t *ips, uint32_t nr, uint32_t first, struct symbolizer *sym,
		       const struct modules *mods, const struct site_rules *rules,
		       struct report_frame **out, bool *own, bool *lasts)
{
	bool by_file = rules->own && rules->own->nr;

	*own = false;
	for (uint32_t i = first; i < nr; i++) {
		const struct module *m = mods ? modules__find(mods, ips[i]) : NULL;
		int err;

		if (m && !by_file && !sites__own_module(m->path, rules->interp))
			continue;
		err = frame_at(sym, mods, ips[i], pick_own, rules, out, lasts);
		if (err)
			return err;
		if (*out) {
			*own = true;
			return by_file ? 0 : named_instead(ips, first, i, sym, mods, out, own, lasts);
		}
	}
	return 0;
}

/*
 * A stack with none of the user's code (a library's constructor run by the
 * dynamic linker, a library's own work): its innermost named frame that is
 * not the runtime's nor a standard container's, within the first
 * LIBRARY_SITE_DEPTH addresses (fst::GenericRegister<...>::SetEntry, not
 * the std::map's _M_emplace_hint_unique it inlined), else the innermost
 * frame of the address that called the allocation function. 0 or -ENOMEM.
 */
#define LIBRARY_SITE_DEPTH 8

static int library_site(const uint64_t *ips, uint32_t nr, uint32_t first, struct symbolizer *sym,
			const struct modules *mods, struct report_frame **out, bool *lasts)
{
	int err = 0;

	*out = NULL;
	for (uint32_t i = first; i < nr && i < first + LIBRARY_SITE_DEPTH && !err && !*out; i++)
		err = frame_at(sym, mods, ips[i], pick_named, NULL, out, lasts);
	if (!err && !*out)
		err = frame_at(sym, mods, ips[first], NULL, NULL, out, lasts);
	return err;
}

static struct site_rules rules_of(const struct report_meta *meta)
{
	return (struct site_rules){ &meta->own, meta->python ? meta->python->path : NULL };
}

/* Does site's stack have Python frames: then ps of them says its site frame. */
static bool has_python(const struct snap_site *site)
{
	return site->pystack && site->pystack->has_py && site->pystack->python[0].nr;
}

/*
 * st's site frame, of a stack with Python frames (ps: what they gave) or
 * without (ps NULL). A frame ps found is lent when lend (a carry's,
 * kept as long as the carry), else copied. *native: what a carry may
 * keep of a stack without Python frames, from addresses in the target's
 * modules only, each resolved (the same while the modules are:
 * report_sites_carry.unwrap_epoch).
 */
static int site_frame(const struct snap_site *site, const struct py_site *ps, bool lend,
		      struct symbolizer *sym, const struct modules *mods,
		      const struct report_meta *meta, struct report_stack *st, bool *native)
{
	struct site_rules rules = rules_of(meta);
	uint32_t first = st->wrapper_ips, nr;
	uint64_t ips[MEMLEAK_MAX_STACK_DEPTH];
	int err = 0;

	*native = !ps;
	if (ps) {
		st->site_own = ps->own;
		st->site_import = ps->import;
	}
	if (ps && ps->found) {
		st->site_frame = lend ? (struct report_frame *)&ps->frame : malloc(sizeof(ps->frame));
		if (!st->site_frame)
			return -ENOMEM;
		if (!lend)
			*st->site_frame = ps->frame;
		st->site_frame_kept = lend;
		st->site_keyed = true;
		st->site_key = ps->key;
		return 0;
	}
	/* The native frames only now: a Python stack's site is seldom in them. */
	nr = stack_blob__ips(site->stack, ips, MEMLEAK_MAX_STACK_DEPTH);
	if (!ps)
		err = native_site(ips, nr, first, sym, mods, &rules, &st->site_frame,
				  &st->site_own, native);
	/* None of the user's: what a library did, else where the allocation function was called. */
	if (!err && !st->site_frame && first < nr)
		err = library_site(ips, nr, first, sym, mods, &st->site_frame, native);
	/* The runtime's own block? Not a pymalloc arena, whose objects are anyone's. */
	if (!err && !ps)
		err = runtime_sites__classify(ips, nr, first, !st->truncated,
					      pystack__arena_sized(st) ? NULL : rules.interp, sym,
					      mods, &st->site_runtime, &st->site_preinit);
	*native = *native && !err && st->site_frame;
	return err;
}

/* ------------------------------------------------------------ the carry */

/* What a site's Python stack gave, kept; and what unwrap() made of it. */
struct site_memo {
	uint64_t stack_id;
	struct report_frame *frame;	/* owned, unless shared */
	uint32_t api;
	uint32_t codes;		/* the code table's count then */
	uint32_t unwrap_epoch;	/* unwrap's answer holds while the carry's is this; 0: none */
	uint8_t wrapper_ips, unwrap_api;
	bool used;		/* frame, own, import, codes and known hold a site frame */
	bool known;		/* every frame was in the code table */
	bool own, import;
	uint8_t runtime;	/* enum report_runtime */
	bool preinit;
	bool shared;		/* frame is its Python stack's py_site's */
	/* A native site frame: it holds while the carry's unwrap_epoch is this. */
	bool native;
	uint32_t frame_epoch;
	uint64_t key;		/* sites__key(frame): grouping hashes no names of a kept frame */
};

struct report_sites_carry {
	struct site_memo *v;	/* by site index in the carried reading */
	size_t cap;
	uint64_t reading;	/* of the last report that used it; 0: none */
	bool ok;		/* it serves that report */
	uint64_t pycode;	/* the code table's id then */
	const struct report_python *python;
	/* What unwrap() reads: the target's modules (their count) and the wrappers. */
	const struct modules *mods;
	size_t nr_mods, nr_wrappers;
	const struct alloc_wrapper *wrappers;
	uint32_t unwrap_epoch;
	/* What each Python stack gave (py_site): by its id, emptied with the memos. */
	struct idmap py_of;
	struct py_site **py;	/* each its own allocation: memos point into it */
	size_t nr_py, cap_py;
};

struct report_sites_carry *report_sites__carry_new(void)
{
	return calloc(1, sizeof(struct report_sites_carry));
}

static void memo_drop(struct site_memo *m)
{
	if (m->frame && !m->shared) {
		report__frame_free(m->frame);
		free(m->frame);
	}
	memset(m, 0, sizeof(*m));
}

/* The memos first: they point into the py_sites. */
static void carry_empty(struct report_sites_carry *c)
{
	for (size_t i = 0; i < c->cap; i++)
		memo_drop(&c->v[i]);
	for (size_t i = 0; i < c->nr_py; i++)
		free(c->py[i]);
	c->nr_py = 0;
	idmap__clear(&c->py_of);
}

void report_sites__carry_free(struct report_sites_carry *c)
{
	if (!c)
		return;
	carry_empty(c);
	idmap__free(&c->py_of);
	free(c->py);
	free(c->v);
	free(c);
}

static size_t text_bytes(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

size_t report_sites__carry_bytes(const struct report_sites_carry *c)
{
	size_t n = c ? c->cap * sizeof(*c->v) + c->cap_py * sizeof(*c->py) +
			       c->nr_py * sizeof(struct py_site) + idmap__bytes(&c->py_of) : 0;

	for (size_t i = 0; c && i < c->cap; i++) {
		const struct report_frame *f = c->v[i].frame;

		if (c->v[i].used && f && !c->v[i].shared)
			n += sizeof(*f);
		if (c->v[i].used && f && !f->borrowed)
			n += text_bytes(f->function) + text_bytes(f->symbol) +
			     text_bytes(f->module) + text_bytes(f->file);
	}
	return n;
}

/*
 * The reading carried over was compacted (snapshot.moved): each memo moves
 * with its site, down in order, those of the sites gone go.
 */
static void carry_move(struct report_sites_carry *c, const struct snapshot *snap)
{
	for (size_t i = 0; i < snap->nr_moved && i < c->cap; i++) {
		uint32_t to = snap->moved[i];

		if (to == SNAP_GONE) {
			memo_drop(&c->v[i]);
		} else if (to != i) {
			c->v[to] = c->v[i];
			memset(&c->v[i], 0, sizeof(c->v[i]));
		}
	}
}

/*
 * The carry made ready for snap's report: kept if snap carries over the
 * reading of the last report that used it, with the same code table and
 * interpreter, else emptied. False: none for this report.
 */
static bool carry_ready(struct report_sites_carry *c, const struct snapshot *snap,
			const struct report_meta *meta, const struct modules *mods)
{
	bool ok = snap && snap->reading;

	if (ok && c->reading == snap->reading)	/* ready for this report already */
		return c->ok;
	if (ok && snap->follows == c->reading && snap->moved)
		carry_move(c, snap);
	if (!ok || snap->follows != c->reading || c->pycode != pycode__id(meta->pycode) ||
	    c->python != meta->python)
		carry_empty(c);
	if (c->mods != mods || c->nr_mods != modules__count(mods) ||
	    c->wrappers != meta->wrappers || c->nr_wrappers != meta->nr_wrappers || !c->unwrap_epoch)
		c->unwrap_epoch++;	/* unwrap's answers kept so far hold no more */
	c->mods = mods;
	c->nr_mods = modules__count(mods);
	c->wrappers = meta->wrappers;
	c->nr_wrappers = meta->nr_wrappers;
	c->reading = ok ? snap->reading : 0;
	c->ok = false;
	c->pycode = pycode__id(meta->pycode);
	c->python = meta->python;
	if (ok && snap->nr > c->cap) {
		struct site_memo *v = realloc(c->v, snap->nr * sizeof(*v));

		if (!v) {
			c->reading = 0;	/* emptied next time */
			return false;
		}
		memset(v + c->cap, 0, (snap->nr - c->cap) * sizeof(*v));
		c->v = v;
		c->cap = snap->nr;
	}
	/* Sites that hold nothing now are in no report: their frames go. */
	for (size_t k = 0; ok && k < snap->nr_changed; k++)
		if (!snap->sites[snap->changed[k]].stats.outstanding_allocs)
			memo_drop(&c->v[snap->changed[k]]);
	/* Sites whose stacks this reading read (new, or unread before): nothing kept holds. */
	for (size_t k = 0; ok && k < snap->nr_fresh; k++)
		memo_drop(&c->v[snap->fresh[k]]);
	c->ok = ok;
	return ok;
}

/* The memo of site, of the target's (another process's modules are not the carry's); NULL: none. */
static struct site_memo *memo_of(struct report_sites_carry *c, const struct snapshot *snap,
				 const struct snap_site *site)
{
	struct site_memo *m;

	if (!c || !c->ok || !snap || site < snap->sites || site >= snap->sites + snap->nr ||
	    site->proc)
		return NULL;
	m = &c->v[site - snap->sites];
	if ((m->used || m->unwrap_epoch) && (m->stack_id != site->stack_id || m->api != site->api))
		memo_drop(m);
	m->stack_id = site->stack_id;
	m->api = site->api;
	return m;
}

bool report_sites__unwrapped(struct report_sites_carry *c, const struct snapshot *snap,
			     const struct report_meta *meta, const struct modules *mods,
			     const struct snap_site *site, struct report_stack *st)
{
	struct site_memo *m = c && carry_ready(c, snap, meta, mods) ? memo_of(c, snap, site) : NULL;

	if (!m || m->unwrap_epoch != c->unwrap_epoch)
		return false;
	st->wrapper_ips = m->wrapper_ips;
	st->api = m->unwrap_api;
	return true;
}

void report_sites__keep_unwrapped(struct report_sites_carry *c, const struct snapshot *snap,
				  const struct snap_site *site, const struct report_stack *st)
{
	struct site_memo *m = memo_of(c, snap, site);

	if (!m || st->api > UINT8_MAX)
		return;
	m->wrapper_ips = st->wrapper_ips;
	m->unwrap_api = (uint8_t)st->api;
	m->unwrap_epoch = c->unwrap_epoch;
}

/* The kept site frame of site, if it still holds, lent to st. */
static bool memo_lend(const struct report_sites_carry *c, const struct site_memo *m,
		      const struct report_meta *meta, struct report_stack *st)
{
	if (!m->used)
		return false;
	if (m->native ? m->frame_epoch != c->unwrap_epoch :
			(!m->known && m->codes != codes_of(meta->pycode)))
		return false;
	st->site_frame = m->frame;
	st->site_frame_kept = true;
	st->site_keyed = true;
	st->site_key = m->key;
	st->site_own = m->own;
	st->site_import = m->import;
	st->site_runtime = m->runtime;
	st->site_preinit = m->preinit;
	return true;
}

/*
 * st's site frame, kept in m (which owns it from now, or shares ps's: a
 * frame of Python's). Its names are borrowed: a Python frame's from the
 * code table (pystack.h), kept as long as its id (carry_ready), a native
 * one's from the symbolizer and the module table (symbolize.h), which
 * outlive the carry's emptying at an exec (probes__clear: no reading
 * follows).
 */
static void memo_keep(struct report_sites_carry *c, struct site_memo *m,
		      const struct py_site *ps, struct report_stack *st)
{
	if (m->frame && !m->shared) {	/* one that no longer held: its frame goes */
		report__frame_free(m->frame);
		free(m->frame);
	}
	m->frame = st->site_frame;
	m->shared = ps != NULL;
	m->key = ps ? ps->key : sites__key(m->frame);
	st->site_keyed = true;
	st->site_key = m->key;
	m->used = true;
	m->native = !ps;
	m->frame_epoch = c->unwrap_epoch;
	m->known = ps && ps->known;
	m->own = st->site_own;
	m->import = st->site_import;
	m->runtime = st->site_runtime;
	m->preinit = st->site_preinit;
	m->codes = ps ? ps->codes : 0;
	st->site_frame_kept = true;
}

/*
 * What the Python stack of site gave, in *out: the carry's (found once,
 * while the code table holds it), or without one worked out in *here.
 * 0 or -ENOMEM.
 */
static int py_site_of(struct report_sites_carry *c, const struct snap_site *site,
		      const struct report_meta *meta, struct py_site *here,
		      const struct py_site **out)
{
	struct site_rules rules = rules_of(meta);
	const struct stack_blob *b = site->pystack;
	struct py_stack pybuf;
	struct py_site *ps = here;
	uint32_t at;

	if (c && idmap__get(&c->py_of, b->id, &at)) {
		ps = c->py[at];
		if (ps->known || ps->codes == codes_of(meta->pycode)) {
			*out = ps;
			return 0;
		}
	} else if (c) {
		if (vec__reserve_min(&c->py, &c->cap_py, c->nr_py + 1, sizeof(*c->py), 256) ||
		    !(ps = calloc(1, sizeof(*ps))))
			return -ENOMEM;
		if (idmap__put(&c->py_of, b->id, (uint32_t)c->nr_py)) {
			free(ps);
			return -ENOMEM;
		}
		c->py[c->nr_py++] = ps;
	}
	/* New, or the code table learnt code since and did not know all of its frames. */
	py_site_find(stack_blob__py(b, &pybuf), meta->pycode, &rules, ps);
	ps->id = b->id;
	*out = ps;
	return 0;
}

int report_sites__frames(struct report *r, const struct aggregate *agg, struct symbolizer *sym,
			 const struct modules *mods, const struct report_meta *meta,
			 const struct snapshot *snap, struct report_sites_carry *carry)
{
	bool kept = carry && carry_ready(carry, snap, meta, mods);
	int err = 0;

	for (size_t i = 0; i < r->nr_stacks && i < agg->nr && !err; i++) {
		const struct snap_site *site = agg->sites[i];
		const struct py_site *ps = NULL;
		struct py_site here;
		struct site_memo *m;
		bool native;

		if (r->stacks[i].site_frame_kept)	/* lent with its figures (report_sites__lend) */
			continue;
		m = kept ? memo_of(carry, snap, site) : NULL;
		if (m && memo_lend(carry, m, meta, &r->stacks[i]))
			continue;
		if (has_python(site))
			err = py_site_of(kept ? carry : NULL, site, meta, &here, &ps);
		if (!err)
			err = site_frame(site, ps, ps != &here, sym,
					 images__of(meta->images, site->proc, mods), meta,
					 &r->stacks[i], &native);
		if (!err && m && ((ps && ps->found && ps != &here) || native))
			memo_keep(carry, m, ps && ps->found ? ps : NULL, &r->stacks[i]);
	}
	return err;
}

void report_sites__prefetch(const struct report_sites_carry *c, const struct snapshot *snap,
			    const struct snap_site *site)
{
	if (c && c->ok && snap && c->reading == snap->reading && site >= snap->sites &&
	    site < snap->sites + snap->nr && (size_t)(site - snap->sites) < c->cap)
		__builtin_prefetch(&c->v[site - snap->sites], 1);
}

bool report_sites__lend(struct report_sites_carry *c, const struct snapshot *snap,
			const struct report_meta *meta, const struct modules *mods,
			const struct snap_site *site, struct report_stack *st)
{
	struct site_memo *m = c && carry_ready(c, snap, meta, mods) ? memo_of(c, snap, site) : NULL;

	return m && memo_lend(c, m, meta, st);
}

int report_sites__group(struct report *r, const struct report_meta *meta)
{
	size_t all = meta->all_stacks ? SIZE_MAX : 0;

	return sites__group(r, all ?: SITES_FILE_SITES, all ?: SITES_FILE_STACKS);
}
