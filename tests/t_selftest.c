/*
 * selftest.*: three tests built to go wrong (only with selftest=1). `make check` asserts the
 * framework reports exactly these outcomes and still completes the run: a fault is contained,
 * a hang is cut by the watchdog, a failed check fails.
 */
#include "kernel/cpu.h"
#include "tests/test.h"

#define HANG_TIMEOUT_MS 300

TEST_FLAGS(selftest, fault, "dereferences a bad pointer", 0, TEST_FLAG_SELFTEST)
{
    uintptr_t bad = 0x8;
    __asm__("" : "+r"(bad)); /* hide the constant: the compiler must not judge it */
    *(volatile uint64_t *)bad = 1;
    test_diag("still running after the fault: the framework is broken");
}

TEST_FLAGS(selftest, hang, "spins forever", HANG_TIMEOUT_MS, TEST_FLAG_SELFTEST)
{
    for (;;)
        cpu_relax();
}

TEST_FLAGS(selftest, fail, "fails a check", 0, TEST_FLAG_SELFTEST)
{
    CHECK_EQ(1 + 1, 3);
}
