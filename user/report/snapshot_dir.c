// SPDX-License-Identifier: GPL-2.0
/* --snapshot-dir's files (snapshot_dir.h). */
#include <errno.h>
#include "outfile.h"
#include "snapshot_dir.h"

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

int snapshot_dir__write(int dirfd, pid_t pid, bool asked, unsigned *n, const char *ext,
			int (*profile)(const struct report *, FILE *), bool html,
			const struct report *r, struct snapshot_files *files)
{
	int err;

	files->failed = files->profile;
	files->html[0] = '\0';
	do {
		++*n;
		name(pid, asked, *n, ext, files->profile, sizeof(files->profile));
		name(pid, asked, *n, "folded", files->folded, sizeof(files->folded));
		if (html)
			name(pid, asked, *n, "html", files->html, sizeof(files->html));
		err = taken(dirfd, files) ? -EEXIST : outfile__write_new(dirfd, files->profile, profile, r);
	} while (err == -EEXIST);
	if (!err) {
		files->failed = files->folded;
		err = outfile__write_new(dirfd, files->folded, report_folded__write, r);
	}
	if (!err && html) {
		files->failed = files->html;
		err = outfile__write_new(dirfd, files->html, report_html__write, r);
	}
	return err;
}
