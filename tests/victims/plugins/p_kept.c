// SPDX-License-Identifier: GPL-2.0
/* A plugin v_dlopen loads after tracing began, and keeps loaded. */
#include <stdlib.h>
#include "plugin.h"

PLUGIN_SITE void site_plugin_kept(const struct plugin_api *api, size_t n)
{
	void *p = malloc(n); api->alloc_at(p, n, __func__, "malloc", __LINE__); PLUGIN_ESCAPE(p);
}
