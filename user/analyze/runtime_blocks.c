// SPDX-License-Identifier: GPL-2.0
/* The runtime's own blocks, by their frames (runtime_blocks.h). */
#include <string.h>
#include "runtime_blocks.h"

/*
 * libc's functions that allocate for libc itself, by name as libc's debug
 * information (libc6-dbg) or its dynamic symbols give it; a name ending in
 * '*' is a prefix. RUNTIME_NONE: one that hands its block to the program,
 * which must free it (a veto, wherever it is in the run).
 */
static const struct libc_fn {
	const char *name;
	enum report_runtime kind;
} libc_fns[] = {
	{ "_IO_file_doallocate", RUNTIME_STDIO },
	{ "setlocale", RUNTIME_LOCALE },
	{ "_nl_find_locale", RUNTIME_LOCALE },
	{ "_nl_load_locale*", RUNTIME_LOCALE },
	{ "_nl_intern_locale_data", RUNTIME_LOCALE },
	{ "_nl_expand_alias", RUNTIME_LOCALE },
	{ "_nl_find_domain", RUNTIME_LOCALE },
	{ "_nl_load_domain", RUNTIME_LOCALE },
	{ "__dcigettext", RUNTIME_LOCALE },
	{ "bindtextdomain", RUNTIME_LOCALE },
	{ "textdomain", RUNTIME_LOCALE },
	{ "__nss_module*", RUNTIME_NSS },
	{ "__nss_database*", RUNTIME_NSS },
	{ "nss_database*", RUNTIME_NSS },
	{ "nss_module*", RUNTIME_NSS },
	{ "getpwnam", RUNTIME_NSS },
	{ "getpwuid", RUNTIME_NSS },
	{ "getgrnam", RUNTIME_NSS },
	{ "getgrgid", RUNTIME_NSS },
	{ "gethostbyname", RUNTIME_NSS },
	{ "gethostbyname2", RUNTIME_NSS },
	{ "gethostbyaddr", RUNTIME_NSS },
	{ "getservbyname", RUNTIME_NSS },
	{ "getprotobyname", RUNTIME_NSS },
	{ "__tzfile_read", RUNTIME_TZ },
	{ "tzset_internal", RUNTIME_TZ },
	{ "__tzset_parse_tz", RUNTIME_TZ },
	{ "__tzstring*", RUNTIME_TZ },
	{ "__gconv_find_shlib", RUNTIME_ICONV },
	{ "__gconv_read_conf", RUNTIME_ICONV },
	{ "__gconv_load_cache", RUNTIME_ICONV },
	/* The program's to free: freelocale, iconv_close, fclose's FILE. */
	{ "newlocale", RUNTIME_NONE },
	{ "__newlocale", RUNTIME_NONE },
	{ "duplocale", RUNTIME_NONE },
	{ "__duplocale", RUNTIME_NONE },
	{ "iconv_open", RUNTIME_NONE },
	{ "__gconv_open", RUNTIME_NONE },
};

/* The interpreter's initialization, through which its start-up runs (3.8 to 3.13). */
static const char *const py_init_fns[] = {
	"Py_InitializeFromConfig", "Py_InitializeEx", "Py_Initialize", "_Py_InitializeMain",
	"Py_InitializeFromArgs", "Py_PreInitialize", "Py_PreInitializeFromBytesArgs",
	"Py_PreInitializeFromArgs",
};

static const struct {
	const char *key, *what;
} kinds[RUNTIME__COUNT] = {
	[RUNTIME_INIT] = { "runtime-init",
		"the runtime's own start-up block: allocated by a runtime library's initializer "
		"as the dynamic linker loaded it, before main, and kept until exit (libstdc++'s "
		"is its exception-handling emergency pool, which valgrind frees at exit through "
		"__gnu_cxx::__freeres)" },
	[RUNTIME_STDIO] = { "stdio-buffer",
		"libc's buffer of a stdio stream, made at its first read or write and freed by "
		"fclose: stdin's, stdout's and stderr's are never closed, and valgrind frees them "
		"at exit, through __libc_freeres (a stack with more than three such blocks holds "
		"streams the program opened and never closed, and is listed as the program's)" },
	[RUNTIME_LOCALE] = { "locale",
		"libc's locale data and message catalogs (setlocale, gettext), kept by libc for "
		"the process; valgrind frees them at exit, through __libc_freeres" },
	[RUNTIME_NSS] = { "nss",
		"libc's name-service state (its NSS modules, the buffer getpwnam and the like "
		"reuse), kept by libc for the process; valgrind frees it at exit, through "
		"__libc_freeres" },
	[RUNTIME_TZ] = { "time-zone",
		"libc's time-zone data, read once by tzset and kept by libc; valgrind frees it "
		"at exit, through __libc_freeres" },
	[RUNTIME_ICONV] = { "iconv-modules",
		"libc's character-set conversion modules, loaded once and kept by libc; valgrind "
		"frees them at exit, through __libc_freeres" },
	[RUNTIME_PYINIT] = { "python-init",
		"the interpreter's own start-up (Py_InitializeFromConfig), before any Python "
		"code ran: no line of the program's made it, and tracemalloc, which starts "
		"later, never sees it" },
	[RUNTIME_SEVERAL] = { "runtime",
		"the runtime's own blocks, of more than one kind (their stacks say which), kept "
		"until exit, where valgrind frees them" },
};

static bool name_is(const char *function, const char *pattern)
{
	size_t n = strlen(pattern);

	if (pattern[n - 1] == '*')
		return !strncmp(function, pattern, n - 1);
	return !strcmp(function, pattern);
}

void runtime_blocks__libc_step(const char *function, bool *veto, enum report_runtime *kind)
{
	if (!function || *veto)
		return;
	for (size_t i = 0; i < sizeof(libc_fns) / sizeof(libc_fns[0]); i++) {
		if (!name_is(function, libc_fns[i].name))
			continue;
		if (libc_fns[i].kind == RUNTIME_NONE) {
			*veto = true;
			*kind = RUNTIME_NONE;
		} else if (*kind == RUNTIME_NONE) {
			*kind = libc_fns[i].kind;	/* the innermost says what it is */
		}
		return;
	}
}

bool runtime_blocks__py_init(const char *function)
{
	for (size_t i = 0; function && i < sizeof(py_init_fns) / sizeof(py_init_fns[0]); i++)
		if (!strcmp(function, py_init_fns[i]))
			return true;
	return false;
}

/* stdin, stdout and stderr: the streams libc opens, whose buffers it keeps. */
#define STD_STREAMS 3

enum report_runtime runtime_blocks__held(enum report_runtime kind, uint64_t allocs)
{
	return kind == RUNTIME_STDIO && allocs > STD_STREAMS ? RUNTIME_NONE : kind;
}

enum report_runtime runtime_blocks__merge(enum report_runtime site, enum report_runtime stack,
					  bool first)
{
	if (first)
		return stack;
	if (site == RUNTIME_NONE || stack == RUNTIME_NONE)
		return RUNTIME_NONE;
	return site == stack ? site : RUNTIME_SEVERAL;
}

const char *runtime_blocks__what(enum report_runtime kind)
{
	return (unsigned)kind < RUNTIME__COUNT ? kinds[kind].what : NULL;
}

const char *runtime_blocks__key(enum report_runtime kind)
{
	return (unsigned)kind < RUNTIME__COUNT ? kinds[kind].key : NULL;
}
