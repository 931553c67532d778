/*
 * char.*: where this machine's BTS lies in the envelope the SDM leaves open (docs/hardware.md
 * §12), measured by doing, on any backend. Each test measures one fact, prints it as one
 * `# char: FACT VALUE key=value...` line (the format is a contract with tools/btsx-char:
 * docs/hardware.md §13) and checks it against the guarantee profile in use: on silicon a fact
 * outside the hardware profile means the profile is wrong; under the model the fact must be
 * what the model's settings make it.
 */
#include "ds/backend.h"
#include "ds/bts.h"
#include "ds/debugctl.h"
#include "ds/model.h"
#include "kernel/apic.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/trap.h"
#include "kernel/user.h"
#include "sched/sched.h"
#include "sched/syscall.h"
#include "tests/btscheck.h"
#include "tests/test.h"
#include "tests/usertest.h"

extern const char tc_spin[], tc_int[], tc_chain[];
extern const char tc_ipi_xapic[], tc_ipi_xapic_sled[], tc_ipi_xapic_ret[];
extern const char tc_ipi_x2apic[], tc_ipi_x2apic_sled[], tc_ipi_x2apic_ret[];

#define MAX_RECORDS 1024
static struct bts_record got[MAX_RECORDS];

/* "yes"/"no"/"sometimes" (or the always/never spelling) for k events of n. */
static const char *how_often(uint64_t k, uint64_t n, const char *all, const char *none)
{
    return k == n ? all : k == 0 ? none : "sometimes";
}

/* Whether an answer measured k of n times is one the profile's value allows. */
static bool maybe_allows(enum bts_maybe m, uint64_t k, uint64_t n)
{
    return m == BTS_EITHER || (m == BTS_ALWAYS ? k == n : k == 0);
}

static const char *maybe_name(enum bts_maybe m)
{
    return m == BTS_NEVER ? "never" : m == BTS_ALWAYS ? "always" : "either";
}

/* ---------------------------------------------------------------- the model's settings */

TEST(char, model, "the model's settings, for the report", 0)
{
    if (!bts_require())
        return;
    if (!bts_backend_is_model()) {
        test_skip("the model is not the backend in use");
        return;
    }
    struct model_freedoms f;
    model_get_freedoms(&f);
    test_diag("char: model profile=%s skid=%u offos_returns=%s handler_records=%s layout=%s "
              "pmi=%s seed=%lu",
              bts_profile()->name, f.skid, maybe_name(f.offos_returns),
              maybe_name(f.handler_records), bts_layout()->name, pmi_is_nmi() ? "nmi" : "fixed",
              test_seed());
}

/* ---------------------------------------------------- the threshold interrupt: skid, order */

/* The threshold low, so that one run gives hundreds of PMIs. Above it the headroom takes the
 * hardware profile's skid and entry records (§4) and, on silicon, where the handlers are
 * traced, the records pmi_probe() itself stores before the DS layer's handler clears TR
 * (a few per slot it reads): the buffer must never fill (O1). */
#define PMI_THRESH 8
#define PMI_HW     (PMI_THRESH + BTS_PMI_HEADROOM + 256)
#define PMI_WANT   512  /* PMIs measured: enough to see every skid 0..BTS_HW_SKID_MAX */
#define PMI_LOOPS  2048 /* tc_spin passes per run */
#define PMI_RUNS   16   /* runs at most: PMI_WANT is reached long before */

static struct pmi_sample {
    uint64_t n, skid_min, skid_max, before, after;
} pmi_sample;
static bool pmi_measured;
static trap_handler_t pmi_handler;
static unsigned pmi_vec;

/* The PMI as it arrives, before the DS layer's handler. The record that reached the
 * threshold is the one in slot PMI_THRESH - 1; if that is the entry into this very interrupt
 * (or the index is still below the threshold) the PMI came before the threshold record. The
 * records stored after it that are the traced code's own are the skid; the way into the
 * handler adds others (entry, stub, calls), which are not code records. */
static void pmi_probe(struct trap_frame *f)
{
    const struct ds_area *ds = loaded_ds_area();
    if (ds && ds->bts_base) {
        struct pmi_sample *s = &pmi_sample;
        const struct bts_record *r = (const struct bts_record *)ds->bts_thresh;
        const struct bts_record *end = (const struct bts_record *)ds->bts_index;
        if (ds->bts_index < ds->bts_thresh || r[-1].to == trap_stub_address(pmi_vec)) {
            s->after++;
        } else {
            uint64_t skid = 0;
            for (; r < end; r++)
                skid += in_traced_code(r->from) && in_traced_code(r->to);
            if (s->before == 0 || skid < s->skid_min)
                s->skid_min = skid;
            if (skid > s->skid_max)
                s->skid_max = skid;
            s->before++;
        }
        s->n++;
    }
    pmi_handler(f);
}

/* Runs tc_spin traced in interrupt mode until PMI_WANT PMIs have been sampled (once per boot:
 * char.pmi_skid and char.threshold_record share it). False: the test failed or skipped. */
static bool pmi_measure(void)
{
    if (pmi_measured)
        return true;
    struct bts_config cfg = cfg_interrupt(PMI_HW, PMI_THRESH, 256, BTS_POLICY_WRAP,
                                          BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return false;
    pmi_sample = (struct pmi_sample){0};
    pmi_vec = pmi_is_nmi() ? VEC_NMI : VEC_PMI;
    uint64_t spurious = bts_spurious_pmis();
    pmi_handler = trap_set_handler(pmi_vec, pmi_probe);
    for (unsigned run = 0; run < PMI_RUNS && pmi_sample.n < PMI_WANT; run++)
        bts_run(&t, (void (*)(void *))tc_spin, (void *)PMI_LOOPS);
    trap_set_handler(pmi_vec, pmi_handler);
    struct bts_status st;
    bool ok = CHECK_EQ(bts_status(&t, &st), 0);
    trace_teardown(&t);
    /* Every PMI of the trace went through the probe, and nothing else did. */
    ok = ok && CHECK(st.pmis + bts_spurious_pmis() - spurious == pmi_sample.n,
                     "%lu PMIs taken, %lu spurious, the probe saw %lu", st.pmis,
                     bts_spurious_pmis() - spurious, pmi_sample.n);
    ok = ok && CHECK(pmi_sample.n >= PMI_WANT, "only %lu PMIs in %u runs", pmi_sample.n, PMI_RUNS);
    pmi_measured = ok;
    return ok;
}

TEST(char, pmi_skid, "how many records late the threshold interrupt comes", 0)
{
    if (!bts_require() || !pmi_measure())
        return;
    const struct pmi_sample *s = &pmi_sample;
    const struct bts_profile *p = bts_profile();
    if (s->before == 0) {
        /* Allowed where the record may follow the PMI (char.threshold_record checks that). */
        test_skip("none of %lu PMIs found the threshold record stored: no skid after it", s->n);
        return;
    }
    test_diag("char: pmi_skid_records min=%lu max=%lu n=%lu", s->skid_min, s->skid_max, s->before);
    CHECK(s->skid_max <= p->pmi_skid_max, "a PMI came %lu records late, the %s profile allows %u",
          s->skid_max, p->name, p->pmi_skid_max);
    if (bts_backend_is_model()) {
        /* The model draws each skid from 0..model.skid: with this many PMIs both ends show. */
        struct model_freedoms f;
        model_get_freedoms(&f);
        CHECK(s->skid_min == 0 && s->skid_max == f.skid,
              "model.skid=%u: measured %lu..%lu over %lu PMIs, expected 0..%u", f.skid, s->skid_min,
              s->skid_max, s->before, f.skid);
    }
}

TEST(char, threshold_record, "whether the record that reaches the threshold precedes the PMI", 0)
{
    if (!bts_require() || !pmi_measure())
        return;
    const struct pmi_sample *s = &pmi_sample;
    const struct bts_profile *p = bts_profile();
    test_diag("char: threshold_record_before_pmi %s n=%lu", how_often(s->before, s->n, "yes", "no"),
              s->n);
    CHECK(!p->threshold_record_first || s->after == 0,
          "%lu of %lu PMIs came before the threshold record, the %s profile says it is first",
          s->after, s->n, p->name);
    /* The model stores a record before it decides on the PMI (store() in ds/model.c). */
    if (bts_backend_is_model())
        CHECK(s->after == 0, "the model raised %lu of %lu PMIs before the threshold record",
              s->after, s->n);
}

/* ------------------------------------------------------------ interrupt handlers' branches */

#define HANDLER_RUNS 32 /* two interrupts each (int3, int n) */

static void ignore_trap(struct trap_frame *f)
{
    (void)f;
}

/* For each interrupt in a trace of kernel code (entry record into a trap stub from known code),
 * whether kernel records other than the known code's come before its IRETQ back. */
static void count_handler_records(const struct bts_record *r, int64_t n, uint64_t *irqs,
                                  uint64_t *with)
{
    for (int64_t i = 0; i < n; i++) {
        if (!in_traced_code(r[i].from) || (r[i].to != trap_stub_address(VEC_BP) &&
                                           r[i].to != trap_stub_address(VEC_TEST_SOFTINT)))
            continue;
        (*irqs)++;
        bool seen = false;
        for (i++; i < n && r[i].from != LBL(isr_iretq); i++)
            seen |= !in_traced_code(r[i].from) && !in_traced_code(r[i].to);
        *with += seen;
    }
}

TEST(char, handler_records, "whether the interrupt handlers' own branches are recorded", 0)
{
    if (!bts_require())
        return;
    trap_handler_t old3 = trap_set_handler(VEC_BP, ignore_trap);
    trap_handler_t oldn = trap_set_handler(VEC_TEST_SOFTINT, ignore_trap);
    uint64_t irqs = 0, with = 0;
    for (unsigned run = 0; run < HANDLER_RUNS && !test_failed(); run++) {
        struct bts_config cfg = cfg_circular(MAX_RECORDS, BTS_CPL_KERNEL);
        struct bts_trace t;
        if (!trace_setup(&t, &cfg))
            break;
        bts_run(&t, (void (*)(void *))tc_int, NULL);
        int64_t n = trace_collect(&t, got, MAX_RECORDS);
        count_handler_records(got, n, &irqs, &with);
        trace_teardown(&t);
    }
    trap_set_handler(VEC_BP, old3);
    trap_set_handler(VEC_TEST_SOFTINT, oldn);
    if (test_failed())
        return;
    const struct bts_profile *p = bts_profile();
    test_diag("char: handler_records %s n=%lu", how_often(with, irqs, "yes", "no"), irqs);
    CHECK(irqs == 2 * HANDLER_RUNS, "%lu interrupts in the traces, %u raised", irqs,
          2 * HANDLER_RUNS);
    CHECK(maybe_allows(p->handler_records, with, irqs),
          "handler records for %lu of %lu interrupts, the %s profile says %s", with, irqs, p->name,
          maybe_name(p->handler_records));
    if (bts_backend_is_model()) {
        /* The model records them as model.handler_records says; either draws per interrupt
         * (about half of them), so 64 interrupts show both outcomes. */
        struct model_freedoms f;
        model_get_freedoms(&f);
        CHECK(maybe_allows(f.handler_records, with, irqs) &&
                  (f.handler_records != BTS_EITHER || (with > 0 && with < irqs)),
              "model.handler_records=%s: handler records for %lu of %lu interrupts",
              maybe_name(f.handler_records), with, irqs);
    }
}

/* ------------------------------------------------- the CPL filter at a change of privilege */

/* uc_sys traced with a CPL filter into out; the record count, or -1 (the test failed). */
static int64_t run_sys(unsigned cpl, struct bts_record *out)
{
    struct bts_config cfg =
        cfg_interrupt(512, 0, MAX_RECORDS, BTS_POLICY_STOP, BTS_EVENTS_BRANCHES, cpl);
    struct bts_trace t = {0};
    int err = bts_configure(&t, &cfg);
    if (err) {
        test_fail("trace: %s", err_name(err));
        return -1;
    }
    struct task *tk = user_task("char", USER_PROG(uc_sys), 0, 0);
    if (!CHECK(tk, "no user task")) {
        bts_release(&t);
        return -1;
    }
    task_set_trace(tk, task_current(), &t);
    bts_enable(&t);
    int status = -1;
    task_join(tk, &status);
    CHECK_EQ(status, 0);
    int64_t n = trace_collect(&t, out, MAX_RECORDS);
    bts_release(&t);
    return test_failed() ? -1 : n;
}

static bool has(const struct bts_record *r, int64_t n, uint64_t from, uint64_t to)
{
    for (int64_t i = 0; i < n; i++)
        if (r[i].from == from && r[i].to == to)
            return true;
    return false;
}

#define OFFOS_RUNS 24 /* two kernel-to-user returns each: the IRETQ in, the SYSRETQ back */

TEST(char, offos_returns, "whether kernel-to-user returns are recorded under BTS_OFF_OS", 0)
{
    if (!bts_require())
        return;
    uint64_t seen = 0, n = 0;
    for (unsigned run = 0; run < OFFOS_RUNS; run++) {
        int64_t k = run_sys(BTS_CPL_USER, got);
        if (k < 0)
            return;
        seen += has(got, k, LBL(user_enter_iretq), UADDR(uc_sys, uc_sys_start));
        seen += has(got, k, LBL(syscall_sysretq), UADDR(uc_sys, uc_sys_after));
        n += 2;
    }
    const struct bts_profile *p = bts_profile();
    test_diag("char: offos_kernel_to_user_returns %s n=%lu", how_often(seen, n, "always", "never"),
              n);
    CHECK(maybe_allows(p->offos_user_returns, seen, n),
          "%lu of %lu returns recorded, the %s profile says %s", seen, n, p->name,
          maybe_name(p->offos_user_returns));
    if (bts_backend_is_model()) {
        /* either: each return is a coin toss, so 48 of them show both outcomes. */
        struct model_freedoms f;
        model_get_freedoms(&f);
        CHECK(f.offos_returns != BTS_EITHER || (seen > 0 && seen < n),
              "model.offos_returns=either: %lu of %lu recorded, expected sometimes", seen, n);
    }
}

TEST(char, syscall_cpl_filter, "which CPL the filter applies to SYSCALL: before or after it", 0)
{
    if (!bts_require())
        return;
    const uint64_t from = UADDR(uc_sys, uc_sys_call), to = LBL(syscall_entry);
    int64_t k = run_sys(BTS_CPL_KERNEL, got); /* BTS_OFF_USR: kept if CPL 0 (after) counts */
    if (k < 0)
        return;
    bool kernel_only = has(got, k, from, to);
    k = run_sys(BTS_CPL_USER, got); /* BTS_OFF_OS: kept if CPL 3 (before) counts */
    if (k < 0)
        return;
    bool user_only = has(got, k, from, to);
    const char *uses = kernel_only && !user_only   ? "destination"
                       : user_only && !kernel_only ? "source"
                       : user_only                 ? "both"
                                                   : "neither";
    test_diag("char: syscall_cpl_filter uses=%s n=2", uses);
    /* Every transfer produces a message (§7): one of the two filters keeps it. */
    CHECK(kernel_only || user_only, "the SYSCALL record is missing under both filters");
    /* The model filters on the CPL after the transfer (store() in ds/model.c, §6). */
    if (bts_backend_is_model())
        CHECK(kernel_only && !user_only, "the model's filter used the %s CPL", uses);
}

/* -------------------------------------------------- a full buffer in interrupt mode (O1) */

#define FULL_HW     256 /* allocated; the absolute maximum is set at FULL_MAX */
#define FULL_MAX    16
#define FULL_THRESH 8
#define FULL_LOOPS  64

TEST(char, full_buffer, "what a full interrupt-mode buffer does while the PMI is held off", 0)
{
    if (!bts_require())
        return;
    struct bts_config cfg = cfg_interrupt(FULL_HW, FULL_THRESH, 256, BTS_POLICY_STOP,
                                          BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    /* The absolute maximum at FULL_MAX records of the FULL_HW allocated, recording off: the
     * records past it are zero guard slots, so a CPU writing beyond the maximum shows. */
    struct ds_area *ds = loaded_ds_area();
    uint64_t real_max = ds->bts_abs_max;
    ds->bts_abs_max = ds->bts_base + FULL_MAX * BTS_RECORD_SIZE;
    /* LVT PC masked: the PMI is not delivered (SDM Vol. 3A, "Local Vector Table"). */
    uint32_t lvt = apic_read(APIC_LVT_PC);
    apic_write(APIC_LVT_PC, lvt | APIC_LVT_MASKED);
    /* Not bts_run(), which drains the buffer at its end. Interrupts off: no handler records
     * on silicon, so FULL_LOOPS and a few records are all there is, far fewer than the guard
     * slots. */
    bool irq = irq_save();
    bts_enable(&t);
    ((void (*)(uint64_t))tc_spin)(FULL_LOOPS);
    bts_disable(&t);
    irq_restore(irq);
    uint64_t idx = ds->bts_index, guard = 0;
    const struct bts_record *slot = (const struct bts_record *)ds->bts_base;
    for (unsigned i = FULL_MAX; i < FULL_HW; i++)
        guard += slot[i].from != 0 || slot[i].to != 0;
    /* Far more records than slots were made: a buffer that neither stops nor writes past the
     * maximum has wrapped to base (a wrap never leaves the index at the maximum). */
    const char *what = idx > ds->bts_abs_max || guard ? "overruns"
                       : idx == ds->bts_abs_max       ? "stops"
                                                      : "wraps";
    /* tc_spin(n) alone takes n branches (n - 1 back, the return): at least that many less
     * FULL_MAX came past the maximum. */
    uint64_t past = FULL_LOOPS - FULL_MAX;
    test_diag("char: full_buffer_interrupt_mode %s n=%lu", what, past);
    test_info("index at %ld records, %lu guard slots written",
              (int64_t)(idx - ds->bts_base) / BTS_RECORD_SIZE, guard);
    /* Put the trace back as configured, empty, before LVT PC is unmasked: an interrupt the
     * APIC held would find nothing to drain (a spurious PMI, counted and ignored). */
    ds->bts_index = ds->bts_base;
    ds->bts_abs_max = real_max;
    apic_write(APIC_LVT_PC, lvt);
    trace_teardown(&t);
    /* The model drops the record at a full buffer (store() in ds/model.c, §4). */
    if (bts_backend_is_model())
        CHECK(what[0] == 's', "the model's full buffer %s", what);
}

/* ------------------------------------------------------------ the DEBUGCTL layout (O9) */

/* Records the loaded trace's buffer gains over one untraced call of tc_chain with DEBUGCTL = v
 * written through the backend. */
static uint64_t chain_records(uint64_t v)
{
    const struct ds_area *ds = loaded_ds_area();
    uint64_t before = ds->bts_index;
    bts_backend()->write_debugctl(v);
    ((void (*)(void))tc_chain)();
    bts_backend()->write_debugctl(0);
    return (ds->bts_index - before) / BTS_RECORD_SIZE;
}

TEST(char, debugctl_layout, "which DEBUGCTL layout's TR|BTS makes the CPU store records", 0)
{
    if (!bts_require())
        return;
    const struct debugctl_layout *l = bts_layout();
    const struct debugctl_layout *other =
        l == &debugctl_netburst ? &debugctl_core : &debugctl_netburst;
    struct bts_config cfg = cfg_circular(MAX_RECORDS, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    bool mine = chain_records(l->tr | l->bts) > 0;
    /* On silicon the other layout's TR|BTS are reserved bits (#GP) or other controls, so only
     * the model, whose shadow register takes any value, is asked with them too. */
    bool tried_other = bts_backend_is_model();
    bool theirs = tried_other && chain_records(other->tr | other->bts) > 0;
    trace_teardown(&t);
    const char *what = mine && theirs ? "both" : mine ? l->name : theirs ? other->name : "none";
    test_diag("char: debugctl_layout %s tried=%s%s%s", what, l->name, tried_other ? "," : "",
              tried_other ? other->name : "");
    CHECK(mine && !theirs, "%s recorded, the layout in use is %s", what, l->name);
}

/* --------------------------------------------------- where an interrupt lands (§7, O6) */

#define IRQ_RUNS 64

static volatile unsigned ipi_hits;
static void count_ipi(struct trap_frame *f)
{
    (void)f;
    ipi_hits++;
    apic_eoi();
}

/* A self-IPI sent from traced code followed by a sled of one-byte NOPs: the record of its
 * delivery names the instruction it was taken at, so its offset in the sled is how many
 * instructions ran after the one that sent it (0: the next instruction, as the model does). */
TEST(char, irq_landing, "how many instructions after the sending one a self-IPI is taken", 0)
{
    if (!bts_require())
        return;
    trap_handler_t old = trap_set_handler(VEC_TEST_IPI, count_ipi);
    bool x2 = apic_is_x2apic();
    const char *fn = x2 ? tc_ipi_x2apic : tc_ipi_xapic;
    const char *sled = x2 ? tc_ipi_x2apic_sled : tc_ipi_xapic_sled;
    const char *ret = x2 ? tc_ipi_x2apic_ret : tc_ipi_xapic_ret;
    /* xAPIC: RDI = ICR low, RSI = value; x2APIC: RSI = vector (RDI unused). */
    uint64_t icr = (rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_ADDR_MASK) + APIC_ICR_LO;
    uint64_t val = x2 ? VEC_TEST_IPI : (APIC_ICR_SELF | APIC_ICR_ASSERT | VEC_TEST_IPI);
    uint64_t args[2] = {icr, val};
    uint64_t n = 0, min = UINT64_MAX, max = 0;
    for (unsigned run = 0; run < IRQ_RUNS && !test_failed(); run++) {
        struct bts_config cfg = cfg_circular(MAX_RECORDS, BTS_CPL_KERNEL);
        struct bts_trace t;
        if (!trace_setup(&t, &cfg))
            break;
        ipi_hits = 0;
        bts_run(&t, (void (*)(void *))fn, args);
        int64_t k = trace_collect(&t, got, MAX_RECORDS);
        trace_teardown(&t);
        uint64_t at = 0;
        for (int64_t i = 0; i < k; i++)
            if (got[i].to == trap_stub_address(VEC_TEST_IPI) && in_traced_code(got[i].from))
                at = got[i].from;
        if (!CHECK(ipi_hits == 1 && at >= LBL(sled) && at < LBL(ret),
                   "run %u: IPI delivered %u times, recorded at %#lx, the sled is %#lx..%#lx", run,
                   ipi_hits, at, LBL(sled), LBL(ret)))
            break;
        uint64_t late = at - LBL(sled);
        min = late < min ? late : min;
        max = late > max ? late : max;
        n++;
    }
    trap_set_handler(VEC_TEST_IPI, old);
    if (test_failed())
        return;
    test_diag("char: irq_landing_insns min=%lu max=%lu n=%lu", min, max, n);
    CHECK(!bts_profile()->irq_lands_exactly || max == 0,
          "an IPI landed %lu instructions late, the %s profile says it lands exactly", max,
          bts_profile()->name);
    /* The model takes an interrupt before the next instruction it would step (§7). */
    if (bts_backend_is_model())
        CHECK(max == 0, "the model took an IPI %lu instructions late", max);
}
