/*
 * bts.smp.*: the Debug Store on several CPUs at once. Each CPU holds its own DS state
 * (kernel/percpu.h): its idle DS area, the trace it has loaded, the BTS model's registers and
 * stepping, its LVT PC; a threshold interrupt is taken by the CPU whose DS area reached the
 * threshold. The application processors run their part through smp_run() (kernel/smp.h),
 * outside any interrupt handler, while the bootstrap CPU runs its own. Every test skips on one
 * CPU.
 */
#include "ds/backend.h"
#include "ds/bts.h"
#include "ds/model.h"
#include "kernel/apic.h"
#include "kernel/errno.h"
#include "kernel/smp.h"
#include "tests/btscheck.h"
#include "tests/test.h"

#define FIB_N        12
#define HW_RECORDS   64 /* with THRESH: the headroom pmi_case() in t_ds.c gives any skid */
#define THRESH       40
#define RING_RECORDS 4096
#define MAX_RECORDS  4096
#define RUN_WAIT_US  60000000 /* single-stepped fib(12) on a loaded emulator's vCPU */

extern const char tc_fib[];

#define BTS_SMP_TEST(case, description, timeout)                                                   \
    TEST_DEFINE(bts_smp_##case, "bts.smp." #case, description, timeout, 0)

static bool need_aps(void)
{
    if (smp_online() > 1)
        return true;
    test_skip("one CPU online (%u listed in the MADT%s%s)", smp_madt_count(),
              smp_note()[0] ? "; " : "", smp_note());
    return false;
}

/* What one CPU did and saw, filled in on that CPU. */
struct cpu_run {
    struct bts_trace t;
    unsigned cpu;                                  /* the CPU it ran on */
    uint64_t idle;                                 /* that CPU's idle DS area */
    uint64_t area_before, area_traced, area_after; /* IA32_DS_AREA as that CPU's backend reads it */
    uint32_t lvt_pc;
    int err;
};

static struct cpu_run runs[SMP_MAX_CPUS];
static struct bts_record got[MAX_RECORDS], want[MAX_RECORDS], plain[MAX_RECORDS];

static void cpu_trace(void *arg)
{
    struct cpu_run *r = arg;
    const struct bts_backend *b = bts_backend();
    r->cpu = this_cpu()->cpu;
    r->idle = (uint64_t)this_cpu()->ds_idle;
    r->lvt_pc = apic_read(APIC_LVT_PC);
    r->area_before = b->read_ds_area();
    r->err = bts_attach(&r->t);
    if (r->err)
        return;
    r->area_traced = b->read_ds_area();
    r->err = bts_run(&r->t, (void (*)(void *))tc_fib, (void *)FIB_N);
    bts_detach();
    r->area_after = b->read_ds_area();
}

BTS_SMP_TEST(each_cpu,
             "every CPU traces fib(12) at once into its own DS area: each trace exact, each CPU's "
             "threshold interrupts its own",
             0)
{
    if (!need_aps() || !bts_require())
        return;
    unsigned n = smp_online();
    struct bts_config cfg = cfg_interrupt(HW_RECORDS, THRESH, RING_RECORDS, BTS_POLICY_STOP,
                                          BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct model_stats s0[SMP_MAX_CPUS], s1;
    uint64_t spurious0[SMP_MAX_CPUS];
    for (unsigned i = 0; i < n; i++) {
        runs[i] = (struct cpu_run){.err = E_STATE};
        if (!CHECK_EQ(bts_configure(&runs[i].t, &cfg), 0)) {
            for (unsigned j = 0; j < i; j++)
                bts_release(&runs[j].t);
            return;
        }
        model_get_cpu_stats(i, &s0[i]);
        spurious0[i] = bts_spurious_pmis_cpu(i);
    }
    for (unsigned i = 1; i < n; i++)
        CHECK_EQ(smp_run_start(i, cpu_trace, &runs[i]), 0);
    cpu_trace(&runs[0]); /* the bootstrap CPU's own, meanwhile */
    for (unsigned i = 1; i < n; i++)
        CHECK_EQ(smp_run_wait(i, RUN_WAIT_US), 0);

    const struct bts_bounds *bounds = bts_bounds();
    struct expect code, e;
    exp_init(&code, plain, MAX_RECORDS);
    exp_prologue(&code, tc_fib);
    exp_fib(&code, FIB_N, LBL(bts_run_returned));
    exp_epilogue(&code);
    uint64_t at_entry;
    exp_init(&e, want, MAX_RECORDS);
    uint64_t pmis = exp_with_pmis(&code, &e, HW_RECORDS, THRESH, pmi_is_nmi(), &at_entry);
    for (unsigned i = 0; i < n; i++) {
        struct cpu_run *r = &runs[i];
        struct bts_status st;
        CHECK(r->err == 0, "cpu %u: %s", i, err_name(r->err));
        CHECK(r->cpu == i, "cpu %u's part ran on cpu %u", i, r->cpu);
        CHECK(r->idle != 0, "cpu %u has no idle DS area", i);
        for (unsigned j = 0; j < i; j++)
            CHECK(runs[j].idle != r->idle, "cpus %u and %u share the idle DS area %#lx", j, i,
                  r->idle);
        CHECK(r->area_before == r->idle && r->area_after == r->idle,
              "cpu %u: IA32_DS_AREA %#lx before, %#lx after, its idle area %#lx", i, r->area_before,
              r->area_after, r->idle);
        CHECK(r->area_traced == (uint64_t)r->t.ds, "cpu %u: IA32_DS_AREA %#lx, its trace's %p", i,
              r->area_traced, (void *)r->t.ds);
        /* Programmed by the CPU itself, as the bootstrap CPU's, and unmasked at the end. */
        CHECK(r->lvt_pc == runs[0].lvt_pc, "cpu %u: LVT PC %#x, the bootstrap CPU's %#x", i,
              r->lvt_pc, runs[0].lvt_pc);
        CHECK(!(r->lvt_pc & APIC_LVT_MASKED), "cpu %u: LVT PC %#x masked", i, r->lvt_pc);
        if (!CHECK_EQ(bts_status(&r->t, &st), 0))
            continue;
        /* Every threshold interrupt this CPU raised was taken here, for this trace. */
        model_get_cpu_stats(i, &s1);
        if (bts_backend_is_model())
            CHECK(st.pmis == s1.pmis - s0[i].pmis,
                  "cpu %u: its trace took %lu PMIs, its model raised %lu", i, st.pmis,
                  s1.pmis - s0[i].pmis);
        CHECK(bts_spurious_pmis_cpu(i) == spurious0[i], "cpu %u: %lu spurious PMIs", i,
              bts_spurious_pmis_cpu(i) - spurious0[i]);
        CHECK(st.lost == 0 && !st.overflowed, "cpu %u: %lu records lost", i, st.lost);
        int64_t k = trace_collect(&r->t, got, MAX_RECORDS);
        test_info("cpu %u: %ld records, %lu PMIs at %lu..%lu records", i, k, st.pmis, st.pmi_at_min,
                  st.pmi_at_max);
        if (k >= 0 && bounds->interrupt_records_exact) {
            CHECK(st.pmis == pmis, "cpu %u: %lu PMIs, expected %lu", i, st.pmis, pmis);
            exp_match(got, (size_t)k, &e);
        }
    }
    if (!bounds->interrupt_records_exact)
        test_diag("the %s profile leaves the PMIs' places open: records not compared",
                  bounds->name);
    for (unsigned i = 0; i < n; i++)
        bts_release(&runs[i].t);
}
