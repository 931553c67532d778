# Host tests of the DS layer's pure modules (included by the top-level Makefile; `make unit`
# runs them from the repo root):
#   test_ring    ds/record.h and ds/ring.c: the timestamp format, the trace ring's policies,
#                a randomised run against a reference model, the drain's cost against memcpy
#   test_layout  ds/layout.c: DS-area layout rules, pending count, circular reads, quota
#   test_debugctl ds/debugctl.c: the vendor/family -> DEBUGCTL layout table and each layout's bits
# Either takes an optional cmocka name pattern: $(UNIT_DIR)/test_ring 'test_stop*'
#
# `make ds-kbuild` compiles the modules freestanding with the kernel's flags under both gcc and
# clang (objects only), proving they build in the kernel whichever compiler CC names.

# Rules here must not become the default goal of the top-level Makefile.
ds_mk_default_goal := $(.DEFAULT_GOAL)

DS_UNIT_DIR  := $(UNIT_DIR)
DS_UNIT_HDRS := ds/record.h ds/ring.h ds/layout.h ds/debugctl.h kernel/errno.h kernel/string.h \
                kernel/paging.h tests/unit/ds.mk

UNIT_TESTS += $(DS_UNIT_DIR)/test_ring $(DS_UNIT_DIR)/test_layout $(DS_UNIT_DIR)/test_debugctl

# Host builds take libc's memcpy through kernel/string.h (-DBTSX_HOST), so only errno.c is
# linked; it gives the tests err_name() for their messages.
$(DS_UNIT_DIR)/test_ring: tests/unit/test_ring.c ds/ring.c kernel/errno.c $(DS_UNIT_HDRS)
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -o $@ $(filter %.c,$^) $(UNIT_LIBS)

$(DS_UNIT_DIR)/test_layout: tests/unit/test_layout.c ds/layout.c kernel/errno.c $(DS_UNIT_HDRS)
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -o $@ $(filter %.c,$^) $(UNIT_LIBS)

$(DS_UNIT_DIR)/test_debugctl: tests/unit/test_debugctl.c ds/debugctl.c $(DS_UNIT_HDRS)
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -o $@ $(filter %.c,$^) $(UNIT_LIBS)

DS_KBUILD_SRC   := ds/ring.c ds/layout.c ds/debugctl.c
DS_KBUILD_FLAGS := -std=gnu11 -O2 -Wall -Wextra -Werror -I. -ffreestanding -fno-pic -fno-pie \
                   -mno-red-zone -mno-mmx -mno-sse -mno-sse2 -mno-80387 -fno-stack-protector

.PHONY: ds-kbuild
ds-kbuild: $(DS_KBUILD_SRC) $(DS_UNIT_HDRS)
	@mkdir -p $(B)/ds-kbuild
	@set -e; for cc in gcc clang; do for f in $(DS_KBUILD_SRC); do \
	    echo "  $$cc -c $$f"; \
	    $$cc $(DS_KBUILD_FLAGS) -c $$f -o $(B)/ds-kbuild/$$(basename $$f .c).$$cc.o; \
	done; done

.DEFAULT_GOAL := $(ds_mk_default_goal)
