# Host tests of tests/randprog.c, the random program generator (included by the top-level
# Makefile; `make unit` runs them from the repo root):
#   test_randprog  objdump disassembles every program into the instructions the generator
#                  recorded; the host CPU runs 2,000 user-mode programs under
#                  ptrace(PTRACE_SINGLESTEP) and makes exactly the generator's transfers;
#                  every class and jcc condition occurs; build/btsx-rand reads back the
#                  program report it writes, and finds a byte changed in it.
# More programs, other sizes or another seed: build/unit/test_randprog -n 100000 -s 8192 -S 0x1234

# Rules here must not become the default goal of the top-level Makefile.
randprog_mk_default_goal := $(.DEFAULT_GOAL)

UNIT_TESTS += $(UNIT_DIR)/test_randprog
# Under the sanitizers the generator's code runs for 250 programs (objdump and ptrace): the
# plain pass is the oracle run over 2,000; these look for memory errors, which 250 reach.
UNIT_SAN_ARGS_test_randprog := -n 250

RANDPROG_DEPS := tests/randprog.c tests/randprog.h kernel/errno.h kernel/string.h \
		 tests/unit/randprog.mk

# The tool is a prerequisite: test_randprog also checks that it reads back what it dumps.
$(UNIT_DIR)/test_randprog: tests/unit/test_randprog.c $(RANDPROG_DEPS) $(B)/btsx-rand
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -DBTSX_RAND='"$(B)/btsx-rand"' -o $@ tests/unit/test_randprog.c \
		tests/randprog.c $(UNIT_LIBS)

# tools/btsx-rand.c: a program rebuilt from its seed and index (or a failure report),
# disassembled, its path marked.
$(B)/btsx-rand: tools/btsx-rand.c $(RANDPROG_DEPS)
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -o $@ tools/btsx-rand.c tests/randprog.c

.DEFAULT_GOAL := $(randprog_mk_default_goal)
