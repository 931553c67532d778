/*
 * bts.task.*: per-task DS areas switched at every context switch. Traced user tasks record
 * their own branches and nothing of anyone else's; timestamps pair up and follow the
 * scheduler's log; the CPL filter selects user or kernel transfers; SYSCALL/SYSRET records;
 * 64 tasks x 10,000 switches; a stream tracer that never loses a record; a crash report with
 * the last branches. Expectations come from the labels of tests/user_code.S.
 */
#include "ds/backend.h"
#include "ds/bts.h"
#include "ds/model.h"
#include "kernel/apic.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/mem.h"
#include "kernel/string.h"
#include "kernel/symbols.h"
#include "kernel/trap.h"
#include "kernel/user.h"
#include "sched/sched.h"
#include "sched/syscall.h"
#include "tests/btscheck.h"
#include "tests/switchlog.h"
#include "tests/test.h"
#include "tests/usertest.h"

#define ISO_TASKS     8
#define ISO_ROUNDS    3
#define STRESS_TASKS  64
#define STRESS_ROUNDS test_volume(160) /* 64 x 160 yields: over 10,000 switches */
#define MAX_RECORDS   8192
/* KTAP names bts.task.*, as the suite is called. */
#define TASK_TEST(case, description, timeout)                                                      \
    TEST_DEFINE(bts_task_##case, "bts.task." #case, description, timeout, 0)

static struct bts_record got[MAX_RECORDS], want[MAX_RECORDS];

static struct bts_trace *task_trace(unsigned hw, unsigned ring, enum bts_policy policy,
                                    unsigned events, unsigned cpl)
{
    struct bts_config cfg = cfg_interrupt(hw, 0, ring, policy, events, cpl);
    return trace_alloc(&cfg);
}

/* Starts tracing a task that has not run yet: its first switch-in loads the trace. */
static void trace_task(struct task *tk, struct bts_trace *t)
{
    task_set_trace(tk, task_current(), t);
    bts_enable(t);
}

/* Branch records only (timestamps are checked on their own). */
static int64_t branches_of(struct bts_trace *t, struct bts_record *out, size_t max,
                           uint64_t *arrive, uint64_t *depart)
{
    int64_t n = trace_collect(t, out, max), k = 0;
    *arrive = *depart = 0;
    for (int64_t i = 0; i < n; i++) {
        if (out[i].from == BTS_ESCAPE) {
            *arrive += out[i].flags == BTS_Q_ARRIVE;
            *depart += out[i].flags == BTS_Q_DEPART;
        } else {
            out[k++] = out[i];
        }
    }
    return n < 0 ? n : k;
}

TASK_TEST(isolation, "8 interleaved tasks: each trace holds exactly its own branches", 0)
{
    if (!bts_require())
        return;
    struct task *tk[ISO_TASKS];
    struct bts_trace *tr[ISO_TASKS];
    static struct switch_log_entry log[SWITCH_LOG_LEN];
    static struct switch_log sl;
    for (unsigned i = 0; i < ISO_TASKS; i++) {
        tr[i] = task_trace(256, 1024, BTS_POLICY_STOP, BTS_EVENTS_BRANCHES, BTS_CPL_USER);
        tk[i] = user_task("iso", USER_PROG(uc_iso), i + 1, ISO_ROUNDS);
        if (!tr[i] || !tk[i])
            return;
        trace_task(tk[i], tr[i]);
    }
    switch_log_start(&sl, log, SWITCH_LOG_LEN);
    for (unsigned i = 0; i < ISO_TASKS; i++)
        task_wait(tk[i]);
    unsigned nlog = switch_log_stop(&sl);
    for (unsigned i = 0; i < ISO_TASKS && !test_failed(); i++) {
        struct expect e;
        exp_init(&e, want, MAX_RECORDS);
        iso_expect(&e, i + 1, ISO_ROUNDS);
        uint64_t a, d;
        int64_t n = branches_of(tr[i], got, MAX_RECORDS, &a, &d);
        test_info("task %u: %ld records", tk[i]->id, n);
        if (n >= 0 && !match_user(got, n, &e))
            test_diag("^ in the trace of task %u (k=%u)", tk[i]->id, i + 1);
    }
    /* The known order: the runner, then each task in turn, round after round. */
    unsigned turns = 0;
    for (unsigned j = 0; j + 1 < nlog; j++)
        if (log[j].to != 0 && log[j + 1].to != 0)
            turns += log[j + 1].to == log[j].to + 1;
    CHECK(turns >= ISO_TASKS * (ISO_ROUNDS - 1), "tasks did not alternate round-robin (%u)", turns);
    for (unsigned i = 0; i < ISO_TASKS; i++) {
        task_join(tk[i], NULL);
        trace_free(tr[i]);
    }
}

TASK_TEST(timestamps, "arrivals and departures pair up and follow the switch log", 0)
{
    if (!bts_require())
        return;
    enum { TASKS = 4, ROUNDS = 5 };
    struct task *tk[TASKS];
    struct bts_trace *tr[TASKS];
    static struct switch_log_entry log[SWITCH_LOG_LEN];
    static struct switch_log sl;
    for (unsigned i = 0; i < TASKS; i++) {
        tr[i] = task_trace(256, 1024, BTS_POLICY_STOP, BTS_EVENTS_BRANCHES | BTS_EVENTS_TIMESTAMPS,
                           BTS_CPL_USER);
        tk[i] = user_task("ts", USER_PROG(uc_iso), 2, ROUNDS);
        if (!tr[i] || !tk[i])
            return;
        trace_task(tk[i], tr[i]);
    }
    switch_log_start(&sl, log, SWITCH_LOG_LEN);
    for (unsigned i = 0; i < TASKS; i++)
        task_wait(tk[i]);
    unsigned nlog = switch_log_stop(&sl);
    for (unsigned i = 0; i < TASKS; i++) {
        int64_t n = trace_collect(tr[i], got, MAX_RECORDS);
        unsigned id = tk[i]->id, arrivals = 0, departures = 0, in = 0, out = 0;
        uint64_t last = 0;
        bool inside = false;
        for (int64_t r = 0; r < n; r++) {
            if (got[r].from != BTS_ESCAPE)
                continue;
            uint64_t tsc = got[r].to;
            CHECK(tsc >= last, "task %u: TSC goes back at record %ld", id, r);
            last = tsc;
            bool arrive = got[r].flags == BTS_Q_ARRIVE;
            /* The API decodes it as what it is (ds/record.h). */
            struct bts_event ev = {0};
            CHECK(bts_decode_record(&got[r], &ev) == 0 &&
                      ev.kind == (arrive ? BTS_EV_ARRIVE : BTS_EV_DEPART) && ev.tsc == tsc,
                  "task %u: record %ld (qualifier %lu) decodes as kind %d, TSC %lu", id, r,
                  got[r].flags, ev.kind, ev.tsc);
            CHECK(arrive != inside, "task %u: %s twice in a row at record %ld", id,
                  arrive ? "arrival" : "departure", r);
            inside = arrive;
            /* The matching switch in the scheduler's log, and the next one after it. */
            unsigned seen = 0, j;
            for (j = 0; j < nlog; j++) {
                bool match = arrive ? log[j].to == id : log[j].from == id;
                if (match && seen++ == (arrive ? arrivals : departures))
                    break;
            }
            if (CHECK(j < nlog, "task %u: no logged switch for timestamp %ld", id, r)) {
                uint64_t hi = j + 1 < nlog ? log[j + 1].tsc : UINT64_MAX;
                CHECK(log[j].tsc <= tsc && tsc <= hi,
                      "task %u: timestamp %ld outside its "
                      "switch (%lu not in %lu..%lu)",
                      id, r, tsc, log[j].tsc, hi);
            }
            arrive ? arrivals++ : departures++;
        }
        for (unsigned j = 0; j < nlog; j++) {
            in += log[j].to == id;
            out += log[j].from == id;
        }
        CHECK(arrivals == in && departures == out && arrivals == departures,
              "task %u: %u arrivals, %u departures; the log has %u in, %u out", id, arrivals,
              departures, in, out);
        CHECK(arrivals >= ROUNDS, "task %u ran %u times", id, arrivals);
        test_info("task %u: %u arrivals, %u departures", id, arrivals, departures);
    }
    for (unsigned i = 0; i < TASKS; i++) {
        task_join(tk[i], NULL);
        trace_free(tr[i]);
    }
}

static void ignore_trap(struct trap_frame *f)
{
    (void)f;
}

/* uc_sys traced with a CPL filter; returns the record count or -1. Its int n returns at once. */
static int64_t run_sys(unsigned cpl, struct bts_record *out)
{
    struct bts_trace *tr = task_trace(512, 4096, BTS_POLICY_STOP, BTS_EVENTS_BRANCHES, cpl);
    struct task *tk = user_task("sys", USER_PROG(uc_sys), 0, 0);
    if (!tr || !tk)
        return -1;
    trap_handler_t old = trap_set_handler(VEC_TEST_SOFTINT, ignore_trap);
    trace_task(tk, tr);
    int status = -1;
    task_join(tk, &status);
    trap_set_handler(VEC_TEST_SOFTINT, old);
    CHECK_EQ(status, 0);
    int64_t n = trace_collect(tr, out, MAX_RECORDS);
    trace_free(tr);
    return n;
}

static int64_t find(const struct bts_record *r, int64_t n, int64_t from_i, uint64_t from,
                    uint64_t to)
{
    for (int64_t i = from_i; i < n; i++)
        if (r[i].from == from && r[i].to == to)
            return i;
    return -1;
}

TASK_TEST(cpl_filter, "BTS_OFF_OS / BTS_OFF_USR select user or kernel transfers", 0)
{
    if (!bts_require())
        return;
    const uint64_t sys = UADDR(uc_sys, uc_sys_call);

    /* User only (BTS_OFF_OS): its own branches and the kernel-to-user returns, exactly: the
     * IRETQ that enters it, the SYSRETQ and the IRETQ back from its int n, whose CPL after is
     * 3 (the int itself lands at CPL 0: filtered). */
    int64_t n = run_sys(BTS_CPL_USER, got);
    struct expect e;
    exp_init(&e, want, MAX_RECORDS);
    exp_add(&e, LBL(user_enter_iretq), UADDR(uc_sys, uc_sys_start));
    exp_add(&e, UADDR(uc_sys, uc_sys_j1), UADDR(uc_sys, uc_sys_t1));
    exp_add(&e, LBL(syscall_sysretq), UADDR(uc_sys, uc_sys_after));
    exp_add(&e, UADDR(uc_sys, uc_sys_j2), UADDR(uc_sys, uc_sys_t2));
    exp_add(&e, LBL(isr_iretq), UADDR(uc_sys, uc_sys_int_back));
    match_user(got, n, &e);
    for (int64_t i = 0; i < n; i++)
        CHECK(user_addr(got[i].to), "OFF_OS: record %ld lands in the kernel (%#lx)", i, got[i].to);

    /* Kernel only (BTS_OFF_USR): every record lands at CPL 0 (none of the returns to user
     * code); the SYSCALL and the int n are among them. */
    n = run_sys(BTS_CPL_KERNEL, got);
    CHECK(n > 0, "OFF_USR: no kernel records");
    for (int64_t i = 0; i < n; i++)
        if (!CHECK(!user_addr(got[i].to), "OFF_USR: record %ld lands in user space (%#lx)", i,
                   got[i].to))
            break;
    CHECK(find(got, n, 0, sys, LBL(syscall_entry)) >= 0, "OFF_USR: no SYSCALL record");
    CHECK(find(got, n, 0, UADDR(uc_sys, uc_sys_int), trap_stub_address(VEC_TEST_SOFTINT)) >= 0,
          "OFF_USR: no int n record");
    test_info("kernel-only: %ld records", n);

    /* Both bits: nothing at all. */
    n = run_sys(0, got);
    CHECK(n == 0, "OFF_OS|OFF_USR: %ld records", n);

    /* Neither: both kinds, the user ones in their order. */
    n = run_sys(BTS_CPL_KERNEL | BTS_CPL_USER, got);
    int64_t at = 0, user = 0, kernel = 0;
    for (size_t i = 0; i < e.n && at >= 0; i++)
        at = find(got, n, at, e.rec[i].from, e.rec[i].to);
    CHECK(at >= 0, "both: the user records are not all there in order");
    for (int64_t i = 0; i < n; i++)
        user_addr(got[i].to) ? user++ : kernel++;
    CHECK(user >= 5 && kernel > 0, "both: %ld user, %ld kernel records", user, kernel);
}

TASK_TEST(offos_returns, "under BTS_OFF_OS the model records kernel-to-user returns as asked", 0)
{
    if (!bts_require())
        return;
    if (!bts_backend_is_model()) {
        /* The test reads the model's own counters and options. */
        test_skip("the model is not the backend in use");
        return;
    }
    struct model_freedoms f;
    model_get_freedoms(&f);
    struct model_stats s0, s1;
    model_get_stats(&s0);
    /* Each run returns to user code by IRETQ at its start, by SYSRETQ after its call and by
     * IRETQ after its int n. */
    uint64_t in_trace = 0;
    for (unsigned run = 0; run < 16 && !test_failed(); run++) {
        int64_t n = run_sys(BTS_CPL_USER, got);
        for (int64_t i = 0; i < n; i++)
            in_trace += kernel_to_user_return(&got[i]);
    }
    model_get_stats(&s1);
    uint64_t kept = s1.offos_returns - s0.offos_returns;
    uint64_t omitted = s1.offos_omitted - s0.offos_omitted;
    test_diag("kernel-to-user returns under BTS_OFF_OS: %lu recorded, %lu omitted (%s)", kept,
              omitted,
              f.offos_returns == BTS_ALWAYS  ? "always"
              : f.offos_returns == BTS_NEVER ? "never"
                                             : "either");
    CHECK(kept + omitted >= 48, "only %lu returns seen for 16 runs", kept + omitted);
    CHECK(in_trace == kept, "%lu returns in the traces, the model recorded %lu", in_trace, kept);
    CHECK(f.offos_returns != BTS_NEVER || kept == 0, "never, yet %lu recorded", kept);
    CHECK(f.offos_returns != BTS_ALWAYS || omitted == 0, "always, yet %lu omitted", omitted);
    CHECK(f.offos_returns != BTS_EITHER || (kept > 0 && omitted > 0),
          "either, yet %lu recorded and %lu omitted", kept, omitted);
}

/* With CPL 0 filtered the PMI's own entry is not recorded, so each PMI finds the index where
 * the threshold record and the skid left it: within the profile's window, which under an exact
 * profile is the threshold itself (a PMI there that the handler took for spurious would be
 * drained one record later). */
TASK_TEST(pmi_user, "user-only interrupt mode: every PMI finds the index in the profile's window",
          0)
{
    if (!bts_require())
        return;
    enum { K = 8, ROUNDS = 16 }; /* about 11 records a round: several PMIs at 64 records */
    struct bts_trace *tr = task_trace(64, 4096, BTS_POLICY_STOP, BTS_EVENTS_BRANCHES, BTS_CPL_USER);
    struct task *tk = user_task("pmiu", USER_PROG(uc_iso), K, ROUNDS);
    if (!tr || !tk)
        return;
    trace_task(tk, tr);
    int status = -1;
    task_join(tk, &status);
    CHECK_EQ(status, K);
    struct bts_status st;
    CHECK_EQ(bts_status(tr, &st), 0);
    uint64_t thresh = (tr->ds->bts_thresh - tr->ds->bts_base) / BTS_RECORD_SIZE, lo, hi;
    bts_profile_pmi_window(thresh, false, &lo, &hi);
    test_info("%lu PMIs at %lu..%lu records, allowed %lu..%lu (%s)", st.pmis, st.pmi_at_min,
              st.pmi_at_max, lo, hi, bts_profile()->name);
    CHECK(st.pmis >= 2 && st.pmi_at_min >= lo && st.pmi_at_max <= hi,
          "%lu PMIs at %lu..%lu records, allowed %lu..%lu", st.pmis, st.pmi_at_min, st.pmi_at_max,
          lo, hi);
    CHECK(st.lost == 0 && !st.overflowed, "%lu records lost", st.lost);
    trace_free(tr);
}

TASK_TEST(syscall_records, "SYSCALL and SYSRET records name the entry and return", 0)
{
    if (!bts_require())
        return;
    int64_t n = run_sys(BTS_CPL_KERNEL | BTS_CPL_USER, got);
    int64_t s = find(got, n, 0, UADDR(uc_sys, uc_sys_call), LBL(syscall_entry));
    int64_t r = find(got, n, s < 0 ? 0 : s, LBL(syscall_sysretq), UADDR(uc_sys, uc_sys_after));
    CHECK(s >= 0, "no record {SYSCALL -> syscall_entry}");
    CHECK(r > s, "no record {SYSRETQ -> the instruction after the SYSCALL} after it");
    /* With CPL 0 recorded the kernel side of the call is traced too (docs/model.md: the
     * branches of syscall_dispatch(); hardware records every kernel branch, from the CALL in
     * syscall_entry on): records between the two, the first one from the system call's own
     * code, each landing in the kernel. */
    if (s >= 0 && r > s) {
        CHECK(r > s + 1, "no kernel record between the SYSCALL (%ld) and the SYSRET (%ld)", s, r);
        uint64_t off;
        const char *first = r > s + 1 ? symbol_lookup(got[s + 1].from, &off) : NULL;
        CHECK(first && (!strcmp(first, "syscall_entry") || !strcmp(first, "syscall_dispatch")),
              "the first record after the SYSCALL comes from %s, not from syscall_entry or "
              "syscall_dispatch",
              first ? first : "nowhere known");
        for (int64_t i = s + 1; i < r; i++)
            if (!CHECK(!user_addr(got[i].to),
                       "record %ld, inside the system call, lands in "
                       "user space (%#lx)",
                       i, got[i].to))
                break;
    }
    if (r > 0 && r + 1 < n)
        CHECK(got[r + 1].from == UADDR(uc_sys, uc_sys_j2), "the user's next branch does not "
                                                           "follow the SYSRET record");
}

TASK_TEST(stress, "64 traced tasks, 10,000 switches (volume=full): exact counts per task", 600000)
{
    if (!bts_require())
        return;
    static struct task *tk[STRESS_TASKS];
    static struct bts_trace *tr[STRESS_TASKS];
    static uint64_t ks[STRESS_TASKS];
    static struct switch_log sl;
    uint64_t t0 = rdtsc();
    switch_log_start(&sl, NULL, 0);
    for (unsigned i = 0; i < STRESS_TASKS; i++) {
        tr[i] = task_trace(256, 4096, BTS_POLICY_STOP, BTS_EVENTS_BRANCHES | BTS_EVENTS_TIMESTAMPS,
                           BTS_CPL_USER);
        ks[i] = 1 + test_rand() % 8; /* the chain length: the run's seed picks it */
        tk[i] = user_task("stress", USER_PROG(uc_iso), ks[i], STRESS_ROUNDS);
        if (!tr[i] || !tk[i])
            return;
        trace_task(tk[i], tr[i]);
    }
    for (unsigned i = 0; i < STRESS_TASKS; i++)
        task_wait(tk[i]);
    switch_log_stop(&sl);
    uint64_t switches = sl.switches;
    test_diag("stress: %u tasks, %lu switches in %lu ms", STRESS_TASKS, switches,
              tsc_to_us(rdtsc() - t0) / 1000);
    /* each task yields once per round, so every round of every task is a switch */
    CHECK(switches >= STRESS_TASKS * STRESS_ROUNDS, "only %lu switches", switches);
    for (unsigned i = 0; i < STRESS_TASKS; i++) {
        uint64_t k = ks[i], a, d;
        /* iretq + per round (jmp + k links + sysret) + a jnz between rounds; on hardware only
         * the user-sourced ones are counted (see user_sourced) */
        uint64_t want_branches = 1 + STRESS_ROUNDS * (k + 2) + (STRESS_ROUNDS - 1);
        if (bts_profile()->offos_user_returns != BTS_ALWAYS)
            want_branches -= 1 + STRESS_ROUNDS;
        int64_t n = branches_of(tr[i], got, MAX_RECORDS, &a, &d);
        if (n > 0)
            n = (int64_t)user_sourced(got, (size_t)n, true);
        struct bts_status st;
        bts_status(tr[i], &st);
        CHECK(st.lost == 0, "task %u lost %lu records", tk[i]->id, st.lost);
        CHECK((uint64_t)n == want_branches, "task %u: %ld branch records, expected %lu", tk[i]->id,
              n, want_branches);
        /* It runs once per round plus its first arrival; it leaves as often as it came. */
        CHECK(a == STRESS_ROUNDS + 1 && d == a,
              "task %u: %lu arrivals, %lu departures, "
              "expected %lu each",
              tk[i]->id, a, d, STRESS_ROUNDS + 1);
        if (test_failed())
            break;
    }
    for (unsigned i = 0; i < STRESS_TASKS; i++) {
        task_join(tk[i], NULL);
        trace_free(tr[i]);
    }
}

#define STREAM_LOOPS (test_volume(2000000) + 1) /* 2,000,000 taken JNZs (volume=full) */

TASK_TEST(stream, "stream: a tracer drains a 64-record ring, 2M branches (volume=full), none lost",
          600000)
{
    if (!bts_require())
        return;
    struct bts_trace *tr = task_trace(32, 64, BTS_POLICY_STREAM, BTS_EVENTS_BRANCHES, BTS_CPL_USER);
    struct task *tk = user_task("tracee", USER_PROG(uc_spin), STREAM_LOOPS, 0);
    if (!tr || !tk)
        return;
    bts_set_callbacks(tr, sched_stream_full, NULL, tk);
    trace_task(tk, tr);
    uint64_t jnz = 0, irets = 0, other = 0, drains = 0, t0 = rdtsc();
    const uint64_t from = UADDR(uc_spin, uc_spin_jnz), to = UADDR(uc_spin, uc_spin_top);
    bool first = true, ok = true;
    enum bts_maybe returns = bts_profile()->offos_user_returns;
    static struct bts_record chunk[64];
    for (;;) {
        sched_wait_tracee(tk);
        bool ended = tk->state == TASK_ZOMBIE;
        int64_t n;
        while ((n = bts_drain_raw(tr, chunk, 64)) > 0) {
            drains++;
            for (int64_t i = 0; i < n; i++) {
                const struct bts_record *r = &chunk[i];
                if (returns != BTS_ALWAYS && !user_addr(r->from)) {
                    /* kernel-to-user returns as the profile allows them, nothing else */
                    other += returns == BTS_NEVER || !kernel_to_user_return(r);
                    continue;
                }
                if (first && returns == BTS_ALWAYS) {
                    ok &=
                        r->from == LBL(user_enter_iretq) && r->to == UADDR(uc_spin, uc_spin_start);
                    first = false;
                } else if (r->from == from && r->to == to) {
                    jnz++;
                } else if (r->from == LBL(isr_iretq)) {
                    irets++; /* the PMI's return to the tracee, mid-loop */
                } else {
                    other++;
                }
            }
        }
        if (ended)
            break;
        sched_release_tracee(tk);
    }
    uint64_t us = tsc_to_us(rdtsc() - t0);
    struct bts_status st;
    bts_status(tr, &st);
    int status = -1;
    task_join(tk, &status);
    test_diag("stream pair: %lu branches in %lu ms (%lu records/s), %lu PMIs, %lu waits, "
              "%lu lost",
              jnz, us / 1000, us ? (jnz + irets) * 1000000 / us : 0, st.pmis, st.stream_waits,
              st.lost);
    CHECK(ok, "the first record is not the entry into the tracee");
    CHECK_EQ(st.lost, 0);
    CHECK_EQ(jnz, STREAM_LOOPS - 1);
    CHECK(other == 0, "%lu records out of place", other);
    CHECK(st.stream_waits > 0, "the tracee was never suspended for its tracer");
    CHECK_EQ(status, 0);
    trace_free(tr);
}

/*
 * Streamed tasks that end while a threshold interrupt is owed: the PMI that comes at the
 * DEBUGCTL write of their exit (a late one on hardware, or the model's skid; as an NMI, IF=0
 * does not hold it) may find the ring full and suspend the task for its tracer. The task must
 * then come back and finish: every record drained, its exit status 0, nothing scheduled
 * twice. Loop lengths step through two ring sizes, so the exit meets every ring fill level
 * (with volume=quick, a tenth of the tasks, spread over the same lengths).
 */
#define EXIT_LENGTHS 128
#define EXIT_BASE    40

TASK_TEST(exit_stream, "streamed tasks end with a threshold interrupt owed: drained, exit 0", 60000)
{
    if (!bts_require())
        return;
    enum bts_maybe returns = bts_profile()->offos_user_returns;
    const uint64_t from = UADDR(uc_spin, uc_spin_jnz), to = UADDR(uc_spin, uc_spin_top);
    static struct bts_record chunk[64];
    uint64_t waits = 0, tasks = test_volume(EXIT_LENGTHS), step = EXIT_LENGTHS / tasks;
    for (unsigned i = 0; i < tasks && !test_failed(); i++) {
        uint64_t loops = EXIT_BASE + i * step;
        struct bts_trace *tr =
            task_trace(32, 64, BTS_POLICY_STREAM, BTS_EVENTS_BRANCHES, BTS_CPL_USER);
        struct task *tk = user_task("exit", USER_PROG(uc_spin), loops, 0);
        if (!tr || !tk)
            return;
        bts_set_callbacks(tr, sched_stream_full, NULL, tk);
        trace_task(tk, tr);
        uint64_t jnz = 0, other = 0;
        for (;;) {
            sched_wait_tracee(tk);
            bool ended = tk->state == TASK_ZOMBIE;
            int64_t n;
            while ((n = bts_drain_raw(tr, chunk, 64)) > 0)
                for (int64_t k = 0; k < n; k++) {
                    const struct bts_record *r = &chunk[k];
                    if (r->from == from && r->to == to)
                        jnz++;
                    else if (!kernel_to_user_return(r) || returns == BTS_NEVER)
                        other++;
                }
            if (ended)
                break;
            waits++;
            sched_release_tracee(tk);
        }
        struct bts_status st;
        bts_status(tr, &st);
        int status = -1;
        task_join(tk, &status);
        CHECK(status == 0 && st.lost == 0 && jnz == loops - 1 && other == 0,
              "task %u (%lu loops): exit status %d, %lu lost, %lu of %lu loop records, %lu "
              "others",
              i, loops, status, st.lost, jnz, loops - 1, other);
        trace_free(tr);
    }
    test_diag("stream exit: %lu tasks, %lu tracer waits", tasks, waits);
}

TASK_TEST(crash, "a traced task's crash report names its last branches", 0)
{
    if (!bts_require())
        return;
    struct bts_trace *tr =
        task_trace(256, 1024, BTS_POLICY_WRAP, BTS_EVENTS_BRANCHES, BTS_CPL_USER);
    struct task *tk = user_task("crash", USER_PROG(uc_crash), 8, 0);
    if (!tr || !tk)
        return;
    trace_task(tk, tr);
    task_wait(tk);
    CHECK(tk->faulted && tk->fault.vector == VEC_PF, "no page fault");
    CHECK_EQ(tk->fault.rip, UADDR(uc_crash, uc_crash_load));
    struct expect e;
    exp_init(&e, want, 8);
    exp_add(&e, UADDR(uc_crash, uc_crash_call_a), UADDR(uc_crash, uc_crash_a));
    exp_add(&e, UADDR(uc_crash, uc_crash_call_b), UADDR(uc_crash, uc_crash_b));
    exp_add(&e, UADDR(uc_crash, uc_crash_call_c), UADDR(uc_crash, uc_crash_c));
    if (CHECK(tk->ncrash >= e.n, "only %u branches in the report", tk->ncrash))
        exp_match(&tk->crash[tk->ncrash - e.n], e.n, &e);
    int status = 0;
    task_join(tk, &status);
    CHECK(status == E_FAULT, "exit status %d", status);
    trace_free(tr);
}
