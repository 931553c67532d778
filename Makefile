# btsx: a bare-metal x86-64 test kernel for Intel Branch Trace Store.
#   make          build build/btsx.elf, build/btsx32.elf (for qemu -kernel) and build/btsx.iso
#   make run      boot the ISO in QEMU, results on this terminal (ARGS='tests=... verbose')
#   make check    every test: host unit tests (plain and sanitized), the fuzz targets' corpus
#                 and short runs, the kernel suites under every runner configuration, the
#                 framework self-test, the mutation run
#   make fuzz     each libFuzzer target of tests/fuzz/ for FUZZ_SECONDS (default 60)
#   make bench    boot times and ISO size
#   make lint     mypy --strict and flake8 over the Python tools (tools/btsx and its launchers)
#   make mutate   the faults of tools/mutants.txt, one at a time: the kernel suites must catch each
#   make deps     install what is missing (Debian packages)
#   make lava     the QEMU jobs of lava/ run by LAVA's own dispatcher (lava-run, as root): LAVA's
#                 test cases must be the kernel's KTAP results, case for case

CROSS_COMPILE ?=
ifeq ($(origin CC),default)
CC := $(CROSS_COMPILE)gcc
endif
LD      := $(CROSS_COMPILE)ld
OBJCOPY := $(CROSS_COMPILE)objcopy
NM      := $(CROSS_COMPILE)nm
READELF := $(CROSS_COMPILE)readelf
HOSTCC  ?= cc
# Debian's interpreter when there is one: the one DEB_PKGS installs modules for (Hypothesis).
PYTHON  ?= $(firstword $(wildcard /usr/bin/python3) python3)
B       := build
# Quiet by default; `make V=1` shows the commands.
Q       := $(if $(V),,@)

# ------------------------------------------------------------------- kernel
KCFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -I. \
           -ffreestanding -fno-pic -fno-pie -mno-red-zone -mno-mmx -mno-sse -mno-sse2 \
           -mno-80387 -mcmodel=small -fno-omit-frame-pointer \
           -fstack-protector-strong -mstack-protector-guard=global \
           -fno-asynchronous-unwind-tables -fno-common -fcf-protection=none
KASFLAGS := -g -I. -D__ASSEMBLER__ -fno-pic -fno-pie
KLDFLAGS := -nostdlib -static -z max-page-size=0x1000 -z noexecstack --no-warn-rwx-segments \
            -T linker.ld

# Suites run in link order: the foundations first, then the rest by name.
SUITES_FIRST := tests/t_boot.c tests/t_cmdline.c tests/t_msr.c tests/t_paging.c tests/t_apic.c
SUITES := $(SUITES_FIRST) $(filter-out $(SUITES_FIRST),$(sort $(wildcard tests/t_*.c)))
KSRC := $(wildcard boot/*.S) $(wildcard kernel/*.c) $(wildcard kernel/*.S) \
        $(wildcard ds/*.c) $(wildcard ds/*.S) $(wildcard sched/*.c) $(wildcard sched/*.S) \
        $(filter-out tests/t_%,$(sort $(wildcard tests/*.c))) $(SUITES) \
        $(sort $(wildcard tests/*.S))
# UBSAN=1: the kernel with UndefinedBehaviorSanitizer (README, "The UBSan kernel"), in a build
# folder of its own (`make ubsan`: $(B)/ubsan). UBSAN_RUNTIME is its runtime: left out of the
# ordinary kernel, and built without the sanitizer (it must not check itself).
# clang's bounds includes local-bounds, which only traps (UD2, no report): array-bounds is its
# reporting part, GCC's bounds.
UBSAN_BOUNDS := $(if $(findstring clang,$(notdir $(CC))),array-bounds,bounds)
UBSAN_CHECKS := shift integer-divide-by-zero signed-integer-overflow $(UBSAN_BOUNDS) null object-size \
                alignment pointer-overflow builtin unreachable vla-bound bool enum \
                nonnull-attribute returns-nonnull-attribute
UBSAN_COMMA := ,
UBSAN_LIST := $(subst $() $(),$(UBSAN_COMMA),$(strip $(UBSAN_CHECKS)))
UBSAN_RUNTIME := kernel/ubsan.c kernel/ubsan_report.c
ifeq ($(UBSAN),1)
KCFLAGS += -fsanitize=$(UBSAN_LIST) -fsanitize-recover=all -DBTSX_UBSAN='"$(UBSAN_LIST)"'
$(UBSAN_RUNTIME:%=$(B)/k/%.o): KCFLAGS += -fno-sanitize=all
# kernel/stackprot.c is checked too, and its stackprot_init() runs before there is a canary: the
# handlers it may call must not check one (and __stack_chk_fail() is no file for them to call).
$(B)/k/kernel/ubsan.c.o: KCFLAGS += -fno-stack-protector
else
KSRC := $(filter-out $(UBSAN_RUNTIME),$(KSRC))
endif
KOBJ := $(patsubst %,$(B)/k/%.o,$(KSRC)) $(B)/k/font.o

FONT := /usr/share/consolefonts/Lat15-Terminus16.psf.gz

.PHONY: all kernel iso run check unit kernel-check selftest x2apic-check smp-check bench deps clean \
        tools-check lint clang-build format mutate lava lava-install lava-validate lava-check
all: kernel iso

kernel: $(B)/btsx.elf $(B)/btsx32.elf
iso: $(B)/btsx.iso

$(B)/k/%.c.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(KCFLAGS) -MMD -MP -c $< -o $@

$(B)/k/%.S.o: %.S
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) $(KASFLAGS) -MMD -MP -c $< -o $@

$(B)/font.psf: $(FONT)
	@mkdir -p $(B)
	gzip -dc $< > $@

# The console font, linked as data with stable symbol names.
$(B)/k/font.o: $(B)/font.psf
	@mkdir -p $(dir $@)
	cd $(B) && $(OBJCOPY) -I binary -O elf64-x86-64 -B i386 \
	    --rename-section .data=.rodata.font,alloc,load,readonly,data,contents \
	    --redefine-sym _binary_font_psf_start=btsx_font_psf_start \
	    --redefine-sym _binary_font_psf_end=btsx_font_psf_end \
	    --strip-symbol _binary_font_psf_size font.psf k/font.o

# Two links: the first gives the addresses, the second embeds them as the symbol table.
# .ksyms is the last segment, so filling it moves nothing; tools/check-syms.sh proves it.
# tools/check-sizes.sh proves that every function and object has a size (boot/asm.h);
# tools/check-loops.sh that no C files of LOOP_FREE_DIRS call each other in a loop.
LOOP_FREE_DIRS := kernel ds sched tests
$(B)/btsx.elf: $(KOBJ) linker.ld tools/mksyms.sh tools/check-syms.sh tools/check-sizes.sh \
               tools/check-loops.sh
	@echo "  LD      $@"
	$(Q)sh tools/check-loops.sh $(NM) $(B)/k $(filter $(LOOP_FREE_DIRS:%=$(B)/k/%/%.c.o),$(KOBJ))
	$(Q)$(LD) $(KLDFLAGS) -o $(B)/btsx.pass1.elf $(KOBJ)
	$(Q)sh tools/check-sizes.sh $(READELF) $(B)/btsx.pass1.elf
	$(Q)$(NM) -n -S $(B)/btsx.pass1.elf | sh tools/mksyms.sh > $(B)/syms.S
	$(Q)$(CC) $(KASFLAGS) -c $(B)/syms.S -o $(B)/syms.o
	$(Q)$(LD) $(KLDFLAGS) -o $@ $(KOBJ) $(B)/syms.o
	$(Q)sh tools/check-syms.sh $(NM) $(B)/btsx.pass1.elf $@

# qemu -kernel loads multiboot1 ELF32 images only: same bytes, 32-bit container.
$(B)/btsx32.elf: $(B)/btsx.elf
	@echo "  OBJCOPY $@"
	$(Q)$(OBJCOPY) -O elf32-i386 $< $@

# tools/mkiso.sh holds the grub-mkrescue flags and the size limit: the runner builds per-run
# ISOs with it too.
$(B)/btsx.iso: $(B)/btsx.elf grub.cfg tools/mkiso.sh
	@command -v grub-mkrescue >/dev/null || $(MAKE) deps
	rm -rf $(B)/isodir && mkdir -p $(B)/isodir/boot/grub
	cp $(B)/btsx.elf $(B)/isodir/boot/btsx.elf
	cp grub.cfg $(B)/isodir/boot/grub/grub.cfg
	OBJCOPY=$(OBJCOPY) sh tools/mkiso.sh $(B)/isodir $@ || { rm -f $@; exit 1; }

-include $(shell find $(B)/k -name '*.d' 2>/dev/null)

# ------------------------------------------------------------------- set-up
DEB_PKGS := qemu-system-x86 grub-pc-bin grub-efi-amd64-bin grub-common xorriso mtools ovmf \
            bochs bochsbios seabios libcmocka-dev clang lld console-setup-linux python3 gcc \
            binutils make clang-format mypy flake8 qrencode zbar-tools libclang-rt-14-dev \
            python3-hypothesis
deps:
	@missing=$$(for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -z "$$missing" ]; then echo "deps: all installed"; exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	    echo "deps: installing $$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else \
	    echo "deps: missing packages; run:"; echo "  sudo apt-get install -y $$missing"; exit 1; \
	fi

# ------------------------------------------------------------------- running
# ACCEL=auto uses KVM only after a short test boot under it succeeds; tcg or kvm forces one.
ACCEL ?= auto
RUNNER := $(PYTHON) tools/btsx-run --build $(B) --accel $(ACCEL)
ARGS ?=
CONFIGS ?= direct,bios,uefi,bochs,bochs-skylake
# x2APIC on Bochs's Skylake-class CPU (SMEP/SMAP too): the BTS, DS and APIC suites and the
# traced tasks, with the threshold interrupt as a fixed vector and as an NMI.
X2APIC_TESTS := tests=bts.*,ds.*,apic.*,bts.task.*

run: deps all
	$(RUNNER) --config bios --verbose --append "$(ARGS)"

# ------------------------------------------------------------------- tests
# The fragments tests/unit/*.mk define the host tests, built into UNIT_DIR. `make unit` runs them
# three times: plain (HOSTCC, into $(B)/unit), then with AddressSanitizer and
# UndefinedBehaviorSanitizer under GCC and under clang, each build from the same fragments into
# its own folder (UNIT_DIR and HOSTCC set by a sub-make, UNIT_SAN=1 adds the flags). Any report
# ends the test with an error: nothing is only printed.
UNIT_DIR    ?= $(B)/unit
UNIT_SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
UNIT_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -I. -DBTSX_HOST \
               $(if $(UNIT_SAN),$(UNIT_SAN_FLAGS))
UNIT_LIBS   := -lcmocka
UNIT_TESTS  :=
include $(sort $(wildcard tests/unit/*.mk))
include tests/fuzz/fuzz.mk

# detect_leaks: LeakSanitizer reports memory still held at exit (on by default with ASan on
# x86-64 Linux; said here so that no environment turns it off unseen).
UNIT_SAN_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
UNIT_SAN_RUNS := unit-asan-gcc unit-asan-clang
.PHONY: unit-plain unit-run $(UNIT_SAN_RUNS)

unit: unit-plain $(UNIT_SAN_RUNS)

unit-plain: unit-run

# A fragment may give a test arguments for the sanitized passes only (UNIT_SAN_ARGS_name).
unit-run: $(UNIT_TESTS)
	@set -e; $(foreach t,$(UNIT_TESTS),echo "== $(t)"; \
	    $(if $(UNIT_SAN),$(UNIT_SAN_ENV)) ./$(t) $(if $(UNIT_SAN),$(UNIT_SAN_ARGS_$(notdir $(t))));)

# The three passes are independent (each its own folder) and may run at once (make -j); the
# one host tool they share is built first, by the plain compiler.
unit-asan-gcc unit-asan-clang: $(B)/btsx-rand
	$(MAKE) --no-print-directory unit-run UNIT_SAN=1 UNIT_DIR=$(B)/$@ \
	    HOSTCC=$(patsubst unit-asan-%,%,$@)

tools-check:
	$(PYTHON) -m unittest discover -s tools -p 'test_*.py'

# The Python tools: the btsx package, its launchers and their tests (setup.cfg configures both).
PY_TOOLS := tools/btsx tools/btsx-run tools/btsx-trace tools/btsx-char tools/btsx-mutate tools/btsx-lava \
            tools/bench.py \
            $(sort $(wildcard tools/test_*.py))
lint:
	@command -v mypy >/dev/null && command -v flake8 >/dev/null || $(MAKE) deps
	mypy --strict $(PY_TOOLS)
	flake8 $(PY_TOOLS)

# Every suite in every configuration, each configuration a different machine:
# - direct with two CPUs, bios with one, uefi with four (QEMU TCG runs vCPUs on host threads;
#   the idle ones halt), so every suite runs with 1, 2 and 4 CPUs on one of the boot paths;
# - the long tests (ds.stream, bts.task.stream, bts.task.stress) in full on direct, at a tenth
#   (volume=quick) elsewhere: bios and uefi are about the boot paths and firmware, and Bochs
#   single-steps the BTS model about 20 times slower than QEMU TCG;
# - bochs-skylake in x2APIC mode (its SMEP/SMAP and x2APIC), bochs (Core 2) in xAPIC mode.
KERNEL_CHECK_OPTS := --smp direct=2 --smp uefi=4 \
    --config-append bios=volume=quick --config-append uefi=volume=quick \
    --config-append bochs=volume=quick --config-append 'bochs-skylake=volume=quick apic=x2apic'

kernel-check: all
	$(RUNNER) --config $(CONFIGS) -j 2 --junit $(B)/junit.xml $(KERNEL_CHECK_OPTS)

# The hardware path under the model (model=hw): the suites may rely only on the hardware profile.
# Seeds 1 and 4 (NMI) at full volume; 2, 3 and 6 (NMI) with the long tests at a tenth.
HW_TESTS = tests=bts.*,ds.*,bts.task.*,char.*,rand.*
HW_HEADER = --expect-header 'profile=hw (pmi_skid_max=8 *'

# The framework's self-test and the runs that cover one option or machine each: independent
# runner invocations, two at a time, each one's output kept together (--output-sync).
SELFTEST_RUNS := st-selftest st-badcmdline st-nomatch st-badcmdline-bochs st-nmi st-hpet st-nopit \
                 st-hwonly st-netburst st-hw-seed1 st-hw-seed2 st-hw-seed3 st-hw-nmi st-hw-nmi2 \
                 st-char-narrow st-handlers st-badskid \
                 st-p4 st-icelake st-screen-fail st-screen-pass st-screen-uefi st-serial
# (kernel-check runs every suite on bochs-skylake in x2APIC mode.)
X2APIC_RUNS := st-x2apic-nmi
# Several CPUs (kernel/smp.c): QEMU with -smp 2 and -smp 4; Bochs's Skylake with two, in x2APIC
# mode (QEMU's TCG has no x2APIC).
# (kernel-check runs every suite with two CPUs on direct and four on uefi.)
SMP_RUNS := st-smp1 st-badsmp st-smp-x2apic
.PHONY: $(SELFTEST_RUNS) $(X2APIC_RUNS) $(SMP_RUNS)

selftest: all
	$(MAKE) --no-print-directory -j 2 --output-sync=target $(SELFTEST_RUNS)

x2apic-check: all
	$(MAKE) --no-print-directory -j 2 --output-sync=target $(X2APIC_RUNS)

smp-check: all
	$(MAKE) --no-print-directory -j 2 --output-sync=target $(SMP_RUNS)

# smp=1 on four: one CPU, the smp suite skips; smp=0 is a bad command line.
st-smp1:
	$(RUNNER) --config direct --smp 4 --tag smp1 --append "smp=1 tests=smp.*" \
	    --expect 'smp.bad_option=pass,smp.user_gs=pass,smp.*=skip' \
	    --expect-header 'cpus=1 online (apic ids 0)' \
	    --expect-header 'offline=apic id 1: not started (smp=); *'
st-badsmp:
	$(RUNNER) --config direct --smp 2 --tag badsmp --append "smp=0" --expect-exit 2
st-smp-x2apic:
	$(RUNNER) --config bochs-skylake --smp 2 --tag smp-x2apic \
	    --append "apic=x2apic volume=quick selftest=1 tests=selftest.hang_ap*,smp.*,apic.*,bts.smp.*" \
	    --expect $(HANG_AP_EXPECT) \
	    --expect-header 'cpus=2 online (apic ids 0,1)' --expect-header 'apic=x2apic,*'

# The deliberate failures among the suites that run before and after them (test order is link
# order: boot, ..., sched, selftest, smp, stack, bts.task): the run goes on past each. Two CPUs:
# the hangs on an application processor run too, and the smp suite after them.
st-selftest:
	$(RUNNER) --config direct --smp 2 --tag selftest --expect $(SELFTEST_EXPECT_SMP) --append \
	    "selftest=1 volume=quick tests=boot.*,framework.*,sched.*,selftest.*,smp.*,stack.*,bts.task.*"
# The self-test's outcomes: SELFTEST_EXPECT on one CPU, where the hangs on an application
# processor (selftest.hang_ap*) skip; SELFTEST_EXPECT_SMP on several, where they time out and the
# check after them passes.
SELFTEST_EXPECT_ALL := selftest.fault=fail,selftest.hang=timeout,selftest.fail=fail
SELFTEST_EXPECT_ALL := $(SELFTEST_EXPECT_ALL),selftest.hang_irqoff=timeout,selftest.stack_smash=fail
HANG_AP_EXPECT := selftest.hang_ap=timeout,selftest.hang_ap_irqoff=timeout,selftest.hang_ap_user=timeout,
HANG_AP_EXPECT := $(HANG_AP_EXPECT)selftest.hang_ap_after=pass
SELFTEST_EXPECT := $(SELFTEST_EXPECT_ALL),selftest.hang_ap*=skip
SELFTEST_EXPECT_SMP := $(SELFTEST_EXPECT_ALL),$(HANG_AP_EXPECT)
# The summary screen, read through QEMU's monitor after an exit=halt run (--expect-screen):
# VGA text with the self-test's expected failures (a version-6 or 7 QR code) and with none
# (version 7, 2-module zone), the framebuffer's verdict band (version 12, level H); on each the
# QR code is decoded by zbarimg and must be the serial log's report.
st-screen-fail:
	$(RUNNER) --config bios --tag screen-fail --append "selftest=1 tests=boot.*,selftest.*" \
	    --expect $(SELFTEST_EXPECT) --expect-screen
st-screen-pass:
	$(RUNNER) --config bios --tag screen-pass --append "tests=boot.*,bts.basic*" --expect-screen
st-screen-uefi:
	$(RUNNER) --config uefi --tag screen-uefi --append "tests=boot.*,bts.basic*" --expect-screen
# console=serial: no screen is attached (the header says so); the report is still on COM1.
st-serial:
	$(RUNNER) --config direct --tag serial --append "console=serial tests=boot.*,bts.basic*" \
	    --expect-header 'screen=none *'
st-badcmdline:
	$(RUNNER) --config direct --tag badcmdline --append "bogus=1" --expect-exit 2
st-nomatch:
	$(RUNNER) --config direct --tag nomatch --append "tests=no.such.test" --expect-exit 2
st-badcmdline-bochs:
	$(RUNNER) --config bochs --tag badcmdline --append "bogus=1" --expect-exit 2
# Two CPUs: bts.smp's tasks on the AP take threshold NMIs, which its watchdog must not claim.
st-nmi:
	$(RUNNER) --config direct --smp 2 --tag nmi --append "pmi=nmi volume=quick tests=bts.*,ds.*,apic.*,nmi.*"
st-hpet:
	$(RUNNER) --config direct --tag hpet --append "clock=hpet tests=apic.*,sched.*"
st-nopit:
	QEMU=$(CURDIR)/tools/qemu-nopit $(RUNNER) --config direct --tag nopit \
	    --append "selftest=1 tests=apic.*,sched.*,selftest.hang_irqoff" \
	    --expect selftest.hang_irqoff=timeout --expect-header 'apic=*(hpet; no PIT: *'
st-hwonly:
	$(RUNNER) --config direct --tag hwonly --append "backend=hw tests=bts.*,ds.*,sched.*,char.*" \
	    --expect 'bts.*=skip,ds.*=skip,sched.*=pass,char.*=skip'
st-netburst:
	$(RUNNER) --config direct --tag netburst --append "model.layout=netburst volume=quick tests=bts.*,ds.*"
st-hw-seed1:
	$(RUNNER) --config direct --tag hw-seed1 --append "model=hw seed=1 volume=quick $(HW_TESTS)" $(HW_HEADER)
st-hw-seed2:
	$(RUNNER) --config direct --tag hw-seed2 --append "model=hw seed=2 volume=quick $(HW_TESTS)" $(HW_HEADER)
st-hw-seed3:
	$(RUNNER) --config direct --tag hw-seed3 --append "model=hw seed=3 volume=quick $(HW_TESTS)" $(HW_HEADER)
st-hw-nmi:
	$(RUNNER) --config direct --tag hw-nmi --append "model=hw seed=4 pmi=nmi volume=quick $(HW_TESTS)" $(HW_HEADER)
st-char-narrow:
	$(RUNNER) --config direct --tag char-narrow \
	    --append "model=hw model.skid=0 model.offos_returns=never seed=5 tests=char.*" \
	    --expect-header 'profile=hw (pmi_skid_max=0 *'
st-hw-nmi2:
	$(RUNNER) --config direct --tag hw-nmi2 --append "model=hw seed=6 pmi=nmi volume=quick $(HW_TESTS)" $(HW_HEADER)
st-badskid:
	$(RUNNER) --config direct --tag badskid --append "model.skid=9" --expect-exit 2
st-handlers:
	$(RUNNER) --config direct --tag handlers --append "model.handler_records=always volume=quick tests=bts.*,ds.*" \
	    --expect-header 'profile=exact (*handler_records=always *'
st-p4:
	$(RUNNER) --config bochs-p4 --tag p4 --append "tests=bts.jmp,ds.circular,ds.debugctl_layout,msr.*" \
	    --expect-header 'backend=*(0xc, netburst layout)*' --expect-header 'debugctl=netburst *'
st-icelake:
	$(RUNNER) --config bochs-icelake --tag icelake --append "tests=apic.*" \
	    --expect-header 'apic=*(pit; cpuid-0x15 said *'
st-x2apic-nmi:
	$(RUNNER) --config bochs-skylake --tag x2apic-nmi --append "apic=x2apic pmi=nmi volume=quick $(X2APIC_TESTS)"

# The UBSan kernel (README, "The UBSan kernel"): built by GCC into $(B)/ubsan and run once, every
# suite with the self-test, the long tests at a tenth (volume=quick: their full volume runs on
# the plain kernel); the timeout leaves room for a loaded machine. No report may fail any test
# but the self-test's own (--expect), whose failures include two planted ones. clang's build is
# checked by clang-build.
UBSAN_EXPECT := $(SELFTEST_EXPECT),selftest.ubsan_overflow=fail,selftest.ubsan_bounds=fail
SELFTEST_RUNS += st-ubsan
.PHONY: ubsan st-ubsan
ubsan:
	$(MAKE) --no-print-directory B=$(B)/ubsan UBSAN=1 kernel
st-ubsan: ubsan
	$(PYTHON) tools/btsx-run --build $(B)/ubsan --accel $(ACCEL) --config direct --tag ubsan \
	    --timeout 600 --append "selftest=1 volume=quick" --expect $(UBSAN_EXPECT) --expect-header 'ubsan=on (*'

# Each fault of tools/mutants.txt applied to a copy of the built tree, the kernel rebuilt, and the
# bts, ds and bts.task suites run under model=exact and model=hw: every fault must be caught.
# The table goes to $(B)/mutate.md and $(B)/mutate.csv.
mutate: kernel
	$(PYTHON) tools/btsx-mutate --build $(B) --accel $(ACCEL)

# ------------------------------------------------------------------- LAVA
# lava/ holds the job templates and device dictionaries a LAVA lab needs (README, "Running
# btsx in a LAVA lab"). make lava renders the QEMU jobs and the bare-metal ones, validates
# every file with lava_common's schemas (jobs strictly), runs the QEMU jobs with lava-run,
# and judges the logs with tools/btsx-lava: LAVA's test cases must be the kernel's KTAP results
# (names, outcomes, one per planned test), the self-test job's exactly its deliberate failures.
# lava-run runs as root only; Debian installs lava_common for /usr/bin/python3.
LAVA_OUT  := $(B)/lava
LAVA_PY   := /usr/bin/python3
LAVA_IMG  := file://$(abspath $(B))
LAVA_OVMF := /usr/share/OVMF
LAVA      := $(PYTHON) tools/btsx-lava
# The default suite (every test, the long ones at a tenth) on the direct boot, a few suites on
# each ISO boot, and the framework's self-test: about a minute of lava-run under TCG.
LAVA_QEMU_JOBS := direct bios uefi selftest
LAVA_BAREMETAL := baremetal-grub-kernel baremetal-grub-iso

lava-install:
	@if command -v lava-run >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then \
	    echo "lava: installing lava-dispatcher"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lava-dispatcher; \
	else \
	    echo "lava: lava-dispatcher is not installed; run:"; \
	    echo "  sudo apt-get install -y lava-dispatcher"; exit 1; \
	fi

# Every template rendered and checked, and every device dictionary (no lava-run, no root).
lava-validate:
	$(LAVA_PY) tools/btsx-lava validate

lava: all lava-install
	@rm -rf $(LAVA_OUT) && mkdir -p $(LAVA_OUT)
	$(LAVA) render lava/jobs/qemu-direct.yaml --append 'volume=quick' \
	    --image kernel=$(LAVA_IMG)/btsx32.elf -o $(LAVA_OUT)/direct.yaml
	$(LAVA) render lava/jobs/qemu-bios.yaml --append 'tests=boot.*,cmdline.*' \
	    --image iso=$(LAVA_IMG)/btsx.iso -o $(LAVA_OUT)/bios.yaml
	$(LAVA) render lava/jobs/qemu-uefi.yaml --append 'tests=boot.*,paging.*' \
	    --image iso=$(LAVA_IMG)/btsx.iso --image ovmf_code=file://$(LAVA_OVMF)/OVMF_CODE_4M.fd \
	    --image ovmf_vars=file://$(LAVA_OVMF)/OVMF_VARS_4M.fd -o $(LAVA_OUT)/uefi.yaml
	$(LAVA) render lava/jobs/qemu-direct.yaml --append 'selftest=1 tests=boot.*,selftest.*' \
	    --image kernel=$(LAVA_IMG)/btsx32.elf -o $(LAVA_OUT)/selftest.yaml
	$(LAVA) render lava/jobs/baremetal-grub.yaml --append 'tests=char.*,bts.*,ds.*' \
	    --image kernel=$(LAVA_IMG)/btsx.elf -o $(LAVA_OUT)/baremetal-grub-kernel.yaml
	$(LAVA) render lava/jobs/baremetal-grub.yaml --append 'tests=char.*,bts.*,ds.*' \
	    --image iso=$(LAVA_IMG)/btsx.iso -o $(LAVA_OUT)/baremetal-grub-iso.yaml
	$(LAVA_PY) tools/btsx-lava validate $(patsubst %,$(LAVA_OUT)/%.yaml,$(LAVA_QEMU_JOBS) $(LAVA_BAREMETAL))
	@# The dispatcher's own dry run of the bare-metal jobs against the x86 device dictionary.
	$(Q)set -e; for j in $(LAVA_BAREMETAL); do \
	    lava-run --validate --device lava/devices/x86-btsx.yaml --dispatcher lava/dispatcher.yaml \
	        --job-id btsx-$$j-$$$$ --output-dir $(LAVA_OUT)/$$j $(LAVA_OUT)/$$j.yaml \
	        > $(LAVA_OUT)/$$j.log 2>&1 || { echo "lava: lava-run --validate $$j failed:"; \
	        grep '"error_msg"' $(LAVA_OUT)/$$j.log; exit 1; }; \
	    echo "  lava-run --validate $$j: ok"; done
	@# Each job its own id: lava-run keeps its downloads under /var/lib/lava/dispatcher/tmp/ID.
	$(Q)for j in $(LAVA_QEMU_JOBS); do \
	    start=$$(date +%s); \
	    lava-run --device lava/devices/qemu-btsx.yaml --dispatcher lava/dispatcher.yaml \
	        --job-id btsx-$$j-$$$$ --output-dir $(LAVA_OUT)/$$j $(LAVA_OUT)/$$j.yaml \
	        > $(LAVA_OUT)/$$j.log 2>&1; \
	    echo "  lava-run $$j: exit $$?, $$(( $$(date +%s) - start )) s, log $(LAVA_OUT)/$$j.log"; done
	@# Both judgements are printed before either fails the target.
	$(Q)rc=0; echo "lava: the self-test job, its deliberate failures expected"; \
	$(LAVA) results --junit $(LAVA_OUT)/junit-selftest.xml direct=$(LAVA_OUT)/selftest.log \
	    --expect $(SELFTEST_EXPECT) || rc=1; \
	echo "lava: the direct (every suite), bios and uefi jobs"; \
	$(LAVA) results --junit $(LAVA_OUT)/junit.xml direct=$(LAVA_OUT)/direct.log \
	    bios=$(LAVA_OUT)/bios.log uefi=$(LAVA_OUT)/uefi.log || rc=1; \
	exit $$rc

# make check's part: the templates always (where lava_common is, or can be, installed), the jobs
# wherever lava-run can run them (as root: installed if missing); each skip says why.
lava-check:
	@if [ "$$(id -u)" = 0 ]; then \
	    $(MAKE) --no-print-directory lava-install lava-validate lava; \
	elif $(LAVA_PY) -c 'import lava_common' 2>/dev/null; then \
	    $(MAKE) --no-print-directory lava-validate && \
	    echo "lava: jobs not run: lava-run runs as root only (make lava as root runs them)"; \
	else \
	    echo "lava: templates not validated and jobs not run: lava-dispatcher is not installed"; \
	    echo "      (its lava_common schemas validate the templates) and installing it needs root:"; \
	    echo "      sudo apt-get install -y lava-dispatcher; sudo make lava"; \
	fi

# Both compilers must build the kernel, and the UBSan kernel: clang's builds go to folders of
# their own.
clang-build:
	$(MAKE) --no-print-directory B=$(B)/clang CC=clang kernel
	$(MAKE) --no-print-directory B=$(B)/ubsan-clang CC=clang UBSAN=1 kernel

# make check: the kernels first (the decoder's objdump test reads both images), then every
# independent step two at a time (make -j 2; each step's output kept together), the mutation
# run, and the kernel suites last so that the last line is their total, which CI reads.
# The longest steps first, so that the two lanes end together (fuzz-check's short runs are
# timed, 5 s each, whatever else runs beside them).
CHECK_STEPS := st-ubsan fuzz-check lava-check $(UNIT_SAN_RUNS) unit-plain clang-build \
               objdump-check lint tools-check $(X2APIC_RUNS) $(SELFTEST_RUNS) $(SMP_RUNS)
.PHONY: check-steps objdump-check

check: deps
	$(MAKE) --no-print-directory all
	$(MAKE) --no-print-directory -j 2 --output-sync=target check-steps
	$(MAKE) --no-print-directory mutate
	$(MAKE) --no-print-directory kernel-check

check-steps: $(CHECK_STEPS)

objdump-check: clang-build unit-plain
	$(B)/unit/test_decode_objdump $(B)/clang/btsx.elf

bench: all
	$(PYTHON) tools/bench.py --build $(B) --accel $(ACCEL)

# Formats every C source with .clang-format (Debian's clang-format).
format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(B)
