// SPDX-License-Identifier: GPL-2.0
/* --snapshot-dir's files (snapshot_dir.h). */
#include <errno.h>
#include "outfile.h"
#include "snapshot_dir.h"
#include "writers.h"

static void name(pid_t pid, bool asked, unsigned n, const char *ext, char *buf, size_t len)
{
	snprintf(buf, len, "memleak.%d.%s%04u.%s", (int)pid, asked ? "usr1-" : "", n, ext);
}

/* Is any of the snapshot's names taken? */
static bool taken(int dirfd, const struct snapshot_files *files)
{
	return outfile__exists_at(dirfd, files->profile) ||
	       outfile__exists_at(dirfd, files->folded) ||
	       (files->html[0] && outfile__exists_at(dirfd, files->html));
}

int snapshot_dir__write(int dirfd, pid_t pid, bool asked, unsigned *n, bool gperftools, bool html,
			const struct report *r, struct snapshot_files *files)
{
	const char *ext = writers__profile_ext(gperftools);
	int err;

	files->failed = files->profile;
	files->html[0] = '\0';
	do {
		++*n;
		name(pid, asked, *n, ext, files->profile, sizeof(files->profile));
		name(pid, asked, *n, "folded", files->folded, sizeof(files->folded));
		if (html)
			name(pid, asked, *n, "html", files->html, sizeof(files->html));
		err = taken(dirfd, files) ? -EEXIST : outfile__write_new(dirfd, files->profile,
									    writers__profile(gperftools), r);
	} while (err == -EEXIST);
	if (!err) {
		files->failed = files->folded;
		err = outfile__write_new(dirfd, files->folded, writers[REPORT_OUT_FOLDED].write, r);
	}
	if (!err && html) {
		files->failed = files->html;
		err = outfile__write_new(dirfd, files->html, writers[REPORT_OUT_HTML].write, r);
	}
	return err;
}
