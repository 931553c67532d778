/*
 * selftest.*: four tests built to go wrong (only with selftest=1). `make check` asserts the
 * framework reports exactly these outcomes and still completes the run: a fault is contained,
 * a hang is cut by the watchdog, a failed check fails, and a hang with interrupts off is cut by
 * the NMI watchdog.
 */
#include "kernel/cpu.h"
#include "kernel/nmiwd.h"
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

/* If the NMI watchdog failed to stop it, every later test (bts.task.* runs after this file)
 * would go missing at the host's timeout, and on hardware the machine would just hang. */
TEST_FLAGS(selftest, hang_irqoff, "spins forever with interrupts off", HANG_TIMEOUT_MS,
           TEST_FLAG_SELFTEST)
{
    if (!nmi_watchdog_available()) {
        test_skip("no NMI watchdog here: %s", nmi_watchdog_describe());
        return;
    }
    irq_disable();
    for (;;)
        cpu_relax();
}
