// SPDX-License-Identifier: GPL-2.0
/* Kernel features and capabilities memleakbpf needs. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/capability.h>
#include "support.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

/*
 * Name every capability that is missing, not just the first: a user granting
 * them one at a time would otherwise go round three times.
 */
static int check_caps(char *err, size_t errlen)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	char missing[96] = "";
	int nr = 0;
	bool admin;

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	admin = has_cap(data, CAP_SYS_ADMIN);
	/* CAP_SYS_ADMIN covers both on any kernel; CAP_BPF + CAP_PERFMON since 5.8. */
	if (!admin && !has_cap(data, CAP_BPF))
		nr++, strcat(missing, ", CAP_BPF");
	if (!admin && !has_cap(data, CAP_PERFMON))
		nr++, strcat(missing, ", CAP_PERFMON");
	/* To read the target's memory maps, auxv and memory. */
	if (!has_cap(data, CAP_SYS_PTRACE))
		nr++, strcat(missing, ", CAP_SYS_PTRACE");
	if (!nr)
		return 0;
	snprintf(err, errlen, "missing %s %s (euid %u): run as root, or grant cap_bpf,cap_perfmon,cap_sys_ptrace",
		 nr == 1 ? "capability" : "capabilities", missing + 2, (unsigned)geteuid());
	return -EPERM;
}

int support__check(char *err, size_t errlen)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(err, errlen, "this kernel has no BTF (/sys/kernel/btf/vmlinux): CO-RE BPF needs CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	if (access("/sys/bus/event_source/devices/uprobe/type", R_OK)) {
		snprintf(err, errlen, "this kernel has no uprobe PMU (/sys/bus/event_source/devices/uprobe): CONFIG_UPROBES=y is needed");
		return -ENOTSUP;
	}
	return check_caps(err, errlen);
}

/*
 * By the release uname gives: a kfunc's presence in the kernel's BTF costs
 * 13 ms of parsing at every start here, the version nothing. A distribution
 * that backported the feature to an older version only goes without it.
 */
bool support__kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma, mi;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}
