/*
 * smp.*: the application processors the MADT lists came up (kernel/smp.c), each is the CPU it
 * says it is, and each takes what is sent to it and nothing else: its own LAPIC timer at the
 * bootstrap CPU's calibration, a fixed IPI and an NMI from the bootstrap CPU, while the
 * bootstrap CPU's own self-IPIs and self-NMIs stay with it. Every test skips on one CPU.
 */
#include "kernel/apic.h"
#include "kernel/errno.h"
#include "kernel/extable.h"
#include "kernel/paging.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/trap.h"
#include "sched/sched.h"
#include "tests/test.h"
#include "tests/usertest.h"

#define IDS_TEXT_MAX  160
#define TIMER_US      2000
#define TIMER_WAIT_US 1000000
#define IPI_WAIT_US   100000
#define US_PER_S      1000000

static void smp_header(void (*line)(const char *fmt, ...))
{
    char ids[IDS_TEXT_MAX] = "";
    size_t at = 0;
    for (unsigned i = 0; i < smp_online() && at < sizeof(ids); i++)
        at += (size_t)ksnprintf(ids + at, sizeof(ids) - at, "%s%u", i ? "," : "",
                                smp_cpu(i)->apic_id);
    line("cpus: %u online (apic ids %s)%s%s", smp_online(), ids, smp_note()[0] ? "; " : "",
         smp_note());
    char out[IDS_TEXT_MAX] = "";
    at = 0;
    for (unsigned i = 0; i < smp_madt_count() && at < sizeof(out); i++) {
        const struct smp_cpu *c = smp_madt_cpu(i);
        if (c->state != SMP_ONLINE)
            at += (size_t)ksnprintf(out + at, sizeof(out) - at, "%sapic id %u: %s", at ? "; " : "",
                                    c->apic_id, smp_state_name(c->state));
    }
    if (at)
        line("offline: %s", out);
}
TEST_HEADER(smp_header);

static bool need_aps(void)
{
    if (smp_online() > 1)
        return true;
    test_skip("one CPU online (%u listed in the MADT%s%s)", smp_madt_count(),
              smp_note()[0] ? "; " : "", smp_note());
    return false;
}

TEST(smp, online, "every CPU the MADT enables came up, or was left out by smp=", 0)
{
    unsigned enabled = 0, up = 0, left = 0;
    for (unsigned i = 0; i < smp_madt_count(); i++) {
        const struct smp_cpu *c = smp_madt_cpu(i);
        left += c->state == SMP_NOT_STARTED;
        enabled += (c->flags & 1) && c->state != SMP_DUPLICATE;
    }
    /* Not need_aps(): an AP that failed to come up must fail this test, not skip it. */
    if (enabled <= 1 || enabled == left + 1) {
        test_skip("no other CPU to start: the MADT lists %u, enables %u, smp= left out %u%s%s",
                  smp_madt_count(), enabled, left, smp_note()[0] ? "; " : "", smp_note());
        return;
    }
    enabled = 0;
    for (unsigned i = 0; i < smp_madt_count(); i++) {
        const struct smp_cpu *c = smp_madt_cpu(i);
        if (!(c->flags & 1) || c->state == SMP_DUPLICATE)
            continue;
        enabled++;
        up += c->state == SMP_ONLINE;
        CHECK(c->state == SMP_ONLINE || c->state == SMP_NOT_STARTED,
              "apic id %u: %s (after %lu us)", c->apic_id, smp_state_name(c->state), c->start_us);
        if (c->state == SMP_ONLINE)
            test_info("apic id %u: cpu %d, online %lu us after its INIT", c->apic_id, c->cpu,
                      c->start_us);
    }
    CHECK_EQ(up, smp_online());
    CHECK(enabled >= smp_online(), "%u online but the MADT enables %u", smp_online(), enabled);
}

struct whoami {
    unsigned cpu;
    uint32_t apic_id;
    uint64_t gs;
};

static void whoami(void *arg)
{
    struct whoami *w = arg;
    w->cpu = this_cpu()->cpu;
    w->apic_id = apic_id();
    w->gs = rdmsr(MSR_GS_BASE);
}

TEST(smp, apic_ids, "the online CPUs' APIC IDs are unique and those of their MADT entries", 0)
{
    if (!need_aps())
        return;
    for (unsigned i = 0; i < smp_online(); i++) {
        struct percpu *p = smp_cpu(i);
        CHECK_EQ(p->cpu, i);
        CHECK(p->self == p, "cpu %u: percpu self %p", i, (void *)p->self);
        for (unsigned j = 0; j < i; j++)
            CHECK(smp_cpu(j)->apic_id != p->apic_id, "cpus %u and %u both have apic id %u", j, i,
                  p->apic_id);
        unsigned found = 0;
        for (unsigned k = 0; k < smp_madt_count(); k++) {
            const struct smp_cpu *c = smp_madt_cpu(k);
            if (c->cpu == (int)i) {
                found++;
                CHECK(c->apic_id == p->apic_id, "cpu %u reports apic id %u, its MADT entry %u", i,
                      p->apic_id, c->apic_id);
            }
        }
        CHECK(found == 1, "cpu %u named by %u MADT entries", i, found);
    }
    /* Each AP, asked through its own IPI, reads its LAPIC and its GS again. */
    for (unsigned i = 1; i < smp_online(); i++) {
        struct whoami w = {~0u, ~0u, 0};
        int err = smp_call(i, whoami, &w, false);
        if (!CHECK(err == 0, "cpu %u: smp_call %s", i, err_name(err)))
            continue;
        CHECK(w.cpu == i && w.apic_id == smp_cpu(i)->apic_id && w.gs == (uint64_t)smp_cpu(i),
              "cpu %u answered as cpu %u, apic id %u, gs %#lx", i, w.cpu, w.apic_id, w.gs);
    }
}

static void arm_timer(void *arg)
{
    (void)arg;
    smp_timer_oneshot_us(TIMER_US);
}

static bool wait_for(volatile uint64_t *v, uint64_t want, uint64_t us)
{
    uint64_t end = rdtsc() + us * tsc_hz() / US_PER_S;
    while (*v < want && rdtsc() < end)
        cpu_relax();
    return *v >= want;
}

TEST(smp, timer, "each AP takes its own LAPIC timer, not early for the calibration", 0)
{
    if (!need_aps())
        return;
    for (unsigned i = 1; i < smp_online(); i++) {
        struct percpu *p = smp_cpu(i);
        uint64_t before = p->timer_irqs;
        int err = smp_call(i, arm_timer, NULL, false);
        if (!CHECK(err == 0, "cpu %u: smp_call %s", i, err_name(err)))
            continue;
        if (!CHECK(wait_for(&p->timer_irqs, before + 1, TIMER_WAIT_US),
                   "cpu %u: its %u us timer never fired", i, TIMER_US))
            continue;
        CHECK_EQ(p->timer_irqs, before + 1);
        uint64_t us = tsc_to_us(p->timer_fired_tsc - p->timer_armed_tsc);
        test_info("cpu %u: a %u us one-shot fired after %lu us", i, TIMER_US, us);
        /* As apic.oneshot allows the bootstrap CPU's: the rates are a measurement. */
        CHECK(us * 100 >= TIMER_US * 95ULL, "cpu %u: a %u us one-shot fired after %lu us", i,
              TIMER_US, us);
    }
}

static void count_call(void *arg)
{
    (*(volatile unsigned *)arg)++;
}

static void ipi_test(bool nmi)
{
    if (!need_aps())
        return;
    for (unsigned i = 1; i < smp_online(); i++) {
        struct percpu *p = smp_cpu(i);
        uint64_t irqs = p->call_irqs, nmis = p->call_nmis;
        volatile unsigned ran = 0;
        struct whoami w = {~0u, ~0u, 0};
        int err = smp_call(i, count_call, (void *)&ran, nmi);
        if (!CHECK(err == 0, "cpu %u: smp_call %s", i, err_name(err)))
            continue;
        err = smp_call(i, whoami, &w, nmi);
        CHECK(err == 0 && w.cpu == i, "cpu %u: the second call %s, ran on cpu %u", i, err_name(err),
              w.cpu);
        CHECK_EQ(ran, 1);
        CHECK_EQ(p->call_irqs, irqs + (nmi ? 0 : 2));
        CHECK_EQ(p->call_nmis, nmis + (nmi ? 2 : 0));
    }
}

TEST(smp, ipi, "each AP runs a function sent as a fixed IPI, once, and answers", 0)
{
    ipi_test(false);
}

TEST(smp, nmi, "each AP runs a function sent as an NMI, once, and answers", 0)
{
    ipi_test(true);
}

/* #UD with an entry in the fixup table, as the MSR probes (kernel/cpu.c) fault with #GP. */
static void ud_fixup(void *arg)
{
    int reached = 0;
    __asm__ volatile("1: ud2\n2:\n\t"
                     ".pushsection .fixup, \"ax\"\n"
                     "3: movl $1, %0\n\tjmp 2b\n\t"
                     ".popsection\n\t" EXTABLE_ENTRY(1b, 3b)
                     : "+r"(reached));
    *(volatile int *)arg = reached;
}

TEST(smp, ap_fixup, "an exception on an AP with a fixup entry resumes there, on the AP", 0)
{
    if (!need_aps())
        return;
    for (unsigned i = 1; i < smp_online(); i++) {
        volatile int reached = 0;
        int err = smp_call(i, ud_fixup, (void *)&reached, false);
        CHECK(err == 0 && reached == 1, "cpu %u: smp_call %s, fixup reached %d", i, err_name(err),
              reached);
    }
}

static volatile unsigned bsp_hits;
static void bsp_irq(struct trap_frame *f)
{
    (void)f;
    bsp_hits++;
    apic_eoi();
}
static void bsp_nmi(struct trap_frame *f)
{
    (void)f;
    bsp_hits++;
}

TEST(smp, bsp_only, "the bootstrap CPU's self-IPI and self-NMI reach no AP", 0)
{
    if (!need_aps())
        return;
    uint64_t irqs[SMP_MAX_CPUS], nmis[SMP_MAX_CPUS];
    for (unsigned i = 1; i < smp_online(); i++) {
        irqs[i] = smp_cpu(i)->call_irqs + smp_cpu(i)->timer_irqs;
        nmis[i] = smp_cpu(i)->call_nmis;
    }
    bool irq = irq_save();
    trap_handler_t old_ipi = trap_set_handler(VEC_TEST_IPI, bsp_irq);
    trap_handler_t old_nmi = trap_set_handler(VEC_NMI, bsp_nmi);
    bsp_hits = 0;
    apic_self_ipi(VEC_TEST_IPI);
    apic_self_nmi();
    irq_enable();
    uint64_t end = rdtsc() + IPI_WAIT_US * tsc_hz() / US_PER_S;
    while (bsp_hits < 2 && rdtsc() < end)
        cpu_relax();
    irq_disable();
    trap_set_handler(VEC_TEST_IPI, old_ipi);
    trap_set_handler(VEC_NMI, old_nmi);
    irq_restore(irq);
    CHECK_EQ(bsp_hits, 2);
    for (unsigned i = 1; i < smp_online(); i++) {
        CHECK(smp_cpu(i)->call_irqs + smp_cpu(i)->timer_irqs == irqs[i], "cpu %u took an interrupt",
              i);
        CHECK(smp_cpu(i)->call_nmis == nmis[i], "cpu %u took an NMI", i);
    }
}

TEST(smp, bad_option, "smp=0 and smp=x are refused as a bad command line", 0)
{
    static const char *const bad[] = {"smp=0", "smp=x", "smp=", "smp=All"};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char err[120] = "";
        int rc = cmdline_parse(bad[i], err, sizeof(err));
        CHECK(rc == CMDLINE_EVALUE, "'%s': %s (%s)", bad[i], err_name(rc), err);
        CHECK(memcmp(err, "bad value", 9) == 0 || memcmp(err, "missing value", 13) == 0, "'%s': %s",
              bad[i], err);
        const char *at = err;
        while (*at && memcmp(at, "'smp'", 5) != 0)
            at++;
        CHECK(*at, "'%s': the message names no option: %s", bad[i], err);
    }
}

extern const char uc_gs_start[], uc_gs_end[], uc_gs_load[];

TEST(smp, user_gs, "a user task runs with its own GS base, 0, before and after a system call", 0)
{
    for (uint64_t after_syscall = 0; after_syscall < 2; after_syscall++) {
        struct task *t = user_task("gs", USER_PROG(uc_gs), after_syscall, 0);
        if (!t)
            return;
        task_wait(t);
        if (CHECK(t->faulted, "no fault reading %%gs:0 (after a system call: %lu)",
                  after_syscall)) {
            CHECK(t->fault.vector == VEC_PF && t->fault.user &&
                      t->fault.rip == UADDR(uc_gs, uc_gs_load),
                  "vector %u user %d at %#lx", t->fault.vector, t->fault.user, t->fault.rip);
            CHECK(t->fault.cr2 == 0 && !(t->fault.error_code & PF_ERR_P),
                  "%%gs:0 read %#lx (error code %#lx), not address 0: a kernel GS base in user "
                  "mode (after a system call: %lu)",
                  t->fault.cr2, t->fault.error_code, after_syscall);
        }
        int status = 0;
        task_join(t, &status);
        CHECK(status == E_FAULT, "exit status %d", status);
    }
}

static void bad_deref(void *arg)
{
    (void)arg;
    uintptr_t bad = 0x8;
    __asm__("" : "+r"(bad)); /* hide the constant: the compiler must not judge it */
    *(volatile uint64_t *)bad = 1;
}

/* A task that must have ended by a fault of `vector` at rip `at` (0: anywhere) on CPU `cpu`. */
static void expect_fault_on(const char *what, unsigned cpu, struct task *t, unsigned vector,
                            bool user, uint64_t at)
{
    if (!CHECK(t, "%s: no task on cpu %u", what, cpu))
        return;
    task_launch(t);
    task_wait(t);
    if (CHECK(t->faulted, "%s on cpu %u: no fault", what, cpu))
        CHECK(t->fault.vector == vector && t->fault.user == user && (!at || t->fault.rip == at),
              "%s on cpu %u: vector %u user %d at %#lx", what, cpu, t->fault.vector, t->fault.user,
              t->fault.rip);
    CHECK(t->cpu == cpu, "%s: ran on cpu %u, not %u", what, t->cpu, cpu);
    int status = 0;
    task_join(t, &status);
    CHECK(status == E_FAULT, "%s on cpu %u: exit status %d", what, cpu, status);
}

TEST(smp, task_fault, "a task's fault on an AP ends that task, as on the bootstrap CPU", 0)
{
    if (!need_aps())
        return;
    for (unsigned i = 1; i < smp_online(); i++) {
        /* A kernel task's bad pointer, then a user task's %gs:0 read (a #PF at CPL 3). */
        struct task *k = task_create_on(i, "bad_deref", bad_deref, NULL);
        if (k)
            task_wait(k);
        if (CHECK(k, "no task on cpu %u", i) &&
            CHECK(k->faulted, "kernel task on cpu %u: no fault", i)) {
            CHECK(k->fault.vector == VEC_PF && !k->fault.user && k->fault.cr2 == 0x8,
                  "kernel task on cpu %u: vector %u user %d cr2 %#lx", i, k->fault.vector,
                  k->fault.user, k->fault.cr2);
        }
        if (k) {
            int status = 0;
            task_join(k, &status);
            CHECK(status == E_FAULT, "kernel task on cpu %u: exit status %d", i, status);
        }
        struct task *u = task_create_user_on(i, "gs", USER_PROG(uc_gs), 0, 0, 0);
        expect_fault_on("user task", i, u, VEC_PF, true, UADDR(uc_gs, uc_gs_load));
    }
}
