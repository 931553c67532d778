/*
 * bts.smp.*: the Debug Store on several CPUs at once. Each CPU holds its own DS state
 * (kernel/percpu.h): its idle DS area, the trace it has loaded, the BTS model's registers and
 * stepping, its LVT PC; a threshold interrupt is taken by the CPU whose DS area reached the
 * threshold. Each CPU's part runs as a task on that CPU (task_create_on()), the bootstrap
 * CPU's in the test runner itself, all at once. Every test skips on one CPU.
 */
#include "ds/backend.h"
#include "ds/bts.h"
#include "ds/model.h"
#include "kernel/apic.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/paging.h"
#include "kernel/printf.h"
#include "kernel/trap.h"
#include "kernel/smp.h"
#include "kernel/user.h"
#include "sched/sched.h"
#include "sched/syscall.h"
#include "tests/btscheck.h"
#include "tests/smpstream.h"
#include "tests/test.h"
#include "tests/usertest.h"

#define FIB_N        12
#define HW_RECORDS   64 /* with THRESH: the headroom pmi_case() in t_ds.c gives any skid */
#define THRESH       40
#define RING_RECORDS 4096
#define MAX_RECORDS  32768

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
static struct bts_record *got, *want, *plain; /* MAX_RECORDS each, from arrays() */

static bool arrays(void)
{
    static void *mem;
    if (!test_scratch(&mem, 3 * MAX_RECORDS * sizeof(struct bts_record)))
        return false;
    got = mem;
    want = got + MAX_RECORDS;
    plain = want + MAX_RECORDS;
    return true;
}

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
    if (!need_aps() || !bts_require() || !arrays())
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
    struct task *tasks[SMP_MAX_CPUS] = {0};
    for (unsigned i = 1; i < n; i++) {
        tasks[i] = task_create_on(i, "bts.smp", cpu_trace, &runs[i]);
        CHECK(tasks[i], "no task on cpu %u", i);
    }
    cpu_trace(&runs[0]); /* the bootstrap CPU's own, meanwhile */
    for (unsigned i = 1; i < n; i++)
        if (tasks[i])
            CHECK_EQ(task_join(tasks[i], NULL), 0);

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

/* A user-mode trace: the records that start in user code are the program's own; the others
 * may only be kernel-to-user returns (IRETQ, SYSRETQ), which BTS_OFF_OS keeps or omits as
 * the profile says (docs/hardware.md §6, O4). Moves the user-sourced ones to the front;
 * returns their number and counts the returns. */
static size_t user_records(struct bts_record *r, size_t n, uint64_t *returns, unsigned cpu)
{
    size_t k = 0;
    *returns = 0;
    for (size_t i = 0; i < n; i++) {
        bool from_user = r[i].from >= USER_BASE && r[i].from < USER_END;
        bool to_user = r[i].to >= USER_BASE && r[i].to < USER_END;
        if (from_user) {
            r[k++] = r[i];
            continue;
        }
        bool ret = to_user && (r[i].from == LBL(user_enter_iretq) || r[i].from == LBL(isr_iretq) ||
                               r[i].from == LBL(syscall_sysretq));
        if (!CHECK(ret, "cpu %u: record %zu %#lx -> %#lx is neither user code's nor a return to it",
                   cpu, i, r[i].from, r[i].to))
            break;
        (*returns)++;
    }
    return k;
}

#define SPIN_PASSES test_volume(20000)
#define USER_HW     256
#define USER_RING   32768

BTS_SMP_TEST(user_each_cpu,
             "every CPU runs a traced user task at once: each trace its own loop, exact; each "
             "CPU's threshold interrupts its own",
             60000)
{
    if (!need_aps() || !bts_require() || !arrays())
        return;
    unsigned n = smp_online();
    uint64_t passes = SPIN_PASSES;
    struct bts_config cfg =
        cfg_interrupt(USER_HW, 0, USER_RING, BTS_POLICY_STOP, BTS_EVENTS_BRANCHES, BTS_CPL_USER);
    struct bts_trace tr[SMP_MAX_CPUS];
    struct task *tk[SMP_MAX_CPUS] = {0};
    struct model_stats s0[SMP_MAX_CPUS], s1;
    uint64_t spurious0[SMP_MAX_CPUS];
    unsigned made = 0;
    for (; made < n; made++) {
        tr[made] = (struct bts_trace){0};
        int err = bts_configure(&tr[made], &cfg);
        tk[made] = err ? NULL : task_create_user_on(made, "spin", USER_PROG(uc_spin), 0, passes, 0);
        if (!CHECK(!err && tk[made], "cpu %u: trace %s, task %p", made, err_name(err),
                   (void *)tk[made])) {
            bts_release(&tr[made]);
            break;
        }
        task_set_trace(tk[made], task_current(), &tr[made]);
        bts_enable(&tr[made]);
        model_get_cpu_stats(made, &s0[made]);
        spurious0[made] = bts_spurious_pmis_cpu(made);
    }
    for (unsigned i = 0; i < made; i++)
        task_launch(tk[i]); /* all at once, each on its own CPU (the runner's waits there) */
    for (unsigned i = 0; i < made; i++)
        task_wait(tk[i]);

    /* uc_spin(passes): passes - 1 taken JNZs back to the top, then the exit's SYSCALL
     * (CPL 0 after it: filtered). */
    struct expect e;
    exp_init(&e, want, MAX_RECORDS);
    for (uint64_t p = 1; p < passes && p < MAX_RECORDS; p++)
        exp_add(&e, UADDR(uc_spin, uc_spin_jnz), UADDR(uc_spin, uc_spin_top));
    enum bts_maybe returns_kept = bts_profile()->offos_user_returns;
    for (unsigned i = 0; i < made && !test_failed(); i++) {
        struct bts_status st;
        if (!CHECK_EQ(bts_status(&tr[i], &st), 0))
            continue;
        CHECK(tk[i]->exit_status == 0, "cpu %u: the task ended with %d", i, tk[i]->exit_status);
        model_get_cpu_stats(i, &s1);
        if (bts_backend_is_model())
            CHECK(st.pmis == s1.pmis - s0[i].pmis,
                  "cpu %u: its task's trace took %lu PMIs, its model raised %lu", i, st.pmis,
                  s1.pmis - s0[i].pmis);
        CHECK(st.pmis > 0, "cpu %u: no threshold interrupt in %lu records", i, st.count);
        CHECK(bts_spurious_pmis_cpu(i) == spurious0[i], "cpu %u: %lu spurious PMIs", i,
              bts_spurious_pmis_cpu(i) - spurious0[i]);
        CHECK(st.lost == 0 && !st.overflowed, "cpu %u: %lu records lost", i, st.lost);
        int64_t k = trace_collect(&tr[i], got, MAX_RECORDS);
        if (k < 0)
            continue;
        uint64_t returns;
        size_t u = user_records(got, (size_t)k, &returns, i);
        /* The first entry's IRETQ, and with fixed delivery each PMI's IRETQ back to the loop
         * (an NMI comes inside the model's #DB handler and adds none); any other interrupt
         * that lands in the loop (the bootstrap CPU's watchdog timer, a wake-up IPI) adds its
         * own. */
        uint64_t min_returns = 1 + (pmi_is_nmi() ? 0 : st.pmis);
        CHECK(returns_kept == BTS_ALWAYS  ? returns >= min_returns
              : returns_kept == BTS_NEVER ? returns == 0
                                          : true,
              "cpu %u: %lu kernel-to-user returns, %lu PMIs", i, returns, st.pmis);
        test_info("cpu %u: %ld records (%zu the loop's), %lu PMIs", i, k, u, st.pmis);
        exp_match(got, u, &e);
    }
    for (unsigned i = 0; i < made; i++) {
        task_join(tk[i], NULL);
        bts_release(&tr[i]);
    }
}

extern const char uc_hop_start[], uc_hop_end[], uc_hop_top[], uc_hop_jmp[], uc_hop_jmp_to[],
    uc_hop_after[], uc_hop_jnz[];

#define HOP_ROUNDS 128 /* every round migrates: at least 100 migrations */
#define HOP_HW     64
#define HOP_RING   4096

static bool is_return_to_user(const struct bts_record *r)
{
    return r->to >= USER_BASE && r->to < USER_END &&
           (r->from == LBL(user_enter_iretq) || r->from == LBL(isr_iretq) ||
            r->from == LBL(syscall_sysretq));
}

/* A timestamp as the comparison sees it: {BTS_ESCAPE, its flags (qualifier and CPU)}. */
static void exp_stamp(struct expect *e, enum bts_qualifier q, unsigned cpu)
{
    exp_add(e, BTS_ESCAPE, bts_timestamp_record_on(q, 0, cpu).flags);
}

BTS_SMP_TEST(migrate,
             "a traced user task moves to another CPU in every round of its loop, 128 times: "
             "its trace continuous and exact, each departure and arrival on the right CPU",
             60000)
{
    if (!need_aps() || !bts_require() || !arrays())
        return;
    unsigned n = smp_online();
    unsigned start = (HOP_ROUNDS + 1) % n; /* so that the first round moves too */
    struct bts_config cfg =
        cfg_interrupt(HOP_HW, 0, HOP_RING, BTS_POLICY_STOP,
                      BTS_EVENTS_BRANCHES | BTS_EVENTS_TIMESTAMPS, BTS_CPL_USER);
    struct bts_trace tr = {0};
    int err = bts_configure(&tr, &cfg);
    struct task *tk =
        err ? NULL : task_create_user_on(start, "hop", USER_PROG(uc_hop), 0, HOP_ROUNDS, n);
    if (!CHECK(!err && tk, "trace %s, task %p", err_name(err), (void *)tk)) {
        bts_release(&tr);
        return;
    }
    task_set_trace(tk, task_current(), &tr);
    bts_enable(&tr);
    task_launch(tk);
    task_wait(tk);

    /* The program's records and the timestamps, in order (kernel-to-user returns, which the
     * profile may keep or omit, are left out of both sides). */
    struct expect e;
    exp_init(&e, want, MAX_RECORDS);
    exp_stamp(&e, BTS_Q_ARRIVE, start);
    unsigned on = start, moves = 0;
    for (unsigned r = HOP_ROUNDS; r > 0; r--) {
        exp_add(&e, UADDR(uc_hop, uc_hop_jmp), UADDR(uc_hop, uc_hop_jmp_to));
        exp_stamp(&e, BTS_Q_DEPART, on);
        on = r % n;
        exp_stamp(&e, BTS_Q_ARRIVE, on);
        moves++;
        if (r > 1)
            exp_add(&e, UADDR(uc_hop, uc_hop_jnz), UADDR(uc_hop, uc_hop_top));
    }
    exp_stamp(&e, BTS_Q_DEPART, on); /* the exit */

    struct bts_status st;
    CHECK_EQ(bts_status(&tr, &st), 0);
    CHECK(tk->exit_status == 0, "the task ended with %d", tk->exit_status);
    CHECK(st.lost == 0 && !st.overflowed, "%lu records lost", st.lost);
    int64_t k = trace_collect(&tr, got, MAX_RECORDS);
    size_t m = 0;
    uint64_t returns = 0, migrations = 0, last_cpu = UINT64_MAX;
    for (int64_t i = 0; i < k; i++) {
        struct bts_record r = got[i];
        if (r.from == BTS_ESCAPE) {
            struct bts_event ev;
            if (!CHECK(bts_decode_record(&r, &ev) == 0, "record %ld: a bad timestamp %#lx", i,
                       r.flags))
                break;
            if (ev.kind == BTS_EV_ARRIVE) {
                migrations += last_cpu != UINT64_MAX && ev.cpu != last_cpu;
                last_cpu = ev.cpu;
            }
            got[m++] = (struct bts_record){BTS_ESCAPE, r.flags, 0};
        } else if (r.from >= USER_BASE && r.from < USER_END) {
            got[m++] = r;
        } else if (CHECK(is_return_to_user(&r),
                         "record %ld %#lx -> %#lx: neither the program's, a timestamp nor a "
                         "return to it",
                         i, r.from, r.to)) {
            returns++;
        } else {
            break;
        }
    }
    test_info("%ld records: %zu the program's and timestamps, %lu returns; %lu migrations, %lu "
              "PMIs",
              k, m, returns, migrations, st.pmis);
    CHECK(migrations == moves && moves >= 100, "%lu migrations seen, %u made", migrations, moves);
    if (k >= 0)
        exp_match(got, m, &e);
    task_join(tk, NULL);
    bts_release(&tr);
}

#define STREAM_LOOPS (test_volume(1000000) + 1) /* 1,000,000 taken JNZs each (volume=full) */
#define CROSS_LOOPS  (test_volume(200000) + 1)  /* 25,000 suspensions: the hand-over, not bulk */

BTS_SMP_TEST(stream_cross,
             "a tracer on cpu 0 streams a tracee on cpu 1 (200,000 branches): the tracee suspended "
             "inside its PMI on its CPU, the tracer draining on its own, nothing lost",
             600000)
{
    if (!need_aps() || !bts_require())
        return;
    static struct stream_job j;
    j = (struct stream_job){.cpu = 1, .loops = CROSS_LOOPS};
    struct model_stats a0, a1, b0, b1;
    model_get_cpu_stats(0, &a0);
    model_get_cpu_stats(1, &b0);
    uint64_t sp0 = bts_spurious_pmis_cpu(0), sp1 = bts_spurious_pmis_cpu(1);
    if (!stream_prepare(&j))
        return;
    stream_start(&j, task_current());
    stream_drain(&j);
    struct bts_status st;
    bts_status(&j.tr, &st);
    model_get_cpu_stats(0, &a1);
    model_get_cpu_stats(1, &b1);
    CHECK(j.tracer_cpu == 0 && j.tracee->cpu == 1, "tracer on cpu %u, tracee on cpu %u",
          j.tracer_cpu, j.tracee->cpu);
    if (bts_backend_is_model())
        CHECK(b1.pmis - b0.pmis == st.pmis && a1.pmis == a0.pmis,
              "the trace took %lu PMIs; the model raised %lu on cpu 1, %lu on cpu 0", st.pmis,
              b1.pmis - b0.pmis, a1.pmis - a0.pmis);
    CHECK(bts_spurious_pmis_cpu(0) == sp0 && bts_spurious_pmis_cpu(1) == sp1,
          "spurious PMIs: %lu on cpu 0, %lu on cpu 1", bts_spurious_pmis_cpu(0) - sp0,
          bts_spurious_pmis_cpu(1) - sp1);
    stream_finish(&j, "cross");
}

BTS_SMP_TEST(stream_each_cpu,
             "every CPU streams a tracee of its own to a tracer of its own at once, "
             "1,000,000 branches each (volume=full), nothing lost",
             600000)
{
    if (!need_aps() || !bts_require())
        return;
    unsigned n = smp_online();
    static struct stream_job jobs[SMP_MAX_CPUS];
    struct task *tracers[SMP_MAX_CPUS] = {0};
    unsigned made = 0;
    for (; made < n; made++) {
        jobs[made] = (struct stream_job){.cpu = made, .loops = STREAM_LOOPS};
        if (!stream_prepare(&jobs[made]))
            break;
        tracers[made] = task_create_on(made, "tracer", stream_drain, &jobs[made]);
        if (!CHECK(tracers[made], "no tracer task on cpu %u", made)) {
            bts_release(&jobs[made].tr);
            jobs[made].ready = false;
            task_launch(jobs[made].tracee); /* untraced: it runs to its end */
            task_join(jobs[made].tracee, NULL);
            break;
        }
        stream_start(&jobs[made], tracers[made]);
    }
    uint64_t t0 = rdtsc(), branches = 0;
    for (unsigned i = 0; i < made; i++)
        task_join(tracers[i], NULL);
    uint64_t us = tsc_to_us(rdtsc() - t0);
    for (unsigned i = 0; i < made; i++) {
        char who[16];
        ksnprintf(who, sizeof(who), "cpu %u", i);
        CHECK(jobs[i].tracer_cpu == i, "cpu %u's tracer ran on cpu %u", i, jobs[i].tracer_cpu);
        branches += jobs[i].jnz;
        stream_finish(&jobs[i], who);
    }
    test_info("%u CPUs: %lu branches in %lu ms", made, branches, us / 1000);
}

extern const char uc_chain_start[], uc_chain_end[];

#define CHAIN_HW     32  /* a threshold interrupt every few dozen records, each an append */
#define CHAIN_ROUNDS 100 /* each a task: its start and its end race the tracer too */
#define CHAIN_FULL   100 /* passes per task at full volume */
#define CHAIN_PASSES (test_volume(CHAIN_FULL) + 1)
#define CHAIN_LINKS  7    /* records per pass */
#define CHAIN_RING   1024 /* a task's whole trace: the ring never fills, nothing is dropped */
#define CHAIN_CHUNK  24   /* what one drain takes: less than an append brings */
_Static_assert((CHAIN_FULL + 1) * CHAIN_LINKS + 16 <= CHAIN_RING, "room for the kernel's records");

static bool in_chain(uint64_t a)
{
    return a >= USER_CODE_VA && a < USER_CODE_VA + (uint64_t)(uc_chain_end - uc_chain_start);
}

/* Follows uc_chain's trace across drains: each of its records (from and to in the program:
 * the kernel's entries and returns are left out) starts where the one before it ended. */
struct chain {
    uint64_t last_to, links, breaks;
};

static void chain_follow(struct chain *c, const struct bts_record *r, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        if (!in_chain(r[i].from) || !in_chain(r[i].to))
            continue;
        if (c->last_to && r[i].from != c->last_to && c->breaks++ == 0)
            test_diag("the chain breaks after %lu links: %#lx -> %#lx follows ... -> %#lx",
                      c->links, r[i].from, r[i].to, c->last_to);
        c->last_to = r[i].to;
        c->links++;
    }
}

static uint64_t pmis_of(struct bts_trace *t)
{
    struct bts_status st;
    return bts_status(t, &st) == 0 ? st.pmis : 0;
}

/* One tracee: started, drained while it runs, drained after it ended. */
struct chain_round {
    uint64_t drains, raced;
    struct chain c;
};

static bool chain_round(struct chain_round *r)
{
    struct bts_trace tr = {0};
    struct bts_config cfg =
        cfg_interrupt(CHAIN_HW, 0, CHAIN_RING, BTS_POLICY_STOP, BTS_EVENTS_BRANCHES, BTS_CPL_USER);
    int err = bts_configure(&tr, &cfg);
    struct task *tk =
        err ? NULL : task_create_user_on(1, "chain", USER_PROG(uc_chain), 0, CHAIN_PASSES, 0);
    if (!CHECK(!err && tk, "trace %s, task %p", err_name(err), (void *)tk)) {
        bts_release(&tr);
        return false;
    }
    task_set_trace(tk, task_current(), &tr);
    bts_enable(&tr);
    task_launch(tk);
    /* Drains as fast as the tracer can, from before cpu 1 loads the trace until the task has
     * left it, while cpu 1 records and appends. */
    struct bts_record buf[CHAIN_CHUNK];
    r->c = (struct chain){0};
    while (__atomic_load_n(&tk->state, __ATOMIC_SEQ_CST) != TASK_ZOMBIE) {
        uint64_t pmis = pmis_of(&tr);
        int64_t n = bts_drain_raw(&tr, buf, CHAIN_CHUNK);
        if (n <= 0)
            continue;
        r->drains++;
        if (pmis_of(&tr) != pmis)
            r->raced++;
        chain_follow(&r->c, buf, n);
    }
    /* The rest, once the task has left its CPU (its hardware buffer is the tracer's then). */
    task_wait(tk);
    bts_disable(&tr);
    for (int64_t n; (n = bts_drain_raw(&tr, buf, CHAIN_CHUNK)) > 0;)
        chain_follow(&r->c, buf, n);
    struct bts_status st;
    bool ok = CHECK_EQ(bts_status(&tr, &st), 0);
    ok = ok && CHECK(r->c.breaks == 0, "the chain broke %lu times", r->c.breaks);
    /* Each pass links CHAIN_LINKS records but the last, whose LOOP falls through. */
    uint64_t want = CHAIN_PASSES * CHAIN_LINKS - 1;
    ok = ok &&
         CHECK(st.lost == 0 && r->c.links == want,
               "%lu records of the chain drained, %lu made, %lu lost", r->c.links, want, st.lost);
    ok = ok && CHECK(tk->cpu == 1 && !tk->faulted, "the task ran on cpu %u, faulted %d", tk->cpu,
                     tk->faulted);
    task_join(tk, NULL);
    bts_release(&tr);
    return ok;
}

BTS_SMP_TEST(drain_live,
             "a tracer on cpu 0 drains traces while their threshold interrupts append to them on "
             "cpu 1, from before each task starts until it ends: every record once, in order",
             30000)
{
    if (!need_aps() || !bts_require())
        return;
    uint64_t drains = 0, raced = 0;
    unsigned round = 0;
    for (; round < CHAIN_ROUNDS; round++) {
        struct chain_round r = {0};
        bool ok = chain_round(&r);
        drains += r.drains;
        raced += r.raced;
        if (!ok) {
            test_diag("in round %u of %u", round + 1, CHAIN_ROUNDS);
            return;
        }
    }
    /* How much the drains raced the appends depends on the machine: Bochs runs one CPU at a
     * time for a while, and then none may (the order and count were checked all the same). */
    if (raced == 0)
        test_diag("no drain had an append come meanwhile on this machine (%lu drains)", drains);
    test_info("%u tasks, %lu drains, %lu with an append meanwhile", round, drains, raced);
}
