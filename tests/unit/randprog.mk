# Host tests of tests/randprog.c, the random program generator (included by the top-level
# Makefile; `make unit` runs them from the repo root):
#   test_randprog  objdump disassembles every program into the instructions the generator
#                  recorded; the host CPU runs 2,000 user-mode programs under
#                  ptrace(PTRACE_SINGLESTEP) and makes exactly the generator's transfers;
#                  every class and jcc condition occurs.
# More programs, other sizes or another seed: $(B)/unit/test_randprog -n 100000 -s 8192 -S 0x1234

# Rules here must not become the default goal of the top-level Makefile.
randprog_mk_default_goal := $(.DEFAULT_GOAL)

UNIT_TESTS += $(B)/unit/test_randprog

$(B)/unit/test_randprog: tests/unit/test_randprog.c tests/randprog.c tests/randprog.h \
			 kernel/errno.h kernel/string.h tests/unit/randprog.mk
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -o $@ tests/unit/test_randprog.c tests/randprog.c $(UNIT_LIBS)

.DEFAULT_GOAL := $(randprog_mk_default_goal)
