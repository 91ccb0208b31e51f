# SPDX-License-Identifier: GPL-2.0
# memleakbpf: `make` builds ./memleakbpf; see `make help`.

OUTPUT    := .output
ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
CLANG     ?= clang
BPFTOOL   ?= $(shell command -v bpftool || echo /usr/sbin/bpftool)
CC        ?= gcc
CXX       ?= g++
PREFIX    ?= /usr/local
DESTDIR   ?=

CFLAGS    ?= -O2 -g
CFLAGS    += -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE
INCLUDES  := -I$(OUTPUT) -Ibpf -Iuser
LIBS      := -lbpf -ldw -lelf -lz -lstdc++
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) -Ibpf -Wall

# Modules that need neither libbpf nor libdw: they build into the unit tests.
PURE      := opts procmaps elfsym allocator aggregate report report_text \
             report_json report_folded outfile report_pprof report_svg
USER_SRCS := $(wildcard user/*.c)
PURE_OBJS := $(patsubst %,$(OUTPUT)/user/%.o,$(PURE))
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(patsubst tests/unit/%.c,$(OUTPUT)/unit/%.o,$(UNIT_SRCS))

VICTIM_C   := $(wildcard tests/victims/*.c)
VICTIM_CXX := $(wildcard tests/victims/*.cc)
VICTIMS    := $(patsubst tests/victims/%.c,$(OUTPUT)/victims/%,$(VICTIM_C)) \
              $(patsubst tests/victims/%.cc,$(OUTPUT)/victims/%,$(VICTIM_CXX))
VICTIM_FLAGS := -O2 -g -fno-omit-frame-pointer -pthread

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.PHONY: all test unit e2e demo install clean deps victims help
all: memleakbpf

help:
	@echo "make            build ./memleakbpf"
	@echo "make test       unit and end-to-end tests (installs missing packages)"
	@echo "make demo       build and trace the bundled leaky example"
	@echo "make install    install to \$$(DESTDIR)\$$(PREFIX)/sbin (PREFIX=$(PREFIX))"
	@echo "V=1             show the commands"

deps:
	$(Q)scripts/deps.sh

$(OUTPUT) $(OUTPUT)/user $(OUTPUT)/unit $(OUTPUT)/victims:
	$(Q)mkdir -p $@

$(OUTPUT)/memleak.bpf.o: bpf/memleak.bpf.c bpf/memleak.h | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUTPUT)/memleak.skel.h: $(OUTPUT)/memleak.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name memleak_bpf > $@.tmp && mv $@.tmp $@

$(OUTPUT)/user/probes.o $(OUTPUT)/user/snapshot.o: $(OUTPUT)/memleak.skel.h

$(OUTPUT)/user/%.o: user/%.c $(wildcard user/*.h) bpf/memleak.h | $(OUTPUT)/user
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -c $< -o $@

memleakbpf: $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LIBS) -o $@

$(OUTPUT)/unit/%.o: tests/unit/%.c tests/unit/unit.h $(wildcard user/*.h) | $(OUTPUT)/unit
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(INCLUDES) -Itests/unit -c $< -o $@

$(OUTPUT)/unit_tests: $(UNIT_OBJS) $(PURE_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -lelf -o $@

$(OUTPUT)/victims/%: tests/victims/%.c | $(OUTPUT)/victims
	$(call msg,VICTIM,$@)
	$(Q)$(CC) $(VICTIM_FLAGS) $(if $(findstring static,$*),-static) $< -o $@

$(OUTPUT)/victims/%: tests/victims/%.cc | $(OUTPUT)/victims
	$(call msg,VICTIM,$@)
	$(Q)$(CXX) $(VICTIM_FLAGS) $< -o $@

victims: $(VICTIMS)

unit: $(OUTPUT)/unit_tests
	$(Q)$(OUTPUT)/unit_tests

e2e: memleakbpf victims
	$(Q)/usr/bin/python3 tests/e2e/run.py

test: deps
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory e2e

demo: deps
	$(Q)$(MAKE) --no-print-directory memleakbpf $(OUTPUT)/victims/demo_leaky
	$(Q)scripts/demo.sh

install: memleakbpf
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX)/sbin/memleakbpf)
	$(Q)install -D -m 0755 memleakbpf $(DESTDIR)$(PREFIX)/sbin/memleakbpf

clean:
	$(call msg,CLEAN,)
	$(Q)rm -rf $(OUTPUT) memleakbpf
