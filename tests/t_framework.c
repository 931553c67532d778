/*
 * framework.*: what the test framework promises tests, beyond containment (the selftest.*
 * tests cover that). framework.all_reported, the synthetic last check, is in framework.c.
 */
#include "kernel/cpu.h"
#include "kernel/apic.h"
#include "tests/test.h"

#define PROGRESS_TIMEOUT_MS 300
#define PROGRESS_RUN_US     1000000 /* over three timeouts */
#define PROGRESS_STEP_US    50000

/* A long test that reports progress (test_progress(), as a rand.* soak does) outlives its
 * timeout: the watchdog counts from the last progress, not from the start. */
TEST(framework, progress, "a test that reports progress runs past its timeout", PROGRESS_TIMEOUT_MS)
{
    uint64_t t0 = rdtsc(), last = t0, steps = 0;
    while (tsc_to_us(rdtsc() - t0) < PROGRESS_RUN_US) {
        if (tsc_to_us(rdtsc() - last) >= PROGRESS_STEP_US) {
            test_progress();
            last = rdtsc();
            steps++;
        }
        cpu_relax();
    }
    test_diag("ran %lu us with a %u ms timeout, %lu progress reports", tsc_to_us(rdtsc() - t0),
              PROGRESS_TIMEOUT_MS, steps);
}
