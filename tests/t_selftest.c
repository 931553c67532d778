/*
 * selftest.*: tests built to go wrong (only with selftest=1). `make check` asserts the
 * framework reports exactly these outcomes and still completes the run: a fault is contained,
 * a hang is cut by the watchdog, a failed check fails, a hang with interrupts off is cut by
 * the NMI watchdog, and a task of the test hanging on an application processor, with
 * interrupts on or off, is ended there (sched/supervise.c); then selftest.hang_ap_after, which
 * must pass, finds that processor usable again and the hung tasks freed.
 */
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/mem.h"
#include "kernel/nmiwd.h"
#include "kernel/smp.h"
#include "sched/sched.h"
#include "tests/test.h"
#include "tests/usertest.h"

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

/* The hangs on CPU 1: how many ran, how many of their joins the watchdog's end of the task
 * woke (status E_TIMEDOUT), and what was free before the first (frames, heap) and how many
 * tasks the watchdog had ended there. */
#define HANG_CPU 1
static unsigned hangs, hangs_irqoff, woken;
static uint64_t frames_before;
static uint32_t stopped_before, stopped_nmi_before;
static size_t heap_before;

static void spin(void *irqoff)
{
    if (irqoff)
        irq_disable();
    for (;;)
        cpu_relax();
}

/* A task on CPU 1 that never ends: a kernel one spinning (with interrupts off if irqoff), or,
 * with user set, a user one in uc_spin with 2^64 passes to go. */
static void hang_on_ap(bool irqoff, bool user)
{
    if (smp_online() <= HANG_CPU) {
        test_skip("one CPU online: no application processor to hang");
        return;
    }
    if (hangs++ == 0) {
        frames_before = frames_free_count(&kernel_frames);
        heap_before = heap_free_bytes();
        stopped_before = smp_cpu(HANG_CPU)->wd_stopped;
        stopped_nmi_before = smp_cpu(HANG_CPU)->wd_stopped_nmi;
    }
    hangs_irqoff += irqoff;
    struct task *t =
        user ? task_create_user_on(HANG_CPU, "hang_ap_user", USER_PROG(uc_spin), 0, 0, 0)
             : task_create_on(HANG_CPU, irqoff ? "hang_ap_irqoff" : "hang_ap", spin,
                              irqoff ? (void *)1 : NULL);
    CHECK(t != NULL, "no task on cpu %u", HANG_CPU);
    if (!t)
        return;
    if (user)
        task_launch(t);
    int status = 0;
    CHECK_EQ(task_join(t, &status), 0);
    test_info("the task on cpu %u ended with status %d", HANG_CPU, status);
    if (status == E_TIMEDOUT)
        woken++;
}

/* Only the watchdog on CPU 1 can end these: the runner waits in task_join() on CPU 0. */
TEST_FLAGS(selftest, hang_ap, "a task on cpu 1 spins forever, the runner joins it", HANG_TIMEOUT_MS,
           TEST_FLAG_SELFTEST)
{
    hang_on_ap(false, false);
}

/* CPU 0's interrupts stay on: only an NMI reaches CPU 1. */
TEST_FLAGS(selftest, hang_ap_irqoff, "a task on cpu 1 spins forever with interrupts off",
           HANG_TIMEOUT_MS, TEST_FLAG_SELFTEST)
{
    hang_on_ap(true, false);
}

/* At CPL 3 when the watchdog's IPI comes: the task ends from a user frame. */
TEST_FLAGS(selftest, hang_ap_user, "a user task on cpu 1 loops forever", HANG_TIMEOUT_MS,
           TEST_FLAG_SELFTEST)
{
    hang_on_ap(false, true);
}

static void where(void *arg)
{
    *(volatile unsigned *)arg = this_cpu()->cpu;
}

/* A processor the watchdog could not free would never run the new task: the join would hang
 * and the watchdog end this test, after a short timeout. */
#define AFTER_TIMEOUT_MS 2000
TEST_FLAGS(selftest, hang_ap_after, "after the hangs, cpu 1 runs a task again; they were freed",
           AFTER_TIMEOUT_MS, TEST_FLAG_SELFTEST)
{
    if (smp_online() <= HANG_CPU || hangs == 0) {
        test_skip("no hang ran on cpu %u (%u CPU(s) online)", HANG_CPU, smp_online());
        return;
    }
    CHECK(woken == hangs, "%u of %u hung task(s) ended with E_TIMEDOUT and woke the joiner", woken,
          hangs);
    /* Each ended there, the one with interrupts off by the NMI, the other by the fixed IPI. */
    CHECK_EQ(smp_cpu(HANG_CPU)->wd_stopped - stopped_before, hangs);
    CHECK_EQ(smp_cpu(HANG_CPU)->wd_stopped_nmi - stopped_nmi_before, hangs_irqoff);
    /* The hung tasks' stacks and structures (a task left running keeps both). */
    CHECK_EQ(frames_free_count(&kernel_frames), frames_before);
    CHECK_EQ(heap_free_bytes(), heap_before);
    volatile unsigned ran_on = ~0u;
    struct task *t = task_create_on(HANG_CPU, "hang_ap_after", where, (void *)&ran_on);
    CHECK(t != NULL, "no task on cpu %u", HANG_CPU);
    if (!t)
        return;
    CHECK_EQ(task_join(t, NULL), 0);
    CHECK_EQ(ran_on, HANG_CPU);
}
