/*
 * ds.*: the Debug Store's semantics, through the same DS layer on either backend: the circular
 * buffer (and its drain), the threshold interrupt and its count, disable/enable/clear, invalid
 * configurations, spurious PMIs, the DEBUGCTL layout the model reads, what a DS switch writes, and
 * the stream policy carrying a million branches without loss.
 */
#include "ds/backend.h"
#include "ds/bts.h"
#include "ds/debugctl.h"
#include "ds/model.h"
#include "kernel/apic.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/string.h"
#include "kernel/trap.h"
#include "sched/sched.h"
#include "tests/btscheck.h"
#include "tests/test.h"

#define TC_CHAIN_LEN 64 /* tests/bts_code.S */
#define CHAIN_STEP   2  /* each link is EB 00 */
#define MAX_RECORDS  4096

extern const char tc_chain[], tc_chain_ret[];
extern const char tc_spin[], tc_spin_top[], tc_spin_jnz[], tc_spin_ret[];
extern const char _text_start[], _text_end[];

static struct bts_record got[MAX_RECORDS], want[MAX_RECORDS], plain[MAX_RECORDS],
    split[MAX_RECORDS];

/* The whole trace of one bts_run(tc_chain). */
static void chain_expect(struct expect *e)
{
    exp_prologue(e, tc_chain);
    for (uint64_t i = 0; i < TC_CHAIN_LEN; i++)
        exp_add(e, LBL(tc_chain) + i * CHAIN_STEP, LBL(tc_chain) + (i + 1) * CHAIN_STEP);
    exp_return(e, tc_chain_ret);
    exp_epilogue(e);
}

static void circular_case(uint32_t n)
{
    struct bts_config cfg = cfg_circular(n, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    struct expect all, tail;
    exp_init(&all, plain, MAX_RECORDS);
    chain_expect(&all);
    CHECK(all.n > n, "the chain must overrun the buffer");
    exp_init(&tail, want, MAX_RECORDS);
    for (size_t i = all.n - n; i < all.n; i++)
        exp_add(&tail, all.rec[i].from, all.rec[i].to);

    bts_run(&t, (void (*)(void *))tc_chain, NULL);
    CHECK_EQ(bts_count(&t), n);
    int64_t k = trace_collect_code(&t, got, MAX_RECORDS);
    if (k >= 0)
        exp_match(got, (size_t)k, &tail);
    /* The index has wrapped to where the next record of the sequence would go. */
    const struct ds_area *ds = loaded_ds_area();
    CHECK_EQ(ds->bts_index, ds->bts_base + (all.n % n) * BTS_RECORD_SIZE);
    trace_teardown(&t);
}

TEST(ds, circular, "circular mode holds exactly the newest N records, in order, index wrapped", 0)
{
    if (!bts_require())
        return;
    circular_case(8);
    circular_case(13);
}

TEST(ds, circular_drain, "a circular drain removes the oldest records it returns, keeps the rest",
     0)
{
    if (!bts_require())
        return;
    enum { N = 13, TAKE = 5 };
    struct bts_config cfg = cfg_circular(N, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    bts_run(&t, (void (*)(void *))tc_chain, NULL); /* wraps: the buffer is full */
    static struct bts_record all[N], part[N];
    CHECK_EQ(bts_count(&t), N);
    CHECK_EQ(bts_get_raw(&t, 0, N, all), N);
    CHECK_EQ(bts_drain_raw(&t, part, 0), 0); /* taking none changes nothing */
    CHECK_EQ(bts_count(&t), N);
    CHECK_EQ(bts_drain_raw(&t, part, TAKE), TAKE);
    CHECK(memcmp(part, all, TAKE * sizeof(part[0])) == 0, "the drain did not return the oldest");
    CHECK_EQ(bts_count(&t), N - TAKE);
    CHECK_EQ(bts_drain_raw(&t, part, N), N - TAKE);
    CHECK(memcmp(part, all + TAKE, (N - TAKE) * sizeof(part[0])) == 0,
          "the records after the drained ones were not kept, in order");
    CHECK_EQ(bts_count(&t), 0);
    trace_teardown(&t);
}

TEST(ds, circular_min, "the 2-record minimum buffer works, 1 record is refused", 0)
{
    if (!bts_require())
        return;
    circular_case(2);
    struct bts_trace t = {0};
    struct bts_config cfg = cfg_circular(1, BTS_CPL_KERNEL);
    CHECK_EQ(bts_configure(&t, &cfg), E_RANGE);
    struct bts_status st;
    CHECK(bts_status(&t, &st) == E_STATE, "a refused configuration left the trace configured");
}

/* Interrupt mode: the PMI count and where each PMI finds the index. */
static void pmi_case(uint32_t n, uint32_t thresh)
{
    const struct bts_bounds *b = bts_bounds();
    /* A PMI up to pmi_skid records late (plus its own entry record with fixed delivery) can
     * find the buffer full, and what the CPU does then is open (docs/hardware.md O1): such a
     * configuration is exact only where the profile allows no skid. */
    if (b->pmi_skid > 0 && n - thresh <= b->pmi_skid + 1) {
        test_diag("N=%u threshold=%u: %u records of headroom, not more than the skid bound %u + 1 "
                  "(%s): a full buffer's fate is open, not checked",
                  n, thresh, n - thresh, b->pmi_skid, b->name);
        return;
    }
    struct bts_config cfg =
        cfg_interrupt(n, thresh, MAX_RECORDS, BTS_POLICY_STOP, BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    struct expect code, e;
    exp_init(&code, plain, MAX_RECORDS);
    chain_expect(&code);
    exp_init(&e, want, MAX_RECORDS);
    uint64_t at_entry;
    uint64_t pmis = exp_with_pmis(&code, &e, n, thresh, pmi_is_nmi(), &at_entry);

    uint64_t spurious = bts_spurious_pmis();
    bts_run(&t, (void (*)(void *))tc_chain, NULL);
    struct bts_status st;
    if (!CHECK_EQ(bts_status(&t, &st), 0)) {
        trace_teardown(&t);
        return;
    }
    test_info("N=%u threshold=%u: %lu PMIs at %lu..%lu records, exact rules: %lu at %lu", n, thresh,
              st.pmis, st.pmi_at_min, st.pmi_at_max, pmis, at_entry);
    CHECK_EQ(bts_spurious_pmis(), spurious);
    int64_t k = trace_collect(&t, got, MAX_RECORDS);
    if (k < 0) {
        trace_teardown(&t);
        return;
    }
    if (b->interrupt_records_exact) {
        CHECK(st.pmis == pmis, "N=%u threshold=%u: %lu PMIs, expected %lu", n, thresh, st.pmis,
              pmis);
        CHECK(st.pmi_at_min == at_entry && st.pmi_at_max == at_entry,
              "PMIs found the index at %lu..%lu records, expected %lu (threshold %u%s)",
              st.pmi_at_min, st.pmi_at_max, at_entry, thresh,
              pmi_is_nmi() ? "" : " + the PMI's own entry record");
        exp_match(got, (size_t)k, &e);
    }
    /* On every path: each PMI finds the index in [threshold, exact + skid] (never past the
     * buffer); each drained at least `thresh` of the k records and at most n, and what is left
     * after the last one is below the threshold plus the skid, so the count lies in
     * [(k - thresh - skid) / n, k / thresh]. */
    uint64_t at_hi = (at_entry == UINT64_MAX ? thresh + 1 : at_entry) + b->pmi_skid;
    if (b->handler_records) {
        /* The handlers' own records on the way into each PMI come before it reads the index:
         * the profile's window bounds them with its entry record. */
        uint64_t wlo, whi;
        bts_profile_pmi_window(thresh, true, &wlo, &whi);
        at_hi = whi > at_hi ? whi : at_hi;
    }
    if (at_hi > n)
        at_hi = n;
    CHECK(st.pmis == 0 || (st.pmi_at_min >= thresh && st.pmi_at_max <= at_hi),
          "PMIs found the index at %lu..%lu records, allowed %u..%lu (%s)", st.pmi_at_min,
          st.pmi_at_max, thresh, at_hi, b->name);
    uint64_t lo = (uint64_t)k > thresh + b->pmi_skid ? ((uint64_t)k - thresh - b->pmi_skid) / n : 0;
    uint64_t hi = (uint64_t)k / thresh;
    CHECK(st.pmis >= lo && st.pmis <= hi, "%lu PMIs for %ld records, allowed %lu..%lu (%s)",
          st.pmis, k, lo, hi, b->name);
    /* The known code's records, with the PMIs' and handlers' taken out, are the chain's. */
    struct trace_split sp;
    size_t nc = trace_split(got, (size_t)k, split, &sp);
    split_within_bounds(&sp, st.pmis);
    struct handler_count hc; /* and each handler record inside its PMI */
    handler_records_check(got, (size_t)k, &hc);
    CHECK(sp.pmi_entry <= st.pmis && sp.iretq <= st.pmis,
          "%lu PMI entry and %lu IRETQ records for %lu PMIs", sp.pmi_entry, sp.iretq, st.pmis);
    if (!pmi_is_nmi() && b->fixed_pmi_entry_recorded)
        CHECK(sp.pmi_entry == st.pmis, "%lu PMI entry records for %lu fixed-delivery PMIs",
              sp.pmi_entry, st.pmis);
    CHECK_EQ(sp.escapes, 0); /* branches only: no timestamps */
    struct expect code_only = code;
    exp_match(split, nc, &code_only);
    trace_teardown(&t);
}

TEST(ds, pmi_count, "interrupt mode: the expected number of PMIs, each at the threshold", 0)
{
    if (!bts_require())
        return;
    pmi_case(16, 8);
    pmi_case(16, 15); /* threshold = maximum - 1 record */
    pmi_case(32, 30);
    pmi_case(64, 40); /* headroom for any skid the profiles allow */
    /* The 2-record minimum in interrupt mode has its threshold at 1 record. With fixed
     * delivery the PMI's own IRETQ record (kernel recording is on) reaches that threshold
     * again at once, an endless PMI stream on hardware as on the model; with NMI delivery the
     * model's PMI records nothing, so there it can be checked. */
    if (pmi_is_nmi())
        pmi_case(2, 1);
    else
        test_diag("2-record interrupt mode: checked with pmi=nmi (make check runs it)");
}

/* The threshold once more, with another code shape and without exp_with_pmis(): tc_spin(passes)
 * gives passes + 3 records (bts_run's two, passes - 1 JNZs, the return, the disabling call). */
#define EDGE_HW     128
#define EDGE_THRESH 100

/* The threshold interrupt's handler, wrapped: on every delivery of ours (index at or past the
 * threshold) LVT PC must already be masked, as the local APIC does when it delivers a
 * performance-monitoring interrupt (SDM Vol. 3A, "Local Vector Table", the mask bit). */
static trap_handler_t edge_pmi_handler;
static uint64_t edge_ours, edge_masked;

static void edge_pmi_probe(struct trap_frame *f)
{
    const struct ds_area *ds = loaded_ds_area();
    if (ds && ds->bts_index >= ds->bts_thresh) {
        edge_ours++;
        edge_masked += (apic_read(APIC_LVT_PC) & APIC_LVT_MASKED) != 0;
    }
    edge_pmi_handler(f);
}

static void edge_run(uint64_t passes, uint64_t want_pmis)
{
    const struct bts_bounds *b = bts_bounds();
    struct bts_config cfg = cfg_interrupt(EDGE_HW, EDGE_THRESH, MAX_RECORDS, BTS_POLICY_STOP,
                                          BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    struct expect e;
    exp_init(&e, want, MAX_RECORDS);
    exp_prologue(&e, tc_spin);
    for (uint64_t i = 1; i < passes; i++)
        exp_add(&e, LBL(tc_spin_jnz), LBL(tc_spin_top));
    exp_return(&e, tc_spin_ret);
    exp_epilogue(&e);
    unsigned vec = pmi_is_nmi() ? VEC_NMI : VEC_PMI;
    edge_ours = edge_masked = 0;
    edge_pmi_handler = trap_set_handler(vec, edge_pmi_probe);
    bts_run(&t, (void (*)(void *))tc_spin, (void *)passes);
    trap_set_handler(vec, edge_pmi_handler);
    CHECK(edge_ours == want_pmis && edge_masked == edge_ours,
          "%lu threshold interrupts delivered, %lu of them with LVT PC masked, expected %lu",
          edge_ours, edge_masked, want_pmis);
    struct bts_status st;
    CHECK_EQ(bts_status(&t, &st), 0);
    int64_t k = trace_collect(&t, got, MAX_RECORDS);
    test_info("%zu records, threshold %u: %lu PMIs, expected %lu", e.n, EDGE_THRESH, st.pmis,
              want_pmis);
    CHECK(st.pmis == want_pmis, "%zu records with the threshold at %u: %lu PMIs, expected %lu", e.n,
          EDGE_THRESH, st.pmis, want_pmis);
    if (k < 0) {
        trace_teardown(&t);
        return;
    }
    struct trace_split sp;
    size_t nc = trace_split(got, (size_t)k, split, &sp);
    split_within_bounds(&sp, st.pmis);
    struct handler_count hc; /* and each handler record inside its PMI */
    handler_records_check(got, (size_t)k, &hc);
    exp_match(split, nc, &e);
    if (want_pmis && !pmi_is_nmi()) {
        /* Where the PMI's entry record sits in the trace: after exactly the threshold's
         * records, or up to the skid later. Nothing interrupts before it, so no handler
         * record can come first. */
        int64_t at = 0;
        while (at < k && got[at].to != trap_stub_address(VEC_PMI))
            at++;
        CHECK(at >= EDGE_THRESH && at <= EDGE_THRESH + (int64_t)b->pmi_skid,
              "the PMI's entry record is record %ld, allowed %u..%u (%s)", at, EDGE_THRESH,
              EDGE_THRESH + b->pmi_skid, b->name);
    } else if (want_pmis) {
        CHECK(st.pmi_at_min >= EDGE_THRESH && st.pmi_at_max <= EDGE_THRESH + b->pmi_skid,
              "the PMI found the index at %lu..%lu records, allowed %u..%u (%s)", st.pmi_at_min,
              st.pmi_at_max, EDGE_THRESH, EDGE_THRESH + b->pmi_skid, b->name);
    }
    trace_teardown(&t);
}

TEST(ds, threshold_edge,
     "one record below the threshold: no PMI; past it: one, at the threshold, LVT PC masked", 0)
{
    if (!bts_require())
        return;
    edge_run(EDGE_THRESH - 4, 0); /* threshold - 1 records */
    edge_run(EDGE_THRESH + 8, 1); /* the threshold reached inside the loop, once */
}

/* A PMI held back by a masked LVT PC, with the index past the threshold: where the profile
 * says every record at or past the threshold asks for the PMI (O3), it comes at the first
 * record after the unmask, long before the buffer is full. */
#define AGAIN_HW     256
#define AGAIN_THRESH 100

static uint64_t again_unmask_at; /* the index, in records, just before the unmask */

static void spin_unmask_spin(void *arg)
{
    (void)arg;
    ((void (*)(uint64_t))tc_spin)(AGAIN_THRESH + 4); /* past the threshold, masked */
    const struct ds_area *ds = loaded_ds_area();
    again_unmask_at = (ds->bts_index - ds->bts_base) / BTS_RECORD_SIZE;
    apic_write(APIC_LVT_PC, apic_read(APIC_LVT_PC) & ~APIC_LVT_MASKED);
    ((void (*)(uint64_t))tc_spin)(AGAIN_HW); /* enough to fill the buffer without a PMI */
}

TEST(ds, pmi_past_threshold,
     "a PMI held back by a masked LVT PC comes at the first record after the unmask", 0)
{
    if (!bts_require())
        return;
    if (!bts_profile()->pmi_past_threshold) {
        test_skip("the profile leaves open whether a PMI comes past the threshold (O3)");
        return;
    }
    struct bts_config cfg = cfg_interrupt(AGAIN_HW, AGAIN_THRESH, MAX_RECORDS, BTS_POLICY_STOP,
                                          BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    uint32_t lvt = apic_read(APIC_LVT_PC);
    apic_write(APIC_LVT_PC, lvt | APIC_LVT_MASKED);
    bts_run(&t, spin_unmask_spin, NULL);
    apic_write(APIC_LVT_PC, lvt & ~APIC_LVT_MASKED);
    struct bts_status st;
    CHECK_EQ(bts_status(&t, &st), 0);
    test_info("unmasked at %lu records; %lu PMIs, the latest at %lu", again_unmask_at, st.pmis,
              st.pmi_at_max);
    /* Nothing came while masked, so the first PMI is the one that finds the most records (the
     * later ones come at the threshold). At the full buffer (or none at all) means the records
     * past the threshold asked for nothing. */
    CHECK(again_unmask_at > AGAIN_THRESH && again_unmask_at + 32 < AGAIN_HW,
          "the unmask came at %lu records, not between %u and %u", again_unmask_at, AGAIN_THRESH,
          AGAIN_HW - 32);
    CHECK(st.pmis >= 1 && st.pmi_at_max > again_unmask_at && st.pmi_at_max < AGAIN_HW,
          "%lu PMIs, the first at %lu records: expected after the unmask at %lu, before %u",
          st.pmis, st.pmi_at_max, again_unmask_at, AGAIN_HW);
    trace_teardown(&t);
}

/* The stop policy: once the ring overflows the trace stops, says so once, keeps the oldest
 * records and refuses to run again until cleared (ds/bts.h). */
#define STOP_RING 16

static unsigned stop_calls;

static void count_stop(struct bts_trace *t, void *arg)
{
    (void)t;
    (void)arg;
    stop_calls++;
}

TEST(ds, stop_policy, "a stop ring that overflows stops the trace, once, keeping the oldest", 0)
{
    if (!bts_require())
        return;
    struct bts_config cfg =
        cfg_interrupt(256, 0, STOP_RING, BTS_POLICY_STOP, BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    struct expect e;
    exp_init(&e, want, MAX_RECORDS);
    chain_expect(&e);
    CHECK(e.n > STOP_RING, "the chain's %zu records must overflow the ring", e.n);
    stop_calls = 0;
    bts_set_callbacks(&t, NULL, count_stop, NULL);
    CHECK_EQ(bts_run(&t, (void (*)(void *))tc_chain, NULL), 0);
    struct bts_status st;
    CHECK_EQ(bts_status(&t, &st), 0);
    CHECK(st.stopped && st.overflowed && stop_calls == 1,
          "after %zu records into a %u-record ring: stopped %d, overflowed %d, %u stop calls", e.n,
          STOP_RING, st.stopped, st.overflowed, stop_calls);
    CHECK(st.count == STOP_RING && st.lost + st.count >= e.n,
          "%lu records kept, %lu lost, of %zu run", st.count, st.lost, e.n);
    CHECK_EQ(bts_run(&t, (void (*)(void *))tc_chain, NULL), E_OVERFLOW);
    CHECK_EQ(stop_calls, 1);
    /* The oldest records: the chain's first ones (the profile may add nothing before them). */
    int64_t k = trace_collect(&t, got, MAX_RECORDS);
    if (k >= 0) {
        e.n = (size_t)k;
        exp_match(got, (size_t)k, &e);
    }
    trace_teardown(&t);
}

/* The wrap policy: drains smaller than the ring that overflow it push out exactly as many of
 * the oldest records as they bring, so the ring stays full and every record is either kept or
 * counted lost. A low threshold makes many such drains. */
#define WRAP_RING 24

TEST(ds, wrap_policy, "a wrap ring that overflows stays full, each record kept or counted lost", 0)
{
    if (!bts_require())
        return;
    struct bts_config cfg =
        cfg_interrupt(64, 8, WRAP_RING, BTS_POLICY_WRAP, BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    struct expect e;
    exp_init(&e, want, MAX_RECORDS);
    chain_expect(&e);
    CHECK(e.n > 2 * WRAP_RING, "the chain's %zu records must overflow the ring", e.n);
    bts_run(&t, (void (*)(void *))tc_chain, NULL);
    struct bts_status st;
    CHECK_EQ(bts_status(&t, &st), 0);
    test_info("%lu records kept, %lu lost, %lu PMIs", st.count, st.lost, st.pmis);
    CHECK(st.count == WRAP_RING && st.lost + st.count >= e.n,
          "%lu records kept, %lu lost, of at least %zu run (ring %u)", st.count, st.lost, e.n,
          WRAP_RING);
    /* The newest records end with the chain's own end: its last link's record and the return
     * are the trace's last code records on every profile. */
    int64_t k = trace_collect_code(&t, got, MAX_RECORDS);
    CHECK(k >= 2 && got[k - 1].from == e.rec[e.n - 1].from && got[k - 1].to == e.rec[e.n - 1].to,
          "the ring's newest code record is not the run's last");
    trace_teardown(&t);
}

/* A trace's hardware index survives switching away and back: the incoming trace goes on where
 * it stopped (the rule bts.task.isolation checks with tasks, here with ds_switch alone). */
TEST(ds, switch_index, "switching back to a circular trace resumes at its own index", 0)
{
    if (!bts_require())
        return;
    struct bts_config cfg = cfg_circular(256, BTS_CPL_KERNEL);
    struct bts_trace a, b;
    if (!trace_setup(&a, &cfg))
        return;
    struct expect ea, eb;
    exp_init(&ea, want, MAX_RECORDS);
    chain_expect(&ea);
    exp_prologue(&ea, tc_spin);
    exp_add(&ea, LBL(tc_spin_jnz), LBL(tc_spin_top));
    exp_return(&ea, tc_spin_ret);
    exp_epilogue(&ea);
    exp_init(&eb, plain, MAX_RECORDS);
    chain_expect(&eb);
    bts_run(&a, (void (*)(void *))tc_chain, NULL);
    uint64_t a_index = loaded_ds_area()->bts_index;
    if (!trace_setup(&b, &cfg)) {
        trace_teardown(&a);
        return;
    }
    bts_run(&b, (void (*)(void *))tc_chain, NULL);
    CHECK_EQ(bts_attach(&a), 0);
    CHECK_EQ(loaded_ds_area()->bts_index, a_index);
    bts_run(&a, (void (*)(void *))tc_spin, (void *)2);
    int64_t k = trace_collect_code(&a, got, MAX_RECORDS);
    if (k >= 0)
        exp_match(got, (size_t)k, &ea);
    CHECK_EQ(bts_attach(&b), 0);
    k = trace_collect_code(&b, got, MAX_RECORDS);
    if (k >= 0)
        exp_match(got, (size_t)k, &eb);
    trace_teardown(&b);
    trace_teardown(&a);
}

TEST(ds, disable_enable_clear, "disable stops at once, enable resumes, clear empties", 0)
{
    if (!bts_require())
        return;
    struct bts_config cfg =
        cfg_interrupt(256, 0, MAX_RECORDS, BTS_POLICY_STOP, BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    struct expect e;
    exp_init(&e, want, MAX_RECORDS);
    chain_expect(&e);
    chain_expect(&e);
    /* Traced, untraced, traced: only the two traced runs appear, nothing in between. */
    bts_run(&t, (void (*)(void *))tc_chain, NULL);
    ((void (*)(void))tc_chain)();
    CHECK_EQ(loaded_ds_area()->bts_index, loaded_ds_area()->bts_base);
    bts_run(&t, (void (*)(void *))tc_chain, NULL);
    int64_t k = trace_collect_code(&t, got, MAX_RECORDS);
    if (k >= 0)
        exp_match(got, (size_t)k, &e);
    CHECK_EQ(bts_clear(&t), 0);
    CHECK_EQ(bts_count(&t), 0);
    struct bts_event ev;
    CHECK_EQ(bts_get(&t, 0, &ev), E_NOENT);
    trace_teardown(&t);
}

/* Writes v to the backend's DEBUGCTL around one untraced call of tc_chain and returns how many
 * records the loaded trace's buffer gained. */
static uint64_t chain_with_debugctl(uint64_t v)
{
    const struct ds_area *ds = loaded_ds_area();
    uint64_t before = ds->bts_index;
    bts_backend()->write_debugctl(v);
    ((void (*)(void))tc_chain)();
    bts_backend()->write_debugctl(0);
    return (ds->bts_index - before) / BTS_RECORD_SIZE;
}

TEST(ds, debugctl_layout,
     "the model reads DEBUGCTL in its layout; the other layout's bits do not "
     "record",
     0)
{
    if (!bts_require())
        return;
    if (!bts_backend_is_model()) {
        /* On silicon the other layout's TR|BTS are reserved bits or other controls. */
        test_skip("the model is not the backend in use");
        return;
    }
    const struct debugctl_layout *l = bts_layout();
    const struct debugctl_layout *other =
        l == &debugctl_netburst ? &debugctl_core : &debugctl_netburst;
    test_info("layout %s, the other %s", l->name, other->name);
    struct bts_config cfg =
        cfg_interrupt(256, 0, MAX_RECORDS, BTS_POLICY_STOP, BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    /* Interrupt mode, kernel only: TR, BTS, BTINT and BTS_OFF_USR of this layout, nothing else. */
    uint64_t want_ctl = l->tr | l->bts | l->btint | l->bts_off_usr;
    CHECK_EQ(bts_trace_debugctl(&t), want_ctl);
    CHECK_EQ(bts_enable(&t), 0);
    uint64_t seen = bts_backend()->read_debugctl();
    CHECK_EQ(bts_disable(&t), 0);
    CHECK_EQ(seen, want_ctl);
    /* The other layout's TR|BTS: set different controls and reserved bits, so no records. */
    CHECK_EQ(chain_with_debugctl(other->tr | other->bts), 0);
    /* This layout's TR|BTS records every link of the chain, and its call and return. */
    uint64_t n = chain_with_debugctl(l->tr | l->bts);
    CHECK(n >= TC_CHAIN_LEN, "%s TR|BTS (%#lx) gave %lu records, expected at least %u", l->name,
          l->tr | l->bts, n, TC_CHAIN_LEN);
    trace_teardown(&t);
}

static void yield_once(void *arg)
{
    (void)arg;
    task_yield();
}

TEST(ds, switch_writes,
     "a DS switch turns recording off and on as the traces need; untraced switches write nothing",
     0)
{
    if (!bts_require())
        return;
    const struct bts_backend *b = bts_backend();
    struct bts_config cfg = cfg_circular(64, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    uint64_t area = b->read_ds_area();
    CHECK_EQ(b->read_debugctl(), 0);
    /* Leaving a recording trace: recording off, then the idle area. */
    CHECK_EQ(bts_enable(&t), 0);
    CHECK_EQ(b->read_debugctl(), bts_trace_debugctl(&t));
    bts_detach();
    CHECK_EQ(b->read_debugctl(), 0);
    uint64_t idle = b->read_ds_area();
    CHECK(idle != area && idle != 0, "detached, IA32_DS_AREA is %#lx (the trace's %#lx)", idle,
          area);
    /* Coming back to it: its area, and recording on again, since it is still enabled. */
    CHECK_EQ(bts_attach(&t), 0);
    CHECK_EQ(b->read_ds_area(), area);
    CHECK_EQ(b->read_debugctl(), bts_trace_debugctl(&t));
    CHECK_EQ(bts_disable(&t), 0);
    bts_detach();
    /* Untraced tasks with nothing loaded: the switches to and from one write no register, so
     * an area set behind the layer's back (recording off, so harmless) is still there. */
    b->write_ds_area(area);
    struct task *k = task_create("untraced", yield_once, NULL);
    if (CHECK(k != NULL, "no task"))
        task_join(k, NULL);
    CHECK_EQ(b->read_ds_area(), area);
    b->write_ds_area(idle);
    /* A task that ends while its trace records: recording is off once it has left. */
    struct task *r = task_create("recording", yield_once, NULL);
    if (CHECK(r != NULL, "no task")) {
        task_set_trace(r, task_current(), &t);
        CHECK_EQ(bts_enable(&t), 0);
        task_join(r, NULL);
        CHECK_EQ(b->read_debugctl(), 0);
        CHECK_EQ(b->read_ds_area(), idle);
    }
    trace_teardown(&t);
}

/* Decoded events back in record form, so they can be sorted and compared like raw records. */
static size_t events_to_records(const struct bts_event *ev, size_t n, struct bts_record *out)
{
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind == BTS_EV_BRANCH)
            out[i] = (struct bts_record){ev[i].from, ev[i].to, 0};
        else
            out[i] = bts_timestamp_record(ev[i].kind == BTS_EV_ARRIVE ? BTS_Q_ARRIVE : BTS_Q_DEPART,
                                          ev[i].tsc);
    }
    return n;
}

/* What one API call returned, against the labels of the code that ran, with no PMI in
 * between: exactly under exact bounds; otherwise its known-code records exactly and the rest
 * within the bounds. */
static void api_matches(const char *what, const struct bts_event *ev, size_t n,
                        const struct expect *e)
{
    static struct bts_record rec[MAX_RECORDS];
    size_t k = events_to_records(ev, n, rec);
    test_info("%s: %zu records against %zu labels", what, n, e->n);
    if (bts_bounds()->interrupt_records_exact) {
        if (!exp_match(rec, k, e))
            test_diag("(in %s)", what);
        return;
    }
    struct trace_split sp;
    size_t nc = trace_split(rec, k, split, &sp);
    split_within_bounds(&sp, 0);
    CHECK(sp.pmi_entry + sp.iretq + sp.escapes == 0, "%s: %lu PMI and %lu timestamp records", what,
          sp.pmi_entry + sp.iretq, sp.escapes);
    if (!exp_match(split, nc, e))
        test_diag("(in %s)", what);
}

TEST(ds, api, "get, get range, drain: the decoded records are the code's labels, in order", 0)
{
    if (!bts_require())
        return;
    /* 256 records, the default threshold well above the chain's: no PMI while it runs. */
    struct bts_config cfg =
        cfg_interrupt(256, 0, 512, BTS_POLICY_WRAP, BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    struct expect e, head, rest;
    exp_init(&e, want, MAX_RECORDS);
    chain_expect(&e);
    CHECK(e.n > 10 && e.n < 256 - 16, "the chain's %zu records must fit below the threshold", e.n);
    exp_init(&head, want, 10);
    head.n = 10;
    exp_init(&rest, want + 10, MAX_RECORDS - 10);
    rest.n = e.n - 10;

    bts_run(&t, (void (*)(void *))tc_chain, NULL);
    struct bts_status st;
    CHECK_EQ(bts_status(&t, &st), 0);
    CHECK_EQ(st.pmis, 0);
    uint64_t n = bts_count(&t);
    static struct bts_event ev[MAX_RECORDS];
    int64_t k = bts_get_range(&t, 0, n, ev);
    CHECK_EQ(k, n);
    if (k > 0)
        api_matches("bts_get_range", ev, (size_t)k, &e);
    for (uint64_t i = 0; i < n; i++)
        CHECK_EQ(bts_get(&t, i, &ev[i]), 0);
    api_matches("bts_get", ev, n, &e);
    CHECK_EQ(bts_get(&t, n, &ev[0]), E_NOENT);
    CHECK(st.count == n && st.lost == 0 && !st.enabled, "status: count %lu lost %lu", st.count,
          st.lost);
    /* Drained in two parts: the oldest 10, then the rest, each the labels' part. */
    int64_t d = bts_drain(&t, ev, 10);
    CHECK_EQ(d, 10);
    if (d == 10 && bts_bounds()->interrupt_records_exact)
        api_matches("bts_drain (first 10)", ev, 10, &head);
    CHECK_EQ(bts_count(&t), n - 10);
    static struct bts_event ev2[MAX_RECORDS];
    int64_t d2 = bts_drain(&t, ev2, MAX_RECORDS);
    CHECK_EQ(d2, n - 10);
    if (d == 10 && d2 >= 0) {
        if (bts_bounds()->interrupt_records_exact) {
            api_matches("bts_drain (the rest)", ev2, (size_t)d2, &rest);
        } else {
            /* Handler records may sit anywhere: the two parts are checked as one. */
            memcpy(&ev[10], ev2, (size_t)d2 * sizeof(ev2[0]));
            api_matches("bts_drain", ev, 10 + (size_t)d2, &e);
        }
    }
    CHECK_EQ(bts_count(&t), 0);
    trace_teardown(&t);
}

TEST(ds, invalid_config, "each invalid configuration has its own error and changes nothing", 0)
{
    if (!bts_require())
        return;
    const struct bts_config good =
        cfg_interrupt(64, 0, 256, BTS_POLICY_WRAP, BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &good))
        return;
    struct {
        const char *what;
        struct bts_config c;
        int err;
    } bad[] = {
        {"1-record buffer", good, E_RANGE},
        {"threshold at the maximum", good, E_RANGE},
        {"no ring in interrupt mode", good, E_RANGE},
        {"ring in circular mode", good, E_INVAL},
        {"unknown policy", good, E_INVAL},
        {"unknown CPL bit", good, E_INVAL},
        {"unknown event bit", good, E_INVAL},
        {"over the quota", good, E_QUOTA},
    };
    bad[0].c.hw_records = 1;
    bad[1].c.thresh_records = 64;
    bad[2].c.ring_records = 0;
    bad[3].c.mode = BTS_MODE_CIRCULAR;
    bad[4].c.policy = 7;
    bad[5].c.cpl = 1u << 5;
    bad[6].c.events = 1u << 7;
    bad[7].c.ring_records = 1u << 30;
    struct bts_trace before = t;
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int err = bts_configure(&t, &bad[i].c);
        CHECK(err == bad[i].err, "%s: %s, expected %s", bad[i].what, err_name(err),
              err_name(bad[i].err));
        CHECK(memcmp(&t, &before, sizeof(t)) == 0, "%s changed the trace", bad[i].what);
    }
    /* Raw DS layouts: a buffer that is not whole records (erratum P79), a threshold off a
     * record boundary. */
    struct ds_area ds, ds0;
    memset(&ds, 0x5A, sizeof(ds));
    ds0 = ds;
    CHECK_EQ(ds_layout_bts(&ds, 0x200000, 10 * BTS_RECORD_SIZE + 8, BTS_THRESH_CIRCULAR,
                           BTS_MODE_CIRCULAR),
             E_ALIGN);
    CHECK_EQ(ds_layout_bts(&ds, 0x200000, 10 * BTS_RECORD_SIZE, 5 * BTS_RECORD_SIZE + 4,
                           BTS_MODE_INTERRUPT),
             E_ALIGN);
    CHECK(memcmp(&ds, &ds0, sizeof(ds)) == 0, "a refused layout wrote the DS area");
    /* Reconfiguring while recording is refused too. */
    CHECK_EQ(bts_enable(&t), 0);
    CHECK_EQ(bts_configure(&t, &good), E_BUSY);
    CHECK_EQ(bts_disable(&t), 0);
    /* And the trace still works after all that. */
    bts_run(&t, (void (*)(void *))tc_chain, NULL);
    CHECK(bts_count(&t) >= TC_CHAIN_LEN, "trace dead after refused configurations");
    trace_teardown(&t);
}

/* The DS area a trace loads, field by field, against the buffer the test asked for (SDM Vol. 3B,
 * "BTS and DS Save Area"): the hardware reads only these four words, so a layout one record off
 * shows here on every backend, whatever the PMI's skid hides. */
static void area_case(const struct bts_config *cfg, uint64_t thresh_records)
{
    struct bts_trace t;
    if (!trace_setup(&t, cfg))
        return;
    const struct ds_area *ds = loaded_ds_area();
    uint64_t base = (uint64_t)t.buf, n = cfg->hw_records;
    CHECK(ds == t.ds, "IA32_DS_AREA holds %p, the attached trace's area is %p", ds, t.ds);
    CHECK_EQ(ds->bts_base, base);
    CHECK_EQ(ds->bts_index, base);
    CHECK_EQ(ds->bts_abs_max, base + n * BTS_RECORD_SIZE);
    if (cfg->mode == BTS_MODE_INTERRUPT)
        CHECK(ds->bts_thresh == base + thresh_records * BTS_RECORD_SIZE,
              "%lu records, threshold %lu: the area's threshold is %ld records from base", n,
              thresh_records, (int64_t)(ds->bts_thresh - base) / BTS_RECORD_SIZE);
    else /* circular: out of the index's reach, or the PMI would fire (BTINT=0 alone does not stop
            it) */
        CHECK(ds->bts_thresh > ds->bts_abs_max,
              "circular buffer's threshold %#lx is within reach "
              "of its index (maximum %#lx)",
              ds->bts_thresh, ds->bts_abs_max);
    trace_teardown(&t);
}

TEST(ds, area_fields, "the loaded DS area holds the buffer, maximum and threshold asked for", 0)
{
    if (!bts_require())
        return;
    const unsigned ev = BTS_EVENTS_BRANCHES, cpl = BTS_CPL_KERNEL;
    struct bts_config c = cfg_interrupt(64, 40, 256, BTS_POLICY_WRAP, ev, cpl);
    area_case(&c, 40);
    c = cfg_interrupt(BTS_MIN_RECORDS, 1, 16, BTS_POLICY_STOP, ev, cpl);
    area_case(&c, 1);
    c = cfg_interrupt(200, 199, 256, BTS_POLICY_STREAM, ev, cpl);
    area_case(&c, 199);
    c = cfg_circular(16, cpl);
    area_case(&c, 0);
}

TEST(ds, spurious_pmi, "a PMI with the index below the threshold is counted and ignored", 0)
{
    if (!bts_require())
        return;
    struct bts_config cfg =
        cfg_interrupt(64, 0, 256, BTS_POLICY_WRAP, BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    uint64_t before = bts_spurious_pmis();
    if (pmi_is_nmi())
        apic_self_nmi();
    else
        apic_self_ipi(VEC_PMI);
    for (int i = 0; i < 1000 && bts_spurious_pmis() == before; i++)
        cpu_relax();
    CHECK_EQ(bts_spurious_pmis(), before + 1);
    struct bts_status st;
    if (CHECK_EQ(bts_status(&t, &st), 0))
        CHECK_EQ(st.pmis, 0);
    CHECK_EQ(bts_count(&t), 0);
    CHECK(!(apic_read(APIC_LVT_PC) & APIC_LVT_MASKED), "LVT PC left masked");
    bts_run(&t, (void (*)(void *))tc_chain, NULL);
    CHECK(bts_count(&t) >= TC_CHAIN_LEN, "recording broken after a spurious PMI");
    trace_teardown(&t);
}

/* Stream: the tracer (this test) verifies the records as the ring fills. */
#define STREAM_BRANCHES test_volume(1000000)
#define STREAM_HW       64
#define STREAM_THRESH   48
#define STREAM_RING     4096

struct stream_check {
    uint64_t seen;       /* records looked at */
    uint64_t jnz;        /* loop records matched, in order */
    uint64_t edges;      /* bts_run's records around the loop, matched with its labels */
    uint64_t pmi_entry;  /* PMI entry records (the PMI's vector, from the known code) */
    uint64_t iretq;      /* IRETQ records back into the known code */
    uint64_t handler;    /* handler records: kernel text outside the known code */
    uint64_t escapes;    /* timestamp records */
    uint64_t bad;        /* records that fit nowhere */
    int stage;           /* 0 prologue, 1 loop, 2 after the loop */
    uint64_t last_entry; /* `from` of the last PMI entry record not yet returned from */
    uint64_t unpaired;   /* IRETQ records that do not return where the last entry came from */
    uint64_t pmi_stub;   /* where the PMI enters: its vector's stub, or NMI's (pmi=nmi) */
    uint64_t run;        /* handler records since the last PMI entry record */
    uint64_t run_max;    /* ... at most (the bounds' handler_records_max) */
    struct expect edge;  /* bts_run's prologue, the loop's return and the epilogue */
    struct bts_record edge_rec[4];
    struct bts_record first_bad;
};

static void stream_feed(struct stream_check *c, const struct bts_record *r, int64_t n)
{
    for (int64_t i = 0; i < n; i++, c->seen++) {
        const struct bts_record *x = &r[i];
        bool ok = true;
        if (x->from == BTS_ESCAPE) {
            c->escapes++;
        } else if (x->to == c->pmi_stub && pmi_can_land(x->from)) {
            c->pmi_entry++;
            c->last_entry = x->from;
            c->run = 0;
        } else if (x->from == LBL(isr_iretq) && pmi_can_land(x->to)) {
            c->iretq++;
            c->unpaired += x->to != c->last_entry;
            c->last_entry = 0;
        } else if (!in_traced_code(x->from) && !in_traced_code(x->to)) {
            /* A handler's own branch: in kernel text, inside a PMI (after its entry record,
             * before its IRETQ), the first one its stub's JMP, at most run_max per PMI. */
            uint64_t stub_size = trap_stub_address(1) - trap_stub_address(0);
            ok = x->from >= LBL(_text_start) && x->from < LBL(_text_end) &&
                 x->to >= LBL(_text_start) && x->to < LBL(_text_end) && c->last_entry != 0 &&
                 (c->run > 0 || (x->from >= c->pmi_stub && x->from < c->pmi_stub + stub_size)) &&
                 ++c->run <= c->run_max;
            c->handler += ok;
        } else if (c->stage == 1 && x->from == LBL(tc_spin_jnz)) {
            ok = x->to == LBL(tc_spin_top);
            c->jnz += ok;
        } else {
            /* bts_run's records: two before the loop, its return and the epilogue after. */
            ok = c->edges < c->edge.n && x->from == c->edge.rec[c->edges].from &&
                 x->to == c->edge.rec[c->edges].to;
            c->edges += ok;
            if (ok && c->edges == 2)
                c->stage = 1;
            if (ok && c->edges == 3)
                c->stage = 2;
        }
        if (!ok && c->bad++ == 0)
            c->first_bad = *x;
    }
}

static int stream_drain(struct bts_trace *t, void *arg)
{
    static struct bts_record chunk[STREAM_RING];
    int64_t n = bts_drain_raw(t, chunk, STREAM_RING);
    if (n < 0)
        return (int)n;
    stream_feed(arg, chunk, n);
    return 0;
}

TEST(ds, stream, "stream: 1,000,000 branches (volume=full) through a 64-record buffer, none lost",
     600000)
{
    if (!bts_require())
        return;
    struct bts_config cfg = cfg_interrupt(STREAM_HW, STREAM_THRESH, STREAM_RING, BTS_POLICY_STREAM,
                                          BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    struct stream_check c = {
        .pmi_stub = trap_stub_address(pmi_is_nmi() ? VEC_NMI : VEC_PMI),
        .run_max = bts_bounds()->handler_records_max,
    };
    exp_init(&c.edge, c.edge_rec, 4);
    exp_prologue(&c.edge, tc_spin);
    exp_return(&c.edge, tc_spin_ret);
    exp_epilogue(&c.edge);
    bts_set_callbacks(&t, stream_drain, NULL, &c);
    uint64_t t0 = rdtsc();
    bts_run(&t, (void (*)(void *))tc_spin, (void *)(STREAM_BRANCHES + 1));
    uint64_t us = tsc_to_us(rdtsc() - t0);
    stream_drain(&t, &c);
    struct bts_status st;
    bts_status(&t, &st);
    const struct bts_bounds *b = bts_bounds();
    test_diag("stream: %lu branches in %lu ms, %lu PMIs, %lu tracer drains, %lu lost", c.jnz,
              us / 1000, st.pmis, st.stream_waits, st.lost);
    test_diag("stream: %lu records: %lu loop, %lu bts_run, %lu PMI entry, %lu IRETQ, %lu handler, "
              "%lu timestamp, %lu unaccounted",
              c.seen, c.jnz, c.edges, c.pmi_entry, c.iretq, c.handler, c.escapes, c.bad);
    CHECK_EQ(st.lost, 0);
    CHECK_EQ(c.jnz, STREAM_BRANCHES);
    CHECK_EQ(c.edges, c.edge.n);
    CHECK(c.stage == 2, "the loop's return was never seen");
    CHECK(c.bad == 0,
          "%lu records out of order, outside known and kernel code, or handler records "
          "outside a PMI or over the bound, first %#lx -> %#lx",
          c.bad, c.first_bad.from, c.first_bad.to);
    CHECK_EQ(c.escapes, 0); /* branches only: no timestamps */
    /* Every record is one of these: a record lost or added anywhere shows here. */
    CHECK_EQ(c.seen, c.jnz + c.edges + c.pmi_entry + c.iretq + c.handler + c.escapes + c.bad);
    /* Each PMI finds at least the threshold and at most the buffer; what the last one leaves
     * is below the threshold plus the skid. */
    uint64_t tail = STREAM_THRESH + b->pmi_skid;
    uint64_t lo = c.seen > tail ? (c.seen - tail) / STREAM_HW : 0, hi = c.seen / STREAM_THRESH;
    CHECK(st.pmis >= lo && st.pmis <= hi, "%lu PMIs for %lu records, allowed %lu..%lu (%s)",
          st.pmis, c.seen, lo, hi, b->name);
    uint64_t per_pmi = pmi_is_nmi() ? 0 : 1;
    if (b->interrupt_records_exact) {
        CHECK(c.pmi_entry == per_pmi * st.pmis && c.iretq == per_pmi * st.pmis,
              "%lu PMI entry and %lu IRETQ records for %lu PMIs (%s delivery: %lu each)",
              c.pmi_entry, c.iretq, st.pmis, pmi_is_nmi() ? "NMI" : "fixed", per_pmi);
        CHECK(c.unpaired == 0, "%lu IRETQ records not returning where their PMI came from",
              c.unpaired);
    } else {
        CHECK(c.pmi_entry <= st.pmis && c.iretq <= st.pmis,
              "%lu PMI entry and %lu IRETQ records for %lu PMIs (at most one each)", c.pmi_entry,
              c.iretq, st.pmis);
    }
    if (!pmi_is_nmi() && b->fixed_pmi_entry_recorded)
        CHECK(c.pmi_entry == st.pmis, "%lu PMI entry records for %lu fixed-delivery PMIs",
              c.pmi_entry, st.pmis);
    uint64_t hmax = b->handler_records ? b->handler_records_max * st.pmis : 0;
    CHECK(c.handler <= hmax, "%lu handler records, at most %lu allowed (%s)", c.handler, hmax,
          b->name);
    trace_teardown(&t);
}

#define SKID_HW     64
#define SKID_THRESH (SKID_HW - BTS_PMI_HEADROOM)
#define SKID_LOOPS  3000

TEST(ds, pmi_skid,
     "each PMI finds the index inside the profile's window; the model skids when asked", 0)
{
    if (!bts_require())
        return;
    struct bts_config cfg = cfg_interrupt(SKID_HW, SKID_THRESH, MAX_RECORDS, BTS_POLICY_STOP,
                                          BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    struct model_stats m0, m1;
    model_get_stats(&m0);
    uint64_t spurious = bts_spurious_pmis();
    bts_run(&t, (void (*)(void *))tc_spin, (void *)SKID_LOOPS);
    model_get_stats(&m1);
    struct bts_status st;
    if (!CHECK_EQ(bts_status(&t, &st), 0)) {
        trace_teardown(&t);
        return;
    }
    uint64_t lo, hi;
    bts_profile_pmi_window(SKID_THRESH, true, &lo, &hi);
    test_diag("pmi skid: %lu records, %lu PMIs, index at %lu..%lu (window %lu..%lu)", st.count,
              st.pmis, st.pmi_at_min, st.pmi_at_max, lo, hi);
    CHECK_EQ(st.lost, 0);
    CHECK_EQ(bts_spurious_pmis(), spurious);
    CHECK(st.count >= SKID_LOOPS, "only %lu records for %u taken branches", st.count, SKID_LOOPS);
    CHECK(st.pmis > 0 && st.pmi_at_min >= lo && st.pmi_at_max <= hi,
          "%lu PMIs found the index at %lu..%lu records, outside %lu..%lu", st.pmis, st.pmi_at_min,
          st.pmi_at_max, lo, hi);
    /* Each PMI drains lo..hi records; after the last fewer than hi remain (more would have
     * brought another PMI by the time recording stopped). */
    CHECK(st.pmis * lo <= st.count && st.count < (st.pmis + 1) * hi,
          "%lu PMIs for %lu records: outside what a window of %lu..%lu allows", st.pmis, st.count,
          lo, hi);
    if (bts_backend_is_model()) {
        /* The model's own account of the skid it took (its counters, its options). */
        struct model_freedoms f;
        model_get_freedoms(&f);
        uint64_t pmis = m1.pmis - m0.pmis, delayed = m1.delayed_pmis - m0.delayed_pmis;
        uint64_t skid = m1.skid_records - m0.skid_records;
        test_diag("model: skid 0..%u, %lu of %lu PMIs delayed, by %lu records in all", f.skid,
                  delayed, pmis, skid);
        CHECK_EQ(pmis, st.pmis);
        if (f.skid > 0)
            CHECK(delayed > 0, "model.skid=%u but no PMI came late", f.skid);
        else
            CHECK_EQ(delayed, 0);
        CHECK(skid <= (uint64_t)f.skid * delayed, "%lu skid records over %lu delayed PMIs", skid,
              delayed);
        /* With fixed delivery the entry record and the handler records the model stores
         * after it (model.handler_records) come before the handler reads the index; an NMI
         * arrives inside the model's #DB handler and stores neither. */
        unsigned entry =
            pmi_is_nmi() ? 0 : 1 + (f.handler_records == BTS_NEVER ? 0 : f.handler_records_max);
        CHECK(st.pmi_at_max <= SKID_THRESH + f.skid + entry,
              "a PMI found %lu records, more than model.skid=%u and %u entry records allow",
              st.pmi_at_max, f.skid, entry);
    }
    trace_teardown(&t);
}
