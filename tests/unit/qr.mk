# Host tests of kernel/qr.c, the QR code encoder (included by the top-level Makefile; `make unit`
# runs them from the repo root). test_qr compares the encoder's module matrix with Debian's
# qrencode and decodes rendered symbols with zbarimg (zbar-tools): both come from DEB_PKGS
# (`make deps`), and the test fails if either is missing. An optional cmocka name pattern runs a
# subset: $(B)/unit/test_qr 'test_zbar*'

# Rules here must not become the default goal of the top-level Makefile.
qr_mk_default_goal := $(.DEFAULT_GOAL)

UNIT_TESTS += $(B)/unit/test_qr

$(B)/unit/test_qr: tests/unit/test_qr.c kernel/qr.c kernel/qr.h kernel/errno.h kernel/string.h \
		   tests/unit/qr.mk
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -o $@ tests/unit/test_qr.c kernel/qr.c $(UNIT_LIBS)

.DEFAULT_GOAL := $(qr_mk_default_goal)
