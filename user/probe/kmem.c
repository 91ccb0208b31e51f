// SPDX-License-Identifier: GPL-2.0
/*
 * -k: bpf/kmem.bpf.c, sized from the options, checked against the memory
 * available, loaded and attached to the kernel's allocation tracepoints
 * through BPF links (tp_btf), which need no tracefs. A tracepoint this
 * kernel lacks is left out and said; the others are traced.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "clock.h"
#include "kmem.h"
#include "kmem_internal.h"
#include "kmem_maps.h"
#include "mapfit.h"
#include "probes_internal.h"
#include "model/report.h"

static uint64_t cost_of(void *skel, uint32_t max_allocs, uint32_t stacks)
{
	kmem_maps__size(skel, max_allocs, stacks);
	return probes__maps_cost(((struct kmem_bpf *)skel)->obj);
}

int kmem__check_memory(const struct kmem_config *cfg, char *err, size_t errlen)
{
	struct kmem_bpf *skel = kmem_bpf__open();
	struct mapfit f = { cost_of, skel, cfg->max_allocs, cfg->stacks };
	int ret = skel ? mapfit__check(&f, "-k: ", err, errlen) : 0;

	kmem_bpf__destroy(skel);
	return ret;
}

/* "tp_btf/kmalloc" -> "kmalloc". */
static const char *point_of(const struct bpf_program *prog)
{
	const char *sec = bpf_program__section_name(prog), *slash = strchr(sec, '/');

	return slash ? slash + 1 : sec;
}

/* Tracepoints this kernel does not have are not loaded: the others still are. */
static void drop_missing(struct kmem_bpf *skel)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct bpf_program *prog;
	char name[128];

	if (!vmlinux)
		return;	/* loading will say what is wrong */
	bpf_object__for_each_program(prog, skel->obj) {
		bool tp = !strncmp(bpf_program__section_name(prog), "tp_btf/", 7);

		snprintf(name, sizeof(name), "%s%s", tp ? "btf_trace_" : "", point_of(prog));
		if (btf__find_by_name_kind(vmlinux, name, tp ? BTF_KIND_TYPEDEF : BTF_KIND_FUNC) >= 0)
			continue;
		fprintf(stderr, "memleakbpf: -k: this kernel has no %s %s: not traced\n",
			tp ? "tracepoint" : "function", point_of(prog));
		bpf_program__set_autoload(prog, false);
	}
	btf__free(vmlinux);
}

static int attach(struct kmem *k)
{
	struct bpf_program *prog;
	struct bpf_link *link;
	int err;

	bpf_object__for_each_program(prog, k->skel->obj) {
		if (!bpf_program__autoload(prog))
			continue;
		link = bpf_program__attach(prog);
		if (!link) {
			err = -errno;
			fprintf(stderr, "memleakbpf: -k: cannot attach to %s: %s\n",
				point_of(prog), strerror(-err));
			return err;
		}
		k->links[k->nr_links] = link;
		k->points[k->nr_links++] = point_of(prog);
	}
	return 0;
}

/* The programs on functions (fentry), not on tracepoints: some kernels refuse them. */
static bool on_function(const struct bpf_program *prog)
{
	return !strncmp(bpf_program__section_name(prog), "fentry/", 7);
}

static void drop_functions(struct kmem_bpf *skel)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj)
		if (on_function(prog))
			bpf_program__set_autoload(prog, false);
}

static int open_skel(const struct kmem_config *cfg, struct kmem *k, bool functions)
{
	k->skel = kmem_bpf__open();
	if (!k->skel)
		return -errno ?: -ENOMEM;
	k->skel->rodata->min_size = cfg->min_size;
	k->skel->rodata->max_size = cfg->max_size;
	k->skel->rodata->page_size = (uint64_t)sysconf(_SC_PAGESIZE);
	k->skel->rodata->self_tgid = (uint32_t)getpid();
	k->skel->rodata->bench_floor = cfg->bench_floor;
	k->skel->rodata->bench_no_stack = cfg->bench_no_stack;
	kmem_maps__size(k->skel, cfg->max_allocs, cfg->stacks);
	drop_missing(k->skel);
	if (!functions)
		drop_functions(k->skel);
	return 0;
}

/*
 * With the frees that have no tracepoint (bpf/kmem.bpf.c), if this kernel
 * lets programs on functions load (fentry: a kernel without ftrace does
 * not); else without them, and said: those frees go unseen.
 */
static int load_skel(const struct kmem_config *cfg, struct kmem *k)
{
	int err = open_skel(cfg, k, true);
	libbpf_print_fn_t was;

	if (err)
		return err;
	was = libbpf_set_print(NULL);	/* its refusal is said below, in one line */
	err = kmem_bpf__load(k->skel);
	libbpf_set_print(was);
	if (!err)
		return 0;
	fprintf(stderr, "memleakbpf: -k: no program on kmem_cache_free_bulk and kvfree_call_rcu here (%s): objects freed in bulk or by kfree_rcu stay outstanding until their address is reused (counted as replaced)\n",
		strerror(-err));
	kmem_bpf__destroy(k->skel);
	err = open_skel(cfg, k, false);
	return err ?: kmem_bpf__load(k->skel);
}

int kmem__load(const struct kmem_config *cfg, struct kmem **out)
{
	struct kmem *k = calloc(1, sizeof(*k));
	int err;

	if (!k)
		return -ENOMEM;
	err = load_skel(cfg, k);
	if (err)
		fprintf(stderr, "memleakbpf: -k: cannot load the kernel's probes: %s\n",
			strerror(-err));
	if (!err && cfg->verbose) {
		char size[32];

		fprintf(stderr, "memleakbpf: -k: tables for %u live blocks and %u stacks: %s of kernel memory\n",
			cfg->max_allocs, cfg->stacks,
			report__human_size(probes__maps_cost(k->skel->obj), size, sizeof(size)));
	}
	if (!err) {
		k->clock = clock__feed_start(kmem_maps__now_ns(k->skel));
		err = k->clock ? attach(k) : -errno;
	}
	if (err) {
		kmem__free(k);
		return err;
	}
	*out = k;
	return 0;
}

size_t kmem__points(const struct kmem *k)
{
	return k->nr_links;
}

const char *kmem__point(const struct kmem *k, size_t i)
{
	return i < k->nr_links ? k->points[i] : NULL;
}

void kmem__free(struct kmem *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->nr_links; i++)
		bpf_link__destroy(k->links[i]);
	clock__feed_stop(k->clock);	/* after the links: no program reads the word then */
	kmem_snapshot__free_stacks(k);
	kmem_bpf__destroy(k->skel);
	free(k);
}
