// SPDX-License-Identifier: GPL-2.0
/*
 * Addresses in no file, named by the process's /tmp/perf-PID.map: this
 * process plays the JIT, writing its own map at addresses it has not mapped.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include "fixture.h"
#include "symbolize/perfmap.h"
#include "symbolize/symbolize.h"
#include "unit.h"

static bool write_map(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	bool ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	if (fd >= 0)
		close(fd);
	return ok;
}

/* The one frame of addr: function and module, or NULL for both. */
static bool jit_frame_is(struct symbolizer *s, const struct modules *mods, uint64_t addr,
			 bool ret, const char *function, const char *module)
{
	struct report_frame *frames = NULL;
	size_t nr = 0;
	bool ok = !symbolizer__resolve(s, mods, addr, ret, &frames, &nr) && nr == 1;

	ok = ok && frames[0].address == addr && !frames[0].file && !frames[0].inlined;
	if (ok && function)
		ok = frames[0].function && !strcmp(frames[0].function, function) &&
		     frames[0].module && !strcmp(frames[0].module, module) &&
		     frames[0].module_offset == addr;
	else if (ok)
		ok = !frames[0].function && !frames[0].module;
	if (!ok)
		fprintf(stderr, "  0x%llx: %s [%s], want %s [%s]\n", (unsigned long long)addr,
			nr ? frames[0].function ?: "-" : "no frame",
			nr ? frames[0].module ?: "-" : "", function ?: "-", module ?: "-");
	fx_frames_free(frames, nr);
	return ok;
}

TEST(sym_jit_perf_map)
{
	struct modules *mods = modules__new(getpid());
	struct symbolizer *s = symbolizer__new(NULL, 0);
	char path[64], module[64];
	pid_t nspid;
	bool ok;

	ASSERT(mods && s && !perfmap__nspid(getpid(), &nspid));
	snprintf(path, sizeof(path), "/proc/self/root/tmp/perf-%d.map", (int)nspid);
	snprintf(module, sizeof(module), "/tmp/perf-%d.map", (int)nspid);
	ok = write_map(path, "7f0000001000 40 stale\n"
			     "7f0000001000 40 LazyCompile:~handler app.js:12\n"
			     "7f0000000fc0 40 decoy_below\n"
			     "0x7f0000002000 0x10 _ZN2js3jit5StubsEv\n"
			     "7f0000003000 10 being_writ");
	/* The later line of two for one range; return addresses at pc - 1. */
	ok = ok && jit_frame_is(s, mods, 0x7f0000001000, false, "LazyCompile:~handler app.js:12",
				module);
	ok = ok && jit_frame_is(s, mods, 0x7f0000001040, true, "LazyCompile:~handler app.js:12",
				module);
	ok = ok && jit_frame_is(s, mods, 0x7f0000001040, false, NULL, NULL);
	ok = ok && jit_frame_is(s, mods, 0x7f0000000fff, false, "decoy_below", module);
	/* 0x prefixes, and C++ names demangled like any other. */
	ok = ok && jit_frame_is(s, mods, 0x7f0000002008, false, "js::jit::Stubs()", module);
	/* An unterminated last line may be cut short: not used. */
	ok = ok && jit_frame_is(s, mods, 0x7f0000003004, false, NULL, NULL);
	/* The runtime rewrote its map: read again. */
	ok = ok && write_map(path, "7f0000001000 40 Function:handler app.js:12 (optimized)\n");
	ok = ok && jit_frame_is(s, mods, 0x7f0000001010, false,
				"Function:handler app.js:12 (optimized)", module);
	/* Gone: what was read is kept (the target may simply have exited). */
	unlink(path);
	ok = ok && jit_frame_is(s, mods, 0x7f0000001010, false,
				"Function:handler app.js:12 (optimized)", module);
	symbolizer__free(s);
	modules__free(mods);
	return ok;
}
