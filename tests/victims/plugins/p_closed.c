// SPDX-License-Identifier: GPL-2.0
/*
 * A plugin v_dlopen loads, leaks from, and dlcloses before any report: its
 * frames must still be named from what was mapped while it was loaded.
 */
#include <stdlib.h>
#include "plugin.h"

PLUGIN_SITE void site_plugin_closed(const struct plugin_api *api, size_t n)
{
	void *p = calloc(n, 2); api->alloc_at(p, n * 2, __func__, "calloc", __LINE__); PLUGIN_ESCAPE(p);
}
