// SPDX-License-Identifier: GPL-2.0
/*
 * The uprobe links: on the allocator's functions (an entry link per lane and
 * one return link per object, placed as placement.h decides), on the
 * dynamic linker, and their release, side by side.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "allocator/placement.h"
#include "probes.h"
#include "probes_internal.h"
#include "util/elfsym.h"
#include "util/fdclose.h"
#include "util/rootpath.h"
#include "util/vec.h"

/* Layout of bpf_attr.link_create for multi-uprobe links (probes_internal.h). */
#define UPROBE_MULTI_RETURN 1		/* BPF_F_UPROBE_MULTI_RETURN */

struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	__u32 pad;
};

/*
 * Entry probes go to one of three programs: free's and malloc's, the
 * hottest, have their own (no attach cookie to fetch, no switch), the rest
 * share api_enter. One link each, made in this order.
 */
enum lane { LANE_FREE, LANE_OTHER, LANE_MALLOC, LANES };

/* The probes on one object in one process: an entry link per lane, one return link. */
struct attachment {
	pid_t pid;
	dev_t dev;
	ino_t ino;
	uint64_t signature;	/* of its (offset, api) set, to tell a change */
	int entry_fds[LANES];
	int exit_fd;
	bool wanted;
	uint64_t execs;		/* the target's exec count when -v last named its probes */
	int file_fd;		/* O_PATH of the object: a child's links name it as /proc/self/fd/N */
	struct recipe entry[LANES], exit;
};

int probes_attach__link_uprobes(struct probes *p, int prog_fd, const char *path, const __u64 *offsets,
			 const __u64 *cookies, __u32 cnt, bool ret)
{
	return probes_attach__link_uprobes_pid(p, p->tgid, prog_fd, path, offsets, cookies, cnt, ret);
}

int probes_attach__link_uprobes_pid(struct probes *p, pid_t pid, int prog_fd, const char *path,
			     const __u64 *offsets, const __u64 *cookies, __u32 cnt, bool ret)
{
	struct uprobe_multi_attr attr = {
		.prog_fd = (__u32)prog_fd,
		.attach_type = probes_sample__attach_type(p, prog_fd),
		.path = (__u64)(unsigned long)path,
		.offsets = (__u64)(unsigned long)offsets,
		.cookies = (__u64)(unsigned long)cookies,
		.cnt = cnt,
		.multi_flags = ret ? UPROBE_MULTI_RETURN : 0,
		.pid = (__u32)pid,
	};
	int fd;

	p->tables_written = true;	/* before the link: its first hit may come at once */
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	if (fd < 0)
		return -errno;
	/* --follow: an exec'd image's link, made again for each process it forks. */
	if (pid != p->tgid)
		image_links__made(p, prog_fd, path, offsets, cookies, cnt, ret);
	return fd;
}

/* Is offset the entry of another function probed in the same object? */
static bool probed_entry(const struct allocator *a, size_t obj, uint64_t offset)
{
	for (size_t i = 0; i < a->nr; i++)
		if (a->probes[i].object == obj && a->probes[i].offset == offset)
			return true;
	return false;
}

/* How many argument registers the entry program reads: the regs column of alloc_apis.h. */
#define ARGS_REGS(api, name, kind, size, nmemb, ptr, bytes, regs, ...) [API_##api] = regs,
static const uint8_t api_regs[API__COUNT] = { MEMLEAK_APIS(ARGS_REGS) };
#undef ARGS_REGS

/* The argument registers the entry program reads (bpf/memleak.bpf.c, on_enter). */
static uint32_t args_read(__u32 api)
{
	static const uint32_t regs[] = {
		PLACEMENT_REG(PLACEMENT_RDI),
		PLACEMENT_REG(PLACEMENT_RDI) | PLACEMENT_REG(PLACEMENT_RSI),
		PLACEMENT_REG(PLACEMENT_RDI) | PLACEMENT_REG(PLACEMENT_RSI) |
			PLACEMENT_REG(PLACEMENT_RDX),
	};
	unsigned n = api < API__COUNT ? api_regs[api] : 1;

	return regs[(n ? n : 1) - 1];
}

/*
 * Where ap's probes go: at the first instruction the kernel emulates
 * (placement.h), which every call reaches from the entry with the arguments
 * the entry program reads intact; an allocating function's return probe
 * goes there too, so the call traps once on the way in. The kernel takes
 * over the return address at the stack pointer when that probe fires
 * (arch_uretprobe_hijack_return_addr), so for an allocating function the
 * stack pointer must not have moved yet: the return address is still on
 * top. The cookie carries the API and, in its upper half, how far the
 * stack pointer has moved (an entry-only probe past a push or a sub).
 */
static void probe_point(const struct probes *p, const struct allocator *a,
			const struct alloc_probe *ap, struct placement pl, __u64 *offset,
			__u64 *cookie)
{
	bool returns = ap->api < API__ALLOCATING;

	*offset = ap->offset;
	*cookie = ap->api;
	if (pl.skip && probed_entry(a, ap->object, ap->offset + pl.skip))
		pl = (struct placement){ .insn = "another function starts there" };
	if (pl.skip && returns && pl.sp_delta)
		pl = (struct placement){ .insn = "the stack pointer moves before any emulated instruction, and a return probe needs the return address on top" };
	if (p->verbose)
		fprintf(stderr, "memleakbpf:   %s in %s: %s at +%u (%s)\n", ap->symbol, ap->path,
			returns ? "entry and return probes" : "probe", pl.skip, pl.insn);
	*offset += pl.skip;
	*cookie |= (__u64)pl.sp_delta << 32;
}

/* Calls that entered before the last entry probe return within this much. */
#define ATTACH_SETTLE_NS 20000000ull

static void settle_after(struct probes *p, uint64_t ns)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);	/* bpf_ktime_get_ns()'s clock */
	bpfmaps__set_settle_until(p->skel, (uint64_t)now.tv_sec * 1000000000ull +
					   (uint64_t)now.tv_nsec + ns);
}

/* When attach_object places a function's entry probe: 0 first. */
static int attach_rank(__u32 api)
{
	if (api >= API__ALLOCATING)
		return 0;
	if (api == API_REALLOC || api == API_REALLOCARRAY || api == API_MREMAP ||
	    api == API_XALLOCX)
		return 1;
	return 2;
}

static enum lane lane_of(__u32 api)
{
	return api == API_FREE ? LANE_FREE : api == API_MALLOC ? LANE_MALLOC : LANE_OTHER;
}

static int lane_prog(const struct probes *p, enum lane lane)
{
	const struct memleak_bpf *skel = p->skel;

	if (lane != LANE_FREE && p->sample.session)
		return bpf_program__fd(lane == LANE_MALLOC ? skel->progs.api_malloc_session :
				       skel->progs.api_session);
	return bpf_program__fd(lane == LANE_FREE ? skel->progs.api_free :
			       lane == LANE_MALLOC ? skel->progs.api_malloc : skel->progs.api_enter);
}

/* Emptied, not only freed: the links are taken twice at the end (probes__hand_links, probes__free). */
static void free_recipes(struct attachment *at)
{
	for (int l = 0; l < LANES; l++) {
		free(at->entry[l].offsets);
		free(at->entry[l].cookies);
		at->entry[l] = (struct recipe){ 0 };
	}
	free(at->exit.offsets);
	free(at->exit.cookies);
	at->exit = (struct recipe){ 0 };
	if (at->file_fd >= 0)
		close(at->file_fd);
	at->file_fd = -1;
}

/*
 * --follow: what the links of at were made of, kept to make them again for
 * each child, on the same file (held open: the target may be gone by then).
 */
static int keep_recipes(struct probes *p, struct attachment *at, const char *path,
			__u64 (*offsets)[], __u64 (*cookies)[], const __u32 *n, size_t stride,
			const __u64 *ret_offsets, const __u64 *ret_cookies, __u32 nret)
{
	int err = 0;

	if (!p->follow.on)
		return 0;
	at->file_fd = open(path, O_PATH | O_CLOEXEC);
	if (at->file_fd < 0)
		return -errno;
	for (int l = 0; l < LANES && !err; l++)
		err = recipe__keep(&at->entry[l], (const __u64 *)offsets + l * stride,
				  (const __u64 *)cookies + l * stride, n[l]);
	return err ?: recipe__keep(&at->exit, ret_offsets, ret_cookies, nret);
}

/*
 * The probe points of one object, by lane, and the returns of the
 * allocating ones. The kernel places a link's probes in array order, and
 * the links come in lane order. Releasing functions first, then the
 * resizing ones (which release the old block), then the rest: attaching to
 * a running process, a block allocated before its allocator's probe is in
 * place is merely unknown (its free counts as untracked), while a free or
 * realloc missed after its allocation was seen would leave a block
 * outstanding that is not.
 */
/* Where each probe of object obj would go (placement.h), its file read once: into pl[]. */
static void place_object(const struct probes *p, const struct allocator *a, size_t obj,
			 struct placement *pl)
{
	uint64_t entries[a->nr];
	uint32_t keeps[a->nr];
	struct placement got[a->nr];
	size_t of[a->nr], n = 0;

	for (size_t i = 0; i < a->nr; i++) {
		pl[i] = (struct placement){ .insn = "forced by MEMLEAKBPF_PROBE_AT_ENTRY" };
		if (a->probes[i].object != obj || p->links.at_entry)
			continue;
		entries[n] = a->probes[i].offset;
		keeps[n] = args_read(a->probes[i].api);
		of[n++] = i;
	}
	if (!n)
		return;
	placement__decide_all(a->objects[obj].open_path, entries, keeps, n, got);
	for (size_t k = 0; k < n; k++)
		pl[of[k]] = got[k];
}

static void plan_object(const struct probes *p, const struct allocator *a, size_t obj,
			__u64 (*offsets)[a->nr], __u64 (*cookies)[a->nr], __u32 *n,
			__u64 *ret_offsets, __u64 *ret_cookies, __u32 *nret)
{
	struct placement pl[a->nr];

	place_object(p, a, obj, pl);
	for (int rank = 0; rank < 3; rank++) {
		for (size_t i = 0; i < a->nr; i++) {
			const struct alloc_probe *ap = &a->probes[i];
			enum lane l = lane_of(ap->api);

			if (ap->object != obj || attach_rank(ap->api) != rank)
				continue;
			probe_point(p, a, ap, pl[i], &offsets[l][n[l]], &cookies[l][n[l]]);
			/* A session program takes its returns itself. */
			if (ap->api < API__ALLOCATING && !p->sample.session) {
				ret_offsets[*nret] = offsets[l][n[l]];
				ret_cookies[(*nret)++] = ap->api;
			}
			n[l]++;
		}
	}
}

/* Entry probes on every API function of one object, returns on the allocating ones. */
static int attach_object(struct probes *p, const struct allocator *a, size_t obj,
			 struct attachment *at)
{
	__u64 offsets[LANES][a->nr], cookies[LANES][a->nr], ret_offsets[a->nr], ret_cookies[a->nr];
	__u32 n[LANES] = { 0 }, nret = 0;
	const char *path = a->objects[obj].open_path;

	plan_object(p, a, obj, offsets, cookies, n, ret_offsets, ret_cookies, &nret);
	at->exit_fd = -1;
	for (int l = 0; l < LANES; l++)
		at->entry_fds[l] = -1;
	/*
	 * Returns first: a call seen entering must be seen returning. Until
	 * every entry probe is in place too (they come one function at a
	 * time), a return without its entry is the attach's doing.
	 */
	bpfmaps__set_settle_until(p->skel, UINT64_MAX);
	if (nret) {
		at->exit_fd = probes_attach__link_uprobes(p, bpf_program__fd(p->skel->progs.api_exit),
						   path, ret_offsets, ret_cookies, nret, true);
		if (at->exit_fd < 0)
			return at->exit_fd;
	}
	for (int l = 0; l < LANES; l++) {
		if (!n[l])
			continue;
		at->entry_fds[l] = probes_attach__link_uprobes(p, lane_prog(p, l), path, offsets[l],
							cookies[l], n[l], false);
		if (at->entry_fds[l] < 0)
			break;
	}
	settle_after(p, ATTACH_SETTLE_NS);
	for (int l = 0; l < LANES; l++)
		if (at->entry_fds[l] < 0 && n[l])
			return at->entry_fds[l];
	return keep_recipes(p, at, path, offsets, cookies, n, a->nr, ret_offsets, ret_cookies,
			    nret);
}

/* One recipe's link for pid into fds[*n], unless it has no probe. */
/* prog linked at r's points in the file at path, for pid, appended to fds[*n]. */
static int link_again(struct probes *p, pid_t pid, int prog_fd, const char *path,
		      const struct recipe *r, bool ret, int *fds, size_t *n)
{
	int fd;

	if (!r->cnt)
		return 0;
	fd = probes_attach__link_uprobes_pid(p, pid, prog_fd, path, r->offsets, r->cookies, r->cnt, ret);
	if (fd < 0)
		return fd;
	fds[(*n)++] = fd;
	return 0;
}

int probes_attach__link_again(struct probes *p, pid_t pid, int prog_fd, int file_fd,
		       const struct recipe *r, bool ret, int *fds, size_t *n)
{
	char path[64];
	int err = rootpath__fd_path(file_fd, path, sizeof(path));

	return err ?: link_again(p, pid, prog_fd, path, r, ret, fds, n);
}

/* The links of one object, made again for a followed child: returns first, as at attach. */
static int link_object(struct probes *p, const struct attachment *at, pid_t pid, int *fds,
		       size_t *n)
{
	int err = probes_attach__link_again(p, pid, bpf_program__fd(p->skel->progs.api_exit), at->file_fd,
				     &at->exit, true, fds, n);

	for (int l = 0; l < LANES && !err; l++)
		err = probes_attach__link_again(p, pid, lane_prog(p, l), at->file_fd, &at->entry[l], false,
					 fds, n);
	return err;
}

size_t probes_attach__child_links_max(const struct probes *p)
{
	return p->links.nr * (LANES + 1);
}

int probes_attach__link_child(struct probes *p, pid_t pid, int *fds, size_t *n)
{
	int err = 0;

	*n = 0;
	for (size_t i = 0; i < p->links.nr && !err; i++)
		if (p->links.v[i].pid == p->tgid && p->links.v[i].file_fd >= 0)
			err = link_object(p, &p->links.v[i], pid, fds, n);
	return err;
}

size_t probes_attach__allocator_links_max(const struct allocator *a)
{
	return a->nr_objects * (LANES + 1);
}

/* One object's links for pid: returns first, as at attach (the process is stopped). */
static int link_object_pid(struct probes *p, const struct allocator *a, size_t obj, pid_t pid,
			   int *fds, size_t *nfds)
{
	__u64 offsets[LANES][a->nr], cookies[LANES][a->nr], ret_offsets[a->nr], ret_cookies[a->nr];
	__u32 n[LANES] = { 0 }, nret = 0;
	const char *path = a->objects[obj].open_path;
	struct recipe r = { .offsets = ret_offsets, .cookies = ret_cookies, .cnt = nret };
	int err;

	plan_object(p, a, obj, offsets, cookies, n, ret_offsets, ret_cookies, &nret);
	r.cnt = nret;
	err = link_again(p, pid, bpf_program__fd(p->skel->progs.api_exit), path, &r, true, fds,
			 nfds);
	for (int l = 0; l < LANES && !err; l++) {
		r = (struct recipe){ .offsets = offsets[l], .cookies = cookies[l], .cnt = n[l] };
		err = link_again(p, pid, lane_prog(p, l), path, &r, false, fds, nfds);
	}
	return err;
}

int probes_attach__link_allocator_pid(struct probes *p, const struct allocator *a, pid_t pid, int *fds,
			       size_t *n)
{
	int err = 0;

	for (size_t obj = 0; obj < a->nr_objects && !err; obj++)
		err = link_object_pid(p, a, obj, pid, fds, n);
	return err;
}

/* _dl_debug_state's offset in the dynamic linker at path. */
static int dl_debug_offset(const char *path, __u64 *off)
{
	struct elf_file *ef;
	uint64_t vaddr, offset;
	int err = elf_file__open(path, &ef);

	if (!err)
		err = elf_file__find_func(ef, "_dl_debug_state", true, &vaddr, &offset);
	elf_file__close(ef);
	*off = offset;
	return err;
}

int probes_attach__link_dl_pid(struct probes *p, const char *path, pid_t pid)
{
	__u64 off = 0, cookie = 0;
	int err = dl_debug_offset(path, &off);

	if (err)
		return err;
	return probes_attach__link_uprobes_pid(p, pid, bpf_program__fd(p->skel->progs.dl_debug_state),
					path, &off, &cookie, 1, false);
}

static uint64_t object_signature(const struct allocator *a, size_t obj)
{
	uint64_t h = 1469598103934665603ull;	/* FNV-1a over (offset, api) */

	for (size_t i = 0; i < a->nr; i++) {
		if (a->probes[i].object != obj)
			continue;
		h = (h ^ a->probes[i].offset) * 1099511628211ull;
		h = (h ^ a->probes[i].api) * 1099511628211ull;
	}
	return h;
}

/* Move at's open link fds into fds (room for LANES + 1); how many. */
static size_t take_links(struct attachment *at, int *fds)
{
	size_t n = 0;

	for (int l = 0; l < LANES; l++) {
		if (at->entry_fds[l] >= 0)
			fds[n++] = at->entry_fds[l];
		at->entry_fds[l] = -1;
	}
	if (at->exit_fd >= 0)
		fds[n++] = at->exit_fd;
	at->exit_fd = -1;
	return n;
}

static void detach(struct attachment *at)
{
	int fds[LANES + 1];

	fdclose__together(fds, take_links(at, fds));
	free_recipes(at);
}

static struct attachment *find_attachment(struct probes *p, const struct stat *st, uint64_t sig)
{
	for (size_t i = 0; i < p->links.nr; i++) {
		struct attachment *at = &p->links.v[i];

		if (at->pid == p->tgid && at->dev == st->st_dev && at->ino == st->st_ino &&
		    at->signature == sig)
			return at;
	}
	return NULL;
}

static int attach_new(struct probes *p, const struct allocator *a, size_t obj,
		      const struct stat *st, uint64_t sig)
{
	struct attachment *at;
	int err;

	if (vec__reserve(&p->links.v, &p->links.cap, p->links.nr + 1, sizeof(*at)))
		return -ENOMEM;
	at = &p->links.v[p->links.nr];
	*at = (struct attachment){ .pid = p->tgid, .dev = st->st_dev, .ino = st->st_ino,
				   .signature = sig, .wanted = true, .file_fd = -1,
				   .execs = counters__read(p, CNT_EXECS) };
	err = attach_object(p, a, obj, at);
	if (err) {
		fprintf(stderr, "memleakbpf: cannot attach uprobes to %s: %s%s\n",
			a->objects[obj].path, strerror(-err),
			err == -EINVAL ? " (multi-uprobe links need Linux 6.6 or later)" : "");
		detach(at);
		return err;
	}
	p->links.nr++;
	return 0;
}

/*
 * -v: the probes of an object the target's new image maps as the old one
 * did, kept through its exec, named as newly placed ones are (probe_point).
 */
static void say_kept(const struct probes *p, const struct allocator *a, size_t obj,
		     struct attachment *at)
{
	uint64_t execs = counters__read(p, CNT_EXECS);

	if (!p->verbose || at->execs == execs)
		return;
	at->execs = execs;
	for (size_t i = 0; i < a->nr; i++)
		if (a->probes[i].object == obj)
			fprintf(stderr, "memleakbpf:   %s in %s: probes kept through the exec (the same file, the same functions)\n",
				a->probes[i].symbol, a->probes[i].path);
}

/* Detach what is no longer wanted, compacting the array; the links closed together. */
static void detach_unwanted(struct probes *p)
{
	int fds[(LANES + 1) * p->links.nr + 1];
	size_t kept = 0, n = 0;

	for (size_t i = 0; i < p->links.nr; i++) {
		if (!p->links.v[i].wanted) {
			n += take_links(&p->links.v[i], fds + n);
			free_recipes(&p->links.v[i]);
			continue;
		}
		p->links.v[kept++] = p->links.v[i];
	}
	p->links.nr = kept;
	fdclose__together(fds, n);
}

void probes_attach__detach_allocator(struct probes *p)
{
	/* A handed-over shell's links stay, as in probes_attach__allocator. */
	for (size_t i = 0; i < p->links.nr; i++)
		p->links.v[i].wanted = p->links.v[i].pid != p->tgid;
	detach_unwanted(p);
}

int probes_attach__allocator(struct probes *p, const struct allocator *a)
{
	int err;

	/* Links of a process we handed over from stay until the end:
	 * detaching costs a grace period each, and BPF ignores that process. */
	for (size_t i = 0; i < p->links.nr; i++)
		p->links.v[i].wanted = p->links.v[i].pid != p->tgid;
	for (size_t obj = 0; obj < a->nr_objects; obj++) {
		uint64_t sig = object_signature(a, obj);
		struct attachment *at;
		struct stat st;

		if (stat(a->objects[obj].open_path, &st)) {
			err = -errno;
			fprintf(stderr, "memleakbpf: cannot read %s: %s\n", a->objects[obj].path,
				strerror(errno));
			return err;
		}
		at = find_attachment(p, &st, sig);
		if (at) {
			at->wanted = true;
			say_kept(p, a, obj, at);
			continue;
		}
		err = attach_new(p, a, obj, &st, sig);
		if (err)
			return err;
	}
	detach_unwanted(p);
	return (int)a->nr;
}

/*
 * --follow: the dynamic linker's file, for its children's links (follow.c):
 * a fork that loads a library the target has not is held at its events as
 * well, for the library's names. Without it they go unnamed.
 */
static void keep_dl_file(struct probes *p, const char *path, __u64 off)
{
	if (!p->follow.on)
		return;
	if (p->dl.file >= 0)
		close(p->dl.file);
	p->dl.file = open(path, O_PATH | O_CLOEXEC);
	p->dl.offset = off;
}

int probes_attach__dl(struct probes *p, const char *path)
{
	struct stat st;
	__u64 off, cookie = 0;
	int err;

	if (stat(path, &st))
		return -errno;
	if (p->dl.fd >= 0 && p->dl.pid == p->tgid && p->dl.dev == st.st_dev &&
	    p->dl.ino == st.st_ino)
		return 0;
	err = dl_debug_offset(path, &off);
	if (!err) {
		err = probes_attach__link_uprobes(p, bpf_program__fd(p->skel->progs.dl_debug_state), path,
					   &off, &cookie, 1, false);
	}
	if (err < 0) {
		fprintf(stderr, "memleakbpf: cannot probe _dl_debug_state in the dynamic linker %s: %s\n",
			path, strerror(-err));
		return err;
	}
	if (p->dl.fd >= 0)
		close(p->dl.fd);
	p->dl.fd = err;
	p->dl.pid = p->tgid;
	p->dl.dev = st.st_dev;
	p->dl.ino = st.st_ino;
	keep_dl_file(p, path, off);
	return 0;
}

int probes_attach__link_dl_child(struct probes *p, pid_t pid, int *fds, size_t *n)
{
	__u64 cookie = 0;
	struct recipe r = { &p->dl.offset, &cookie, 1 };

	if (p->dl.file < 0)
		return 0;	/* a static target, or not followed */
	return probes_attach__link_again(p, pid, bpf_program__fd(p->skel->progs.dl_debug_state),
				  p->dl.file, &r, false, fds, n);
}

size_t probes_attach__links_max(const struct probes *p)
{
	return (LANES + 1) * p->links.nr + 5;
}

/* Every link's fd, the Python exit probes' and the dynamic linker's too, moved into fds. */
size_t probes_attach__take_all(struct probes *p, int *fds)
{
	size_t n = 0;

	for (size_t i = 0; i < p->links.nr; i++) {
		n += take_links(&p->links.v[i], fds + n);
		free_recipes(&p->links.v[i]);
	}
	for (int i = 0; i < 2; i++) {
		if (p->py_exit.fds[i] >= 0)
			fds[n++] = p->py_exit.fds[i];
		if (p->py_exit.files[i] >= 0)
			close(p->py_exit.files[i]);
		p->py_exit.files[i] = -1;
	}
	if (p->py_exit.dealloc_fd >= 0)
		fds[n++] = p->py_exit.dealloc_fd;
	p->py_exit.dealloc_fd = -1;
	if (p->dl.fd >= 0)
		fds[n++] = p->dl.fd;
	if (p->dl.file >= 0)
		close(p->dl.file);
	p->dl.file = -1;
	if (p->exit_stop.fd >= 0)
		fds[n++] = p->exit_stop.fd;
	p->py_exit.fds[0] = p->py_exit.fds[1] = p->dl.fd = p->exit_stop.fd = -1;
	return n;
}

/* Every link, closed together. */
void probes_attach__detach_all(struct probes *p)
{
	int fds[probes_attach__links_max(p)];

	fdclose__together(fds, probes_attach__take_all(p, fds));
}
