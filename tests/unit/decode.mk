# Host tests of ds/decode.c (included by the top-level Makefile; `make unit` runs them from the
# repo root):
#   test_decode          hand-written byte strings (cmocka)
#   test_decode_objdump  every instruction objdump shows, in a corpus generated and assembled
#                        here and in $(B)/btsx.elf when it exists, decoded and compared
# Run the second by hand on any other x86-64 ELF: $(UNIT_DIR)/test_decode_objdump FILE...

# Rules here must not become the default goal of the top-level Makefile.
decode_mk_default_goal := $(.DEFAULT_GOAL)

DECODE_UNIT_DIR  := $(UNIT_DIR)
DECODE_CORPUS_S  := $(DECODE_UNIT_DIR)/decode_corpus.S
DECODE_CORPUS_O  := $(DECODE_UNIT_DIR)/decode_corpus.o
# GNU as: the corpus uses gas-only syntax (bnd, notrack, {disp32}).
DECODE_AS        ?= as --64
DECODE_UNIT_DEPS := ds/decode.c ds/decode.h tests/unit/decode.mk

UNIT_TESTS += $(DECODE_UNIT_DIR)/test_decode $(DECODE_UNIT_DIR)/test_decode_objdump

$(DECODE_UNIT_DIR)/test_decode: tests/unit/test_decode.c $(DECODE_UNIT_DEPS)
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -o $@ tests/unit/test_decode.c ds/decode.c $(UNIT_LIBS)

# The corpus object is a prerequisite so that `make unit` has it before the test runs.
$(DECODE_UNIT_DIR)/test_decode_objdump: tests/unit/test_decode_objdump.c $(DECODE_UNIT_DEPS) \
					$(DECODE_CORPUS_O)
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -DDECODE_CORPUS='"$(DECODE_CORPUS_O)"' \
		-DDECODE_KERNEL='"$(B)/btsx.elf"' \
		-o $@ tests/unit/test_decode_objdump.c ds/decode.c

$(DECODE_CORPUS_S): tests/unit/gen_decode_corpus.py tests/unit/decode.mk
	@mkdir -p $(@D)
	$(PYTHON) tests/unit/gen_decode_corpus.py $@

$(DECODE_CORPUS_O): $(DECODE_CORPUS_S)
	$(DECODE_AS) -o $@ $<

.DEFAULT_GOAL := $(decode_mk_default_goal)
