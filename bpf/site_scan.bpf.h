/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The live slots of the site table, copied out for a report's reading
 * (memleak.h, struct site_scan_rec): a program user space runs
 * (BPF_PROG_TEST_RUN) over a range of slots, until the range ends or the
 * output array is full; it says where it stopped. The groups that never
 * held a site are passed over as the user-space walk passes them.
 */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct site_scan_rec);
	__uint(max_entries, MEMLEAK_SCAN_RECS);
} site_scan SEC(".maps");

/* One count summed over the slot's copies (off: its offset in struct site_counts). */
static __always_inline __u64 scan_count(struct site_slot *s, __u32 off)
{
	__u64 v = 0;

	for (__u32 k = 0; k < MEMLEAK_SITE_SHARDS; k++) {
		if (k > site_shard_mask)
			break;
		v += *(volatile __u64 *)((void *)&s->counts[k] + off);
	}
	return v;
}

#define SCAN_COUNT(s, field) scan_count(s, __builtin_offsetof(struct site_counts, field))

/* The slot's copies summed, as site_slot__counts does: every free before any allocation. */
static __always_inline void scan_sum(struct site_slot *s, struct site_counts *sum)
{
	sum->freed_bytes = SCAN_COUNT(s, freed_bytes);
	sum->freed_allocs = SCAN_COUNT(s, freed_allocs);
	sum->freed_samples = SCAN_COUNT(s, freed_samples);
	sum->freed_var = SCAN_COUNT(s, freed_var);
	sum->total_bytes = SCAN_COUNT(s, total_bytes);
	sum->total_allocs = SCAN_COUNT(s, total_allocs);
	sum->total_samples = SCAN_COUNT(s, total_samples);
	sum->total_var = SCAN_COUNT(s, total_var);
}

/*
 * Where the scan is: in .bss, not in the loop's stack, whose exact values
 * the verifier would follow round after round without its states ever
 * converging. One scan at a time (user space holds the tables' lock).
 */
__u32 scan_next, scan_to, scan_n;

/* One slot (a bpf_loop round): 1 when the range or the room ends. */
static long scan_one(__u32 round, void *unused)
{
	__u32 i = *(volatile __u32 *)&scan_next, n = *(volatile __u32 *)&scan_n;
	struct site_scan_rec *r;
	struct site_slot *s;
	__u64 key;

	if (i >= *(volatile __u32 *)&scan_to || n >= MEMLEAK_SCAN_RECS)
		return 1;
	/* A group that never held a site: passed over, as the user-space walk passes it. */
	if (!group_marked(site_groups, MEMLEAK_SITE_GROUP_WORDS, (i & site_mask) >> site_group_shift)) {
		scan_next = (((i & site_mask) >> site_group_shift) + 1) << site_group_shift;
		return 0;
	}
	scan_next = i + 1;
	s = site_at(i);
	if (!s)
		return 1;
	key = *(volatile __u64 *)&s->key;
	if (key == MEMLEAK_SITE_EMPTY || key >= MEMLEAK_SITE_RETIRING ||
	    !*(volatile __u32 *)&s->ready)
		return 0;
	r = bpf_map_lookup_elem(&site_scan, &n);
	if (!r)
		return 1;
	r->slot = i;
	r->api = s->api;
	r->stack_id = s->stack_id;
	r->base_allocs = s->base_allocs;
	r->base_bytes = s->base_bytes;
	scan_sum(s, &r->sum);
	scan_n = n + 1;
	return 0;
}

SEC("syscall")
int site_scan_run(struct site_scan_ctx *ctx)
{
	scan_next = ctx->next;
	scan_to = ctx->to;
	scan_n = 0;
	bpf_loop(1 << 23, scan_one, NULL, 0);
	ctx->next = scan_next;
	ctx->n = scan_n;
	return 0;
}
