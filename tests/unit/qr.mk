# Host tests of kernel/qr.c, the QR code encoder (included by the top-level Makefile; `make unit`
# runs them from the repo root):
#   test_qr        the module matrix against Debian's qrencode, bit for bit, for generated inputs
#                  at every version and level; symbols rendered here decoded by zbarimg
#                  (zbar-tools). Both tools come from DEB_PKGS (`make deps`); the test fails if
#                  either is missing.
#   test_qr_rules  the four mask penalty rules on hand-built matrices
# Either takes an optional cmocka name pattern: $(UNIT_DIR)/test_qr 'test_zbar*'. The sanitized
# passes run test_qr with --no-oracles: the encoder over the same inputs, without the qrencode
# and zbarimg processes (most of its time), which the plain pass runs.

# Rules here must not become the default goal of the top-level Makefile.
qr_mk_default_goal := $(.DEFAULT_GOAL)

UNIT_TESTS += $(UNIT_DIR)/test_qr $(UNIT_DIR)/test_qr_rules
UNIT_SAN_ARGS_test_qr := --no-oracles

$(UNIT_DIR)/test_qr: tests/unit/test_qr.c kernel/qr.c kernel/qr.h kernel/errno.h kernel/string.h \
		   tests/unit/qr.mk
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -o $@ tests/unit/test_qr.c kernel/qr.c $(UNIT_LIBS)


# The penalty rules one by one: the test includes kernel/qr.c to reach its static functions.
$(UNIT_DIR)/test_qr_rules: tests/unit/test_qr_rules.c kernel/qr.c kernel/qr.h kernel/errno.h \
			 kernel/string.h tests/unit/qr.mk
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -o $@ tests/unit/test_qr_rules.c $(UNIT_LIBS)

.DEFAULT_GOAL := $(qr_mk_default_goal)
