/*
 * A streamed trace of a user task, drained by its tracer without loss (the stream policy): the
 * tracee runs uc_spin(loops) on a CPU of its own choosing, its tracer drains wherever it runs,
 * and the tracee is suspended inside its threshold interrupt whenever the ring is full. Used by
 * bts.smp.* (tests/t_bts_smp.c) and bench.smp_stream (tests/t_bench_smp.c).
 */
#ifndef BTSX_TESTS_SMPSTREAM_H
#define BTSX_TESTS_SMPSTREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "ds/bts.h"
#include "sched/sched.h"

struct stream_job {
    unsigned cpu;   /* the tracee's */
    uint64_t loops; /* uc_spin's passes: loops - 1 taken JNZs */
    struct bts_trace tr;
    struct task *tracee, *tracer;
    /* Results, from the tracer. */
    uint64_t jnz, irets, other, drains, us;
    uint64_t polled; /* what bts_count() said while the tracee ran, summed */
    unsigned tracer_cpu;
    bool first_ok;
    bool ready; /* set up (stream_prepare() succeeded) */
};

/* Configures the trace and creates the tracee on j->cpu, not yet started; false (the test
 * failed) if that fails. */
bool stream_prepare(struct stream_job *j);
/* Makes `tracer` the tracee's tracer and starts the tracee. */
void stream_start(struct stream_job *j, struct task *tracer);
/* The tracer's side: drains until the tracee has ended (run it in the tracer task). */
void stream_drain(void *job);
/* Joins the tracee and releases the trace; checks nothing was lost or out of place and that
 * the tracee was suspended for its tracer (fails the test otherwise). */
void stream_finish(struct stream_job *j, const char *who);

#endif
