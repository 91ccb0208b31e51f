// SPDX-License-Identifier: GPL-2.0
/*
 * --follow: the files of the images whose processes have ended are closed
 * once a report made after those ends names none of their stacks
 * (images__release): a report on its thread keeps the tags its sites have,
 * and the loop, with no report running, frees the modules of the images
 * done with: a shell that runs one program after another, each a file of
 * its own, holds the files of those still running or still leaking only.
 */
#include <stdlib.h>
#include "model/processes.h"
#include "opts.h"
#include "probe/snapshot.h"
#include "target/images.h"
#include "tracer.h"
#include "util/vec.h"

static int by_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * --follow: whose sites this report has, for the loop to free the files of
 * the images it no longer needs (tracer__release_images). Not with -o:
 * a site of young blocks left out now may be in a later report. Without
 * memory, nothing is freed.
 */
void tracer__keep_site_tags(struct tracer *tr, const struct snapshot *snap)
{
	size_t n = 0;

	if (!tr->opts->follow || tr->opts->older_ms ||
	    vec__reserve(&tr->site_tags, &tr->cap_site_tags, snap->nr ?: 1, sizeof(*tr->site_tags)))
		return;
	for (size_t i = 0; i < snap->nr; i++)
		tr->site_tags[i] = snap->sites[i].proc;
	qsort(tr->site_tags, snap->nr, sizeof(*tr->site_tags), by_u32);
	for (size_t i = 0; i < snap->nr; i++)
		if (!n || tr->site_tags[n - 1] != tr->site_tags[i])
			tr->site_tags[n++] = tr->site_tags[i];
	tr->nr_site_tags = n;
	tr->site_tags_new = true;
}

/* Did tag end before the report's tables were read? One that ended later may have sites since. */
static bool proc_ended(void *ctx, uint32_t tag)
{
	struct tracer *tr = ctx;
	struct process_info info;

	return processes__get(&tr->procs, tag, &info) && info.end_seq &&
	       info.end_seq <= tr->ends_before;
}

/*
 * The files of the images whose processes have all ended, and which the
 * report just built did not name: no later one will (images__release).
 */
void tracer__release_images(struct tracer *tr)
{
	if (!tr->site_tags_new)
		return;
	tr->site_tags_new = false;
	tr->images_released += images__release(tr->images, proc_ended, tr,
						tr->site_tags, tr->nr_site_tags);
}
