# Host unit test of the btsx-report/1 formatter, tests/report.c (included by the top-level
# Makefile).
UNIT_TESTS += $(UNIT_DIR)/test_report

$(UNIT_DIR)/test_report: tests/unit/test_report.c tests/report.c tests/report.h kernel/printf.c \
		       kernel/printf.h kernel/errno.c tests/unit/report.mk
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -o $@ tests/unit/test_report.c tests/report.c kernel/printf.c \
		kernel/errno.c $(UNIT_LIBS)
