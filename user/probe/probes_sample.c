// SPDX-License-Identifier: GPL-2.0
/*
 * --sample and -s on the probes' side: the BPF tunables, the calls BPF
 * counted at their entry, and a block's weight as BPF computes it
 * (bpf/sample.h), for the blocks user space takes out of the tables itself.
 */
#include <linux/types.h>
#include "memleak.h"
#include "sample.h"
#include "probes.h"
#include "probes_internal.h"

/*
 * -s N: a block is taken when a 32-bit draw is below T = 2^32/N, rounded;
 * its weight is then 2^32/T exactly (in 2^-16 units), not N, so that the
 * rounding of T biases nothing.
 */
void probes__set_sampling(struct probes *p, const struct probes_config *cfg)
{
	__u64 t;

	p->sample_mode = cfg->sample_mode;
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

void probes__sample_calls(const struct probes *p, uint64_t *calls, uint64_t *bytes,
			  uint64_t *sampled)
{
	const struct memleak_calls *c = p->skel->bss->entry_calls;

	*calls = *bytes = *sampled = 0;
	for (int i = 0; i < MEMLEAK_SITE_SHARDS; i++) {
		*calls += __atomic_load_n(&c[i].calls, __ATOMIC_RELAXED);
		*bytes += __atomic_load_n(&c[i].bytes, __ATOMIC_RELAXED);
		*sampled += __atomic_load_n(&c[i].sampled, __ATOMIC_RELAXED);
	}
}

void probes__block_weight(const struct probes *p, uint32_t api, uint64_t size,
			  struct sample_weight *w)
{
	const typeof(*p->skel->rodata) *ro = p->skel->rodata;

	if (p->sample_mode == SAMPLE_NONE || MEMLEAK_KIND_OF(api) == KIND_MMAP)
		*w = (struct sample_weight){ size, p->sample_mode ? MEMLEAK_WEIGHT_ONE : 1, 0 };
	else if (p->sample_mode == SAMPLE_BYTES)
		sample_bytes_weight(w, size, ro->sample_mean);
	else
		sample_count_weight(w, size, ro->sample_per_block);
}
