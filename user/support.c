// SPDX-License-Identifier: GPL-2.0
/* Kernel features and capabilities memleakbpf needs. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
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

static int check_caps(char *err, size_t errlen)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	bool admin;

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	admin = has_cap(data, CAP_SYS_ADMIN);
	/* CAP_SYS_ADMIN covers both on any kernel; CAP_BPF + CAP_PERFMON since 5.8. */
	if (!admin && !has_cap(data, CAP_BPF)) {
		snprintf(err, errlen, "missing capability CAP_BPF (run as root, or grant cap_bpf,cap_perfmon,cap_sys_ptrace)");
		return -EPERM;
	}
	if (!admin && !has_cap(data, CAP_PERFMON)) {
		snprintf(err, errlen, "missing capability CAP_PERFMON (run as root, or grant cap_bpf,cap_perfmon,cap_sys_ptrace)");
		return -EPERM;
	}
	if (!has_cap(data, CAP_SYS_PTRACE)) {
		snprintf(err, errlen, "missing capability CAP_SYS_PTRACE, needed to read the target's memory maps (run as root)");
		return -EPERM;
	}
	return 0;
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
