# Host unit tests of the core pure modules (included by the top-level Makefile).
# Each test links the module sources it needs directly: no shared objects, so nothing here can
# collide with another fragment's build products. Names are prefixed CORE_UNIT_.

CORE_UNIT_DIR  := $(UNIT_DIR)
CORE_UNIT_HDRS := kernel/errno.h kernel/string.h kernel/printf.h kernel/cmdline.h \
                  kernel/glob.h kernel/frames.h kernel/calib.h tests/ktap.h

CORE_UNIT_NAMES := test_printf test_cmdline test_glob test_ktap test_frames test_errno test_kstring \
                   test_calib
UNIT_TESTS += $(addprefix $(CORE_UNIT_DIR)/,$(CORE_UNIT_NAMES))

# test, its sources (the test file first)
CORE_UNIT_SRC_test_printf  := tests/unit/test_printf.c kernel/printf.c kernel/errno.c
CORE_UNIT_SRC_test_cmdline := tests/unit/test_cmdline.c kernel/cmdline.c kernel/printf.c \
                              kernel/errno.c
CORE_UNIT_SRC_test_glob    := tests/unit/test_glob.c kernel/glob.c
CORE_UNIT_SRC_test_ktap    := tests/unit/test_ktap.c tests/ktap.c kernel/printf.c kernel/errno.c
CORE_UNIT_SRC_test_frames  := tests/unit/test_frames.c kernel/frames.c kernel/errno.c
CORE_UNIT_SRC_test_errno   := tests/unit/test_errno.c kernel/errno.c kernel/printf.c
CORE_UNIT_SRC_test_calib   := tests/unit/test_calib.c kernel/calib.c

$(foreach t,test_printf test_cmdline test_glob test_ktap test_frames test_errno test_calib,\
  $(eval $(CORE_UNIT_DIR)/$(t): $(CORE_UNIT_SRC_$(t)) $(CORE_UNIT_HDRS) tests/unit/core.mk))

$(addprefix $(CORE_UNIT_DIR)/,test_printf test_cmdline test_glob test_ktap test_frames test_errno \
                                test_calib):
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -o $@ $(filter %.c,$^) $(UNIT_LIBS)

# kernel/string.c is what the kernel runs, while host modules use libc's routines: build it
# with its functions renamed to kstr_* (see kernel/string.h) so it can be tested next to libc.
$(CORE_UNIT_DIR)/test_kstring: tests/unit/test_kstring.c kernel/string.c $(CORE_UNIT_HDRS) \
                               tests/unit/core.mk
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -DBTSX_STRING_TEST -o $@ $(filter %.c,$^) $(UNIT_LIBS)
