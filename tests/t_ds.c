/*
 * ds.*: the Debug Store's semantics, through the same DS layer on either backend: the circular
 * buffer, the threshold interrupt and its count, disable/enable/clear, invalid configurations,
 * spurious PMIs, the DEBUGCTL layout the model reads, what a DS switch writes, and the stream
 * policy carrying a million branches without loss.
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

static struct bts_record got[MAX_RECORDS], want[MAX_RECORDS], plain[MAX_RECORDS];

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
    test_info("N=%u threshold=%u: %lu PMIs, expected %lu", n, thresh, st.pmis, pmis);
    CHECK_EQ(bts_spurious_pmis(), spurious);
    if (bts_profile()->pmi_skid_max > 0 || bts_profile()->handler_records != BTS_NEVER) {
        /* Hardware also records the handler's branches and may deliver late (skid): the
         * count and the landing index are reported, and must at least reach the threshold. */
        CHECK(st.pmis > 0 && st.pmi_at_min >= thresh, "N=%u threshold=%u: %lu PMIs, first at %lu",
              n, thresh, st.pmis, st.pmi_at_min);
        test_diag("hardware: %lu PMIs (the model: %lu), index at %lu..%lu records", st.pmis, pmis,
                  st.pmi_at_min, st.pmi_at_max);
        trace_teardown(&t);
        return;
    }
    CHECK(st.pmis == pmis, "N=%u threshold=%u: %lu PMIs, expected %lu", n, thresh, st.pmis, pmis);
    CHECK(st.pmi_at_min == at_entry && st.pmi_at_max == at_entry,
          "PMIs found the index at %lu..%lu records, expected %lu (threshold %u%s)", st.pmi_at_min,
          st.pmi_at_max, at_entry, thresh, pmi_is_nmi() ? "" : " + the PMI's own entry record");
    int64_t k = trace_collect_code(&t, got, MAX_RECORDS);
    if (k >= 0)
        exp_match(got, (size_t)k, &e);
    trace_teardown(&t);
}

TEST(ds, pmi_count, "interrupt mode: the expected number of PMIs, each at the threshold", 0)
{
    if (!bts_require())
        return;
    pmi_case(16, 8);
    pmi_case(16, 15); /* threshold = maximum - 1 record */
    pmi_case(32, 30);
    /* The 2-record minimum in interrupt mode has its threshold at 1 record. With fixed
     * delivery the PMI's own IRETQ record (kernel recording is on) reaches that threshold
     * again at once, an endless PMI stream on hardware as on the model; with NMI delivery the
     * model's PMI records nothing, so there it can be checked. */
    if (pmi_is_nmi())
        pmi_case(2, 1);
    else
        test_diag("2-record interrupt mode: checked with pmi=nmi (make check runs it)");
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

TEST(ds, api, "get, get range, drain: decoded records in order", 0)
{
    if (!bts_require())
        return;
    struct bts_config cfg =
        cfg_interrupt(64, 0, 512, BTS_POLICY_WRAP, BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    bts_run(&t, (void (*)(void *))tc_chain, NULL);
    uint64_t n = bts_count(&t);
    CHECK(n >= TC_CHAIN_LEN, "%lu records", n);
    static struct bts_event ev[MAX_RECORDS];
    int64_t k = bts_get_range(&t, 0, n, ev);
    CHECK_EQ(k, n);
    struct bts_event one;
    for (uint64_t i = 0; i < n && k > 0; i++) {
        CHECK_EQ(bts_get(&t, i, &one), 0);
        CHECK(one.kind == BTS_EV_BRANCH && one.from == ev[i].from && one.to == ev[i].to,
              "get(%lu) differs from get_range", i);
    }
    struct bts_status st;
    CHECK_EQ(bts_status(&t, &st), 0);
    CHECK(st.count == n && st.lost == 0 && !st.enabled, "status: count %lu lost %lu", st.count,
          st.lost);
    int64_t d = bts_drain(&t, ev, 10);
    CHECK_EQ(d, 10);
    CHECK_EQ(bts_count(&t), n - 10);
    d = bts_drain(&t, ev, MAX_RECORDS);
    CHECK_EQ(d, n - 10);
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
#define STREAM_BRANCHES 1000000ULL
#define STREAM_HW       64
#define STREAM_THRESH   48
#define STREAM_RING     4096

struct stream_check {
    uint64_t seen;        /* records looked at */
    uint64_t jnz;         /* loop records matched, in order */
    uint64_t pmi_records; /* PMI entry and IRETQ records */
    uint64_t bad;         /* records that fit nowhere */
    uint64_t foreign;     /* records with neither end in known code */
    int stage;            /* 0 prologue, 1 loop, 2 after the loop */
    struct bts_record first_bad;
};

static void stream_feed(struct stream_check *c, const struct bts_record *r, int64_t n)
{
    for (int64_t i = 0; i < n; i++, c->seen++) {
        const struct bts_record *x = &r[i];
        if (x->to == trap_stub_address(VEC_PMI) || x->from == LBL(isr_iretq)) {
            c->pmi_records++;
            continue;
        }
        if (!in_traced_code(x->from) && !in_traced_code(x->to)) {
            c->foreign++; /* hardware: the handlers' own branches (CPL-0 recording) */
            continue;
        }
        bool ok;
        if (c->stage == 0 && x->to == LBL(tc_spin)) {
            ok = true;
            c->stage = 1;
        } else if (c->stage == 1 && x->from == LBL(tc_spin_jnz)) {
            ok = x->to == LBL(tc_spin_top);
            c->jnz += ok;
        } else if (c->stage == 1 && x->from == LBL(tc_spin_ret)) {
            ok = x->to == LBL(bts_run_returned);
            c->stage = 2;
        } else {
            ok = c->stage != 1; /* the prologue and epilogue are checked elsewhere */
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

TEST(ds, stream, "stream: 1,000,000 branches through a 64-record buffer, none lost", 600000)
{
    if (!bts_require())
        return;
    struct bts_config cfg = cfg_interrupt(STREAM_HW, STREAM_THRESH, STREAM_RING, BTS_POLICY_STREAM,
                                          BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    struct stream_check c = {0};
    bts_set_callbacks(&t, stream_drain, NULL, &c);
    uint64_t t0 = rdtsc();
    bts_run(&t, (void (*)(void *))tc_spin, (void *)(STREAM_BRANCHES + 1));
    uint64_t us = tsc_to_us(rdtsc() - t0);
    stream_drain(&t, &c);
    struct bts_status st;
    bts_status(&t, &st);
    test_diag("stream: %lu branches in %lu ms, %lu PMIs, %lu tracer drains, %lu lost", c.jnz,
              us / 1000, st.pmis, st.stream_waits, st.lost);
    CHECK_EQ(st.lost, 0);
    CHECK_EQ(c.jnz, STREAM_BRANCHES);
    CHECK(c.stage == 2, "the loop's return was never seen");
    CHECK(c.bad == 0, "%lu records out of order, first %#lx -> %#lx", c.bad, c.first_bad.from,
          c.first_bad.to);
    CHECK(st.pmis >= STREAM_BRANCHES / STREAM_HW, "only %lu PMIs", st.pmis);
    if (!pmi_is_nmi() && bts_profile()->pmi_skid_max == 0 &&
        bts_profile()->handler_records == BTS_NEVER)
        CHECK_EQ(c.pmi_records, 2 * st.pmis);
    if (bts_profile()->handler_records == BTS_NEVER)
        CHECK(c.foreign == 0, "%lu records outside the known code", c.foreign);
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
        CHECK(st.pmi_at_max <= SKID_THRESH + f.skid + !pmi_is_nmi(),
              "a PMI found %lu records, more than model.skid=%u allows", st.pmi_at_max, f.skid);
    }
    trace_teardown(&t);
}
