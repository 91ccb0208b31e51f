/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between v_dlopen and its plugins. A plugin keeps no truth
 * registry of its own (truth.h is header-only: it would get a second one):
 * it tells the victim's registry about its blocks through alloc_at.
 */
#ifndef VICTIM_PLUGIN_H
#define VICTIM_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

struct plugin_api {
	/* truth.h's tr_alloc_at, in the victim. */
	void (*alloc_at)(const void *p, uint64_t size, const char *site, const char *api, int line);
};

/* What every plugin exports under its site's name. */
typedef void plugin_site_fn(const struct plugin_api *api, size_t n);

/* As truth.h's SITE and ESCAPE, and exported for dlsym. */
#define PLUGIN_SITE __attribute__((noinline, noipa, visibility("default")))
#define PLUGIN_ESCAPE(p) asm volatile("" : : "r"(p) : "memory")

#endif
