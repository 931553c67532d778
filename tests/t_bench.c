/*
 * bench.*: figures, not verdicts (a timed assertion under an emulator would flake). Each case
 * measures two things in the same run and prints their ratio against the target; it fails
 * only if it cannot measure.
 *   model_cost: cycles per traced instruction under the model vs a bare single-step trap
 *               (target: the model costs at most 2x the bare trap)
 *   drain_cost: cycles per record of the threshold interrupt's drain (raised by the test over
 *               a buffer it filled as the CPU would) vs memcpy of the same bytes (target 1.5x)
 *   switch_cost: cycles per context switch without the DS hook, and with it between untraced
 *                and between traced tasks (target: an untraced switch costs at most 1.05x)
 */
#include "ds/backend.h"
#include "ds/bts.h"
#include "ds/model.h"
#include "kernel/cpu.h"
#include "kernel/apic.h"
#include "kernel/string.h"
#include "kernel/trap.h"
#include "sched/sched.h"
#include "tests/btscheck.h"
#include "tests/switchlog.h"
#include "tests/test.h"

#define SPIN_ITERATIONS 20000
#define DRAIN_RECORDS   1024
#define DRAIN_ROUNDS    200
#define RATIO_SCALE     100 /* ratios are printed with two decimals */

extern const char tc_spin[];
void bench_single_step(void (*fn)(void *), void *arg);

static void ratio_diag(const char *what, uint64_t a, uint64_t b, unsigned target_x100)
{
    uint64_t r = b ? a * RATIO_SCALE / b : 0;
    test_diag("bench: %s ratio %lu.%02lu (target <= %u.%02u): %s", what, r / RATIO_SCALE,
              r % RATIO_SCALE, target_x100 / RATIO_SCALE, target_x100 % RATIO_SCALE,
              r <= target_x100 ? "met" : "MISSED");
}

/* The bare single-step trap: what any #DB handler must do (read and reset DR6), and a count. */
static volatile uint64_t bare_steps;

static void bare_db(struct trap_frame *f)
{
    (void)f;
    uint64_t dr6 = read_dr6();
    write_dr6(DR6_RESET);
    if (dr6 & DR6_BS)
        bare_steps++;
}

/* Best of several alternating rounds: interference (an emulator's other threads, the host)
 * only ever adds cycles, so the minimum is the figure that compares. */
#define ROUNDS 5

TEST(bench, model_cost, "model cost per traced instruction vs a bare single-step trap", 300000)
{
    if (!bts_backend_is_model()) {
        test_skip("the model is not the backend in use");
        return;
    }
    struct bts_config cfg = cfg_circular(4096, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    uint64_t bare_per = UINT64_MAX, model_per = UINT64_MAX, records = 0;
    for (unsigned r = 0; r < ROUNDS; r++) {
        /* Bare: the same loop single-stepped, this file's #DB handler only counting. */
        bare_steps = 0;
        trap_handler_t model_db = trap_set_handler(VEC_DB, bare_db);
        uint64_t t0 = rdtsc_ordered();
        bench_single_step((void (*)(void *))tc_spin, (void *)SPIN_ITERATIONS);
        uint64_t cycles = rdtsc_ordered() - t0;
        trap_set_handler(VEC_DB, model_db);
        uint64_t steps = bare_steps;
        if (!CHECK(steps > 0, "the bare loop was not stepped"))
            break;
        if (cycles / steps < bare_per)
            bare_per = cycles / steps;

        struct model_stats s0, s1;
        model_get_stats(&s0);
        t0 = rdtsc_ordered();
        bts_run(&t, (void (*)(void *))tc_spin, (void *)SPIN_ITERATIONS);
        cycles = rdtsc_ordered() - t0;
        model_get_stats(&s1);
        steps = s1.steps - s0.steps;
        records = s1.records - s0.records;
        if (!CHECK(steps > 0, "the traced loop was not stepped"))
            break;
        if (cycles / steps < model_per)
            model_per = cycles / steps;
    }
    trace_teardown(&t);
    if (test_failed())
        return;
    test_diag("bench: bare trap %lu cycles/step (%lu steps/s), model %lu cycles/instruction "
              "(%lu traced instructions/s), %lu records per round (best of %u)",
              bare_per, tsc_hz() / bare_per, model_per, tsc_hz() / model_per, records, ROUNDS);
    ratio_diag("model/bare", model_per, bare_per, 2 * RATIO_SCALE);
}

/* The test plays the CPU: it writes DRAIN_RECORDS records into the loaded DS area, as BTS
 * would, moves the index to the threshold and raises the threshold interrupt. The round ends
 * when the handler has drained the buffer and reset the index. */
static uint64_t pmi_drain_cycles(struct ds_area *ds)
{
    ds->bts_index = ds->bts_base + DRAIN_RECORDS * BTS_RECORD_SIZE;
    uint64_t t0 = rdtsc_ordered();
    if (pmi_is_nmi())
        apic_self_nmi();
    else
        apic_self_ipi(VEC_PMI);
    while (*(volatile uint64_t *)&ds->bts_index != ds->bts_base)
        cpu_relax();
    return rdtsc_ordered() - t0;
}

TEST(bench, drain_cost, "PMI drain cost per record vs memcpy of the same bytes", 300000)
{
    if (!bts_require())
        return;
    struct bts_config cfg =
        cfg_interrupt(DRAIN_RECORDS + DRAIN_RECORDS / 8, DRAIN_RECORDS, 4 * DRAIN_RECORDS,
                      BTS_POLICY_WRAP, BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    static struct bts_record copy[DRAIN_RECORDS];
    struct ds_area *ds = loaded_ds_area();
    struct bts_record *buf = (struct bts_record *)ds->bts_base;
    for (uint64_t i = 0; i < DRAIN_RECORDS; i++)
        buf[i] = (struct bts_record){0x1000 + i, 0x2000 + i, 0};
    uint64_t drain = UINT64_MAX, mcpy = UINT64_MAX;
    for (unsigned r = 0; r < DRAIN_ROUNDS; r++) {
        uint64_t d = pmi_drain_cycles(ds);
        uint64_t t1 = rdtsc_ordered();
        memcpy(copy, buf, sizeof(copy));
        __asm__ volatile("" : : "r"(copy) : "memory");
        uint64_t t2 = rdtsc_ordered();
        drain = d < drain ? d : drain; /* best round, as above */
        mcpy = t2 - t1 < mcpy ? t2 - t1 : mcpy;
    }
    /* Every round went through the handler into the ring: a 4-round ring, the rest wrapped. */
    struct bts_status st;
    if (CHECK_EQ(bts_status(&t, &st), 0)) {
        CHECK_EQ(st.pmis, DRAIN_ROUNDS);
        CHECK_EQ(st.lost, (uint64_t)(DRAIN_ROUNDS - 4) * DRAIN_RECORDS);
    }
    uint64_t per = DRAIN_RECORDS;
    test_diag("bench: drain %lu.%02lu cycles/record, memcpy %lu.%02lu cycles/record", drain / per,
              drain * RATIO_SCALE / per % RATIO_SCALE, mcpy / per,
              mcpy * RATIO_SCALE / per % RATIO_SCALE);
    ratio_diag("drain/memcpy", drain, mcpy, 150);
    trace_teardown(&t);
}

/* Context-switch cost without the DS hook, and with it for untraced and for traced tasks, measured
 * in the same run. An untraced switch must cost what a switch without the hook costs (target
 * 1.05). The traced tasks each have a DS area of their own and record arrival and departure
 * timestamps, with recording off: enabled recording would, under the model, single-step the
 * tasks and measure the model instead of the switch. */
#define PINGPONG_YIELDS 2000
#define TS_RING_RECORDS (4 * PINGPONG_YIELDS)
#define SWITCH_ROUNDS   15 /* a round is a few ms: more of them steady the minimum */

static void pingpong(void *arg)
{
    (void)arg;
    for (unsigned i = 0; i < PINGPONG_YIELDS; i++)
        task_yield();
}

/* Cycles per switch of two tasks yielding to each other; traced by tr[0] and tr[1] if tr. */
static uint64_t cycles_per_switch(struct bts_trace *tr)
{
    static struct switch_log sl;
    switch_log_start(&sl, NULL, 0);
    uint64_t t0 = rdtsc_ordered();
    struct task *a = task_create("ping", pingpong, NULL);
    struct task *b = task_create("pong", pingpong, NULL);
    if (!a || !b) {
        switch_log_stop(&sl);
        return 0;
    }
    if (tr) {
        task_set_trace(a, task_current(), &tr[0]);
        task_set_trace(b, task_current(), &tr[1]);
    }
    task_join(a, NULL);
    task_join(b, NULL);
    switch_log_stop(&sl);
    uint64_t n = sl.switches;
    return n ? (rdtsc_ordered() - t0) / n : 0;
}

/* Drains t and counts its arrival and departure records. */
static void count_timestamps(struct bts_trace *t, uint64_t *in, uint64_t *out)
{
    static struct bts_record r[64];
    int64_t n;
    while ((n = bts_drain_raw(t, r, 64)) > 0)
        for (int64_t k = 0; k < n; k++)
            if (r[k].from == BTS_ESCAPE)
                *(r[k].flags == BTS_Q_ARRIVE ? in : out) += 1;
}

static void keep_min(uint64_t *best, uint64_t c)
{
    if (c && c < *best)
        *best = c;
}

TEST(bench, switch_cost, "context switch: untraced and traced vs without the DS hook", 300000)
{
    if (!bts_require())
        return;
    struct bts_config cfg = cfg_interrupt(BTS_MIN_RECORDS, 0, TS_RING_RECORDS, BTS_POLICY_WRAP,
                                          BTS_EVENTS_TIMESTAMPS, BTS_CPL_KERNEL);
    static struct bts_trace tr[2];
    for (unsigned i = 0; i < 2; i++)
        if (!CHECK_EQ(bts_configure(&tr[i], &cfg), 0))
            return;
    uint64_t without = UINT64_MAX, untraced = UINT64_MAX, traced = UINT64_MAX;
    for (unsigned r = 0; r < SWITCH_ROUNDS; r++) {
        sched_ds_hook_t hook = sched_set_ds_hook(NULL);
        keep_min(&without, cycles_per_switch(NULL));
        sched_set_ds_hook(hook);
        keep_min(&untraced, cycles_per_switch(NULL));
        for (unsigned i = 0; i < 2; i++)
            bts_clear(&tr[i]);
        keep_min(&traced, cycles_per_switch(tr));
    }
    /* The last round's traced switches went through the hook: each task arrived and left once
     * per yield at least, and as often as it arrived. */
    for (unsigned i = 0; i < 2; i++) {
        uint64_t in = 0, out = 0;
        count_timestamps(&tr[i], &in, &out);
        CHECK(in == out && in > PINGPONG_YIELDS, "trace %u: %lu arrivals, %lu departures", i, in,
              out);
        bts_release(&tr[i]);
    }
    if (!CHECK(without != UINT64_MAX && untraced != UINT64_MAX && traced != UINT64_MAX,
               "no switches measured"))
        return;
    test_diag("bench: context switch %lu cycles without the DS hook, %lu untraced, %lu traced "
              "(own DS areas, timestamps; best of %u)",
              without, untraced, traced, SWITCH_ROUNDS);
    ratio_diag("untraced switch/no hook", untraced, without, 105);
    uint64_t r = traced * RATIO_SCALE / without;
    test_diag("bench: traced switch/no hook ratio %lu.%02lu", r / RATIO_SCALE, r % RATIO_SCALE);
}
