// SPDX-License-Identifier: GPL-2.0
/*
 * --sample and -s on the probes' side: the BPF tunables, the calls BPF
 * counted at their entry, and a block's weight as BPF computes it
 * (bpf/sample.h), for the blocks user space takes out of the tables itself.
 */
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "memleak.h"
#include "sample.h"
#include "probes.h"
#include "probes_internal.h"

/*
 * -s N: a block is taken when a 32-bit draw is below T = 2^32/N, rounded;
 * its weight is then 2^32/T exactly (in 2^-16 units), not N, so that the
 * rounding of T biases nothing.
 */
/* Does this kernel attach uprobe sessions (BPF_TRACE_UPROBE_SESSION, 6.13)? Its BTF says. */
static bool can_session(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	const struct btf_type *t;
	const struct btf_enum *e;
	bool found = false;
	int id;

	if (!btf)
		return false;
	id = btf__find_by_name_kind(btf, "bpf_attach_type", BTF_KIND_ENUM);
	t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	e = t ? btf_enum(t) : NULL;
	for (int i = 0; e && i < btf_vlen(t) && !found; i++)
		found = !strcmp(btf__name_by_offset(btf, e[i].name_off), "BPF_TRACE_UPROBE_SESSION");
	btf__free(btf);
	return found;
}

/*
 * Sampling on a kernel that has them: each allocating function's entry and
 * return as one session program, whose entry asks for no return probe when
 * it does not sample the call (bpf/sample_session.bpf.h): malloc's lane
 * api_malloc_session, the others' api_session; free keeps its entry probe.
 * Elsewhere, and in exact mode, the links of every mode: an entry and a
 * return probe.
 */
static void set_session(struct probes *p, const struct probes_config *cfg)
{
	p->sample.session = cfg->sample_mode && !cfg->no_session && !cfg->bench_floor && can_session();
	if (cfg->sample_mode && cfg->verbose)
		fprintf(stderr, "memleakbpf:   sampling: %s\n", p->sample.session ?
			"allocating functions as uprobe sessions: a call not sampled traps once" :
			"no uprobe sessions (Linux 6.13): a call not sampled traps twice, as any");
	bpf_program__set_autoload(p->skel->progs.api_malloc_session, p->sample.session);
	bpf_program__set_autoload(p->skel->progs.api_session, p->sample.session);
	/*
	 * Sessions take both ends of every allocating call: the plain entry
	 * and return programs are never attached, and the kernel's verifier
	 * need not check them (api_exit's 47,000 instructions).
	 */
	bpf_program__set_autoload(p->skel->progs.api_enter, !p->sample.session);
	bpf_program__set_autoload(p->skel->progs.api_malloc, !p->sample.session);
	bpf_program__set_autoload(p->skel->progs.api_exit, !p->sample.session);
	bpf_program__set_expected_attach_type(p->skel->progs.api_malloc_session,
					      PROBES_UPROBE_SESSION);
	bpf_program__set_expected_attach_type(p->skel->progs.api_session, PROBES_UPROBE_SESSION);
}

__u32 probes_sample__attach_type(const struct probes *p, int prog_fd)
{
	if (p->sample.session && (prog_fd == bpf_program__fd(p->skel->progs.api_malloc_session) ||
			   prog_fd == bpf_program__fd(p->skel->progs.api_session)))
		return PROBES_UPROBE_SESSION;
	return PROBES_UPROBE_MULTI;
}

void probes_sample__set(struct probes *p, const struct probes_config *cfg)
{
	__u64 t;

	set_session(p, cfg);
	p->sample.mode = cfg->sample_mode;
	p->skel->rodata->sample_mode = cfg->sample_mode;
	p->skel->rodata->sample_seed = cfg->sample_seed;
	if (cfg->sample_mode == SAMPLE_BYTES) {
		p->skel->rodata->sample_mean = cfg->sample_value;
	} else if (cfg->sample_mode == SAMPLE_COUNT) {
		t = ((1ULL << 32) + cfg->sample_value / 2) / cfg->sample_value;
		p->skel->rodata->sample_mean = cfg->sample_value;
		p->skel->rodata->sample_threshold = t;
		p->skel->rodata->sample_per_block = ((1ULL << 48) + t / 2) / t;
	}
}

void probes_sample__calls(const struct probes *p, uint64_t *calls, uint64_t *bytes,
			  uint64_t *sampled)
{
	const struct memleak_calls *c = bpfmaps__entry_calls(p->skel);

	*calls = *bytes = *sampled = 0;
	for (int i = 0; i < MEMLEAK_SITE_SHARDS; i++) {
		*calls += __atomic_load_n(&c[i].calls, __ATOMIC_RELAXED);
		*bytes += __atomic_load_n(&c[i].bytes, __ATOMIC_RELAXED);
		*sampled += __atomic_load_n(&c[i].sampled, __ATOMIC_RELAXED);
	}
}

void probes_sample__block_weight(const struct probes *p, uint32_t api, uint64_t size,
			  struct sample_weight *w)
{
	const typeof(*p->skel->rodata) *ro = p->skel->rodata;

	if (p->sample.mode == SAMPLE_NONE || MEMLEAK_KIND_OF(api) == KIND_MMAP)
		*w = (struct sample_weight){ size, p->sample.mode ? MEMLEAK_WEIGHT_ONE : 1, 0 };
	else if (p->sample.mode == SAMPLE_BYTES)
		sample_bytes_weight(w, size, ro->sample_mean);
	else
		sample_count_weight(w, size, ro->sample_per_block);
}
