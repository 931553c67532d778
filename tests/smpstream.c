#include "tests/smpstream.h"

#include "kernel/apic.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/paging.h"
#include "kernel/percpu.h"
#include "kernel/trap.h"
#include "kernel/user.h"
#include "tests/btscheck.h"
#include "tests/test.h"
#include "tests/usertest.h"

#define STREAM_HW    32 /* a small hardware buffer and ring: many PMIs and waits */
#define STREAM_RING  64
#define STREAM_CHUNK 64

bool stream_prepare(struct stream_job *j)
{
    struct bts_config cfg = cfg_interrupt(STREAM_HW, 0, STREAM_RING, BTS_POLICY_STREAM,
                                          BTS_EVENTS_BRANCHES, BTS_CPL_USER);
    j->tr = (struct bts_trace){0};
    int err = bts_configure(&j->tr, &cfg);
    j->tracee =
        err ? NULL : task_create_user_on(j->cpu, "tracee", USER_PROG(uc_spin), 0, j->loops, 0);
    if (!CHECK(!err && j->tracee, "cpu %u: trace %s, tracee %p", j->cpu, err_name(err),
               (void *)j->tracee)) {
        bts_release(&j->tr);
        return false;
    }
    j->ready = true;
    return true;
}

void stream_start(struct stream_job *j, struct task *tracer)
{
    j->tracer = tracer;
    bts_set_callbacks(&j->tr, sched_stream_full, NULL, j->tracee);
    task_set_trace(j->tracee, tracer, &j->tr);
    bts_enable(&j->tr);
    task_launch(j->tracee);
}

void stream_drain(void *job)
{
    struct stream_job *j = job;
    struct bts_record chunk[STREAM_CHUNK];
    const uint64_t from = UADDR(uc_spin, uc_spin_jnz), to = UADDR(uc_spin, uc_spin_top);
    const uint64_t start = UADDR(uc_spin, uc_spin_start);
    uint64_t t0 = rdtsc();
    bool first = true;
    j->tracer_cpu = this_cpu()->cpu;
    j->first_ok = true;
    for (;;) {
        sched_wait_tracee(j->tracee);
        bool ended = j->tracee->state == TASK_ZOMBIE;
        int64_t n;
        while ((n = bts_drain_raw(&j->tr, chunk, STREAM_CHUNK)) > 0) {
            j->drains++;
            for (int64_t i = 0; i < n; i++) {
                const struct bts_record *r = &chunk[i];
                if (r->from == from && r->to == to)
                    j->jnz++;
                else if (r->to >= USER_BASE && r->to < USER_END &&
                         (r->from == LBL(isr_iretq) || r->from == LBL(user_enter_iretq)))
                    j->irets++; /* returns to the tracee, as the profile keeps them */
                else
                    j->other++;
                if (first && r->from == LBL(user_enter_iretq))
                    j->first_ok = r->to == start;
                first = false;
            }
        }
        if (ended)
            break;
        sched_release_tracee(j->tracee);
        /* A tracer may look at a trace that records on another CPU right now: the count
         * reads the ring only, never that CPU's hardware buffer (which would lose or repeat
         * records). */
        j->polled += bts_count(&j->tr);
    }
    j->us = tsc_to_us(rdtsc() - t0);
}

void stream_finish(struct stream_job *j, const char *who)
{
    if (!j->ready)
        return;
    struct bts_status st;
    bts_status(&j->tr, &st);
    int status = -1;
    task_join(j->tracee, &status);
    test_info("%s: tracee on cpu %u, tracer on cpu %u: %lu branches in %lu ms, %lu PMIs, %lu "
              "waits, %lu lost",
              who, j->cpu, j->tracer_cpu, j->jnz, j->us / 1000, st.pmis, st.stream_waits, st.lost);
    CHECK(st.lost == 0, "%s: %lu records lost", who, st.lost);
    CHECK(j->jnz == j->loops - 1, "%s: %lu loop records, expected %lu", who, j->jnz, j->loops - 1);
    CHECK(j->other == 0 && j->first_ok, "%s: %lu records out of place%s", who, j->other,
          j->first_ok ? "" : ", the first entry wrong");
    CHECK(st.stream_waits > 0, "%s: the tracee was never suspended for its tracer", who);
    CHECK(status == 0, "%s: the tracee ended with %d", who, status);
    bts_release(&j->tr);
    j->ready = false;
}
