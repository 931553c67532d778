# libFuzzer targets (included by the top-level Makefile; run from the repo root). Each
# tests/fuzz/fuzz_NAME.c is a target built with clang's -fsanitize=fuzzer,address,undefined
# (Debian's libclang-rt-14-dev) together with the module sources listed here; its seed corpus
# is tests/fuzz/corpus/NAME/, and an input that once crashed is kept there as a regression.
#
#   make fuzz          each target for FUZZ_SECONDS (default 60), new inputs to $(B)/fuzz/corpus/
#   make fuzz-check    replays every corpus input, then each target for FUZZ_CHECK_SECONDS
#   $(B)/fuzz/fuzz_NAME [libFuzzer options] [DIR...]   one target by hand (see the README)
# A crash leaves its input in $(B)/fuzz/crash-* (libFuzzer's -artifact_prefix).

fuzz_mk_default_goal := $(.DEFAULT_GOAL)

FUZZ_CC     ?= clang
FUZZ_DIR    := $(B)/fuzz
FUZZ_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -I. -DBTSX_HOST \
               -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
               -fno-omit-frame-pointer
FUZZ_SECONDS       ?= 60
FUZZ_CHECK_SECONDS ?= 3
# Inputs over 4 KiB explore nothing the parsers' limits do not already cut short.
FUZZ_OPTS := -max_len=4096 -timeout=10 -rss_limit_mb=1024 -print_final_stats=1

FUZZ_NAMES := cmdline decode layout ring bootinfo ktap report

FUZZ_SRC_cmdline  := kernel/cmdline.c kernel/printf.c kernel/errno.c
FUZZ_SRC_decode   := ds/decode.c
FUZZ_SRC_layout   := ds/layout.c kernel/errno.c
FUZZ_SRC_ring     := ds/ring.c kernel/errno.c
FUZZ_SRC_bootinfo := kernel/bootinfo.c
FUZZ_SRC_ktap     := tests/ktap.c kernel/printf.c kernel/errno.c
FUZZ_SRC_report   := tests/report.c kernel/printf.c kernel/errno.c

FUZZ_BINS := $(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_NAMES))

$(foreach n,$(FUZZ_NAMES),$(eval $(FUZZ_DIR)/fuzz_$(n): tests/fuzz/fuzz_$(n).c \
  $(FUZZ_SRC_$(n)) tests/fuzz/fuzz.h tests/fuzz/fuzz.mk $(wildcard $(FUZZ_SRC_$(n):.c=.h))))

$(FUZZ_BINS):
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^)

.PHONY: fuzz fuzz-build fuzz-check
fuzz-build: $(FUZZ_BINS)

# Each run adds what it finds to its own working corpus, which later runs start from.
fuzz: fuzz-build
	@set -e; for n in $(FUZZ_NAMES); do \
	    echo "== fuzz_$$n: $(FUZZ_SECONDS) s"; mkdir -p $(FUZZ_DIR)/corpus/$$n; \
	    $(FUZZ_DIR)/fuzz_$$n $(FUZZ_OPTS) -max_total_time=$(FUZZ_SECONDS) \
	        -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/corpus/$$n tests/fuzz/corpus/$$n \
	        2>$(FUZZ_DIR)/fuzz_$$n.log || { tail -40 $(FUZZ_DIR)/fuzz_$$n.log; exit 1; }; \
	    grep -E '^stat::number_of_executed_units|^stat::average_exec_per_sec' \
	        $(FUZZ_DIR)/fuzz_$$n.log; \
	done

# The corpus replay runs every stored input once (-runs=0 with directories: load, run, stop);
# the short runs start from the repository's corpus only, so every check explores afresh.
fuzz-check: fuzz-build
	@set -e; for n in $(FUZZ_NAMES); do \
	    echo "== fuzz_$$n: corpus replay, then $(FUZZ_CHECK_SECONDS) s"; \
	    $(FUZZ_DIR)/fuzz_$$n $(FUZZ_OPTS) -runs=0 tests/fuzz/corpus/$$n \
	        2>$(FUZZ_DIR)/fuzz_$$n.check.log || { tail -40 $(FUZZ_DIR)/fuzz_$$n.check.log; exit 1; }; \
	    rm -rf $(FUZZ_DIR)/check-corpus/$$n; mkdir -p $(FUZZ_DIR)/check-corpus/$$n; \
	    $(FUZZ_DIR)/fuzz_$$n $(FUZZ_OPTS) -max_total_time=$(FUZZ_CHECK_SECONDS) \
	        -artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_DIR)/check-corpus/$$n tests/fuzz/corpus/$$n \
	        2>>$(FUZZ_DIR)/fuzz_$$n.check.log || { tail -40 $(FUZZ_DIR)/fuzz_$$n.check.log; exit 1; }; \
	    grep -E '^stat::number_of_executed_units' $(FUZZ_DIR)/fuzz_$$n.check.log | tail -1; \
	done

.DEFAULT_GOAL := $(fuzz_mk_default_goal)
