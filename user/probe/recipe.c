// SPDX-License-Identifier: GPL-2.0
/* What one link was made of, kept to make it again (probes_internal.h). */
#include <stdlib.h>
#include <string.h>
#include "probes_internal.h"

int recipe__keep(struct recipe *r, const __u64 *offsets, const __u64 *cookies, __u32 cnt)
{
	r->cnt = cnt;
	r->offsets = malloc(cnt * sizeof(*offsets) ?: 1);
	r->cookies = malloc(cnt * sizeof(*cookies) ?: 1);
	if (!r->offsets || !r->cookies)
		return -ENOMEM;
	memcpy(r->offsets, offsets, cnt * sizeof(*offsets));
	memcpy(r->cookies, cookies, cnt * sizeof(*cookies));
	return 0;
}
