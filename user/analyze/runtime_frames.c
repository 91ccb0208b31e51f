// SPDX-License-Identifier: GPL-2.0
/* The runtime's frames and the standard containers' (runtime_frames.h). */
#include <string.h>
#include "runtime_frames.h"

/* Objects by the start of their file name: libc.so.6, libstdc++.so.6.0.30, ... */
static const char *const runtime_objects[] = {
	"libc.so", "libc-", "libstdc++.so", "libgcc_s.so", "ld-linux", "libm.so", "libpthread.so",
	"libjemalloc.so", "libtcmalloc", "libmimalloc.so",
};

/* Namespaces of the standard library's code, instantiated in any object. */
static const char *const runtime_names[] = { "std::", "__gnu_cxx::", "__cxxabiv1::", "operator new" };

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static const char *base_name(const char *module)
{
	const char *slash = module ? strrchr(module, '/') : NULL;

	return slash ? slash + 1 : module;
}

bool runtime_frames__object(const char *module)
{
	const char *base = base_name(module);

	for (size_t i = 0; base && i < sizeof(runtime_objects) / sizeof(runtime_objects[0]); i++)
		if (starts(base, runtime_objects[i]))
			return true;
	return false;
}

bool runtime_frames__loader(const char *module)
{
	const char *base = base_name(module);

	return base && (starts(base, "ld-linux") || starts(base, "ld.so") || starts(base, "ld64.so"));
}

bool runtime_frames__libc(const char *module)
{
	const char *base = base_name(module);

	return base && (starts(base, "libc.so") || starts(base, "libc-"));
}

const char *runtime_frames__name(const char *function)
{
	const char *name = function;
	int depth = 0;

	if (starts(function, "operator "))	/* operator new(unsigned long): no return type */
		return function;
	/* The last space at depth 0 before the arguments ends the return type. */
	for (const char *p = function; *p; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth > 0)
			depth--;
		else if (*p == '(' && !depth)
			break;
		else if (*p == ' ' && !depth && p[1] && !starts(p + 1, "const") &&
			 p[1] != '*' && p[1] != '&')
			name = p + 1;
	}
	return name;
}

bool runtime_frames__internal(const struct report_frame *f)
{
	const char *name;

	if (runtime_frames__object(f->module))
		return true;
	if (!f->function)
		return false;
	name = runtime_frames__name(f->function);
	for (size_t i = 0; i < sizeof(runtime_names) / sizeof(runtime_names[0]); i++)
		if (starts(name, runtime_names[i]))
			return true;
	return false;
}
