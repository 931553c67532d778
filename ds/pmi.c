/*
 * The threshold interrupt, one handler for both backends (docs/hardware.md §5): stop
 * recording, drain base..index into the current trace's ring under its policy, reset the
 * index, unmask LVT PC (the CPU masked it when it delivered), EOI for fixed delivery, restart.
 * "The only surefire way of knowing this PMI is ours": the index has reached the threshold.
 * Anything else is counted as spurious and otherwise ignored.
 */
#include "ds/backend.h"
#include "ds/bts.h"
#include "kernel/apic.h"
#include "kernel/string.h"
#include "kernel/trap.h"

static bool nmi_delivery;
static uint64_t spurious;

uint64_t bts_spurious_pmis(void)
{
    return spurious;
}

void bts_drain_hw(struct bts_trace *t, bool can_wait)
{
    uint64_t n;
    if (ds_pending(t->ds, &n) != 0) {
        /* A corrupted index must not be trusted: nothing is copied from it. */
        t->ring.lost++;
        t->ds->bts_index = t->ds->bts_base;
        return;
    }
    struct bts_record *src = (struct bts_record *)t->ds->bts_base;
    t->draining = true;
    uint64_t done = ring_append(&t->ring, src, n);
    while (can_wait && done < n && t->cfg.policy == BTS_POLICY_STREAM && t->on_full) {
        /* Stream: never drop. The tracer makes room, then the rest goes in. */
        t->stream_waits++;
        if (t->on_full(t, t->cb_arg) != 0)
            break;
        uint64_t more = ring_append(&t->ring, src + done, n - done);
        if (more == 0)
            break;
        done += more;
    }
    uint64_t left = n - done;
    if (left && t->cfg.policy == BTS_POLICY_STREAM && !can_wait) {
        /* A drain that cannot wait (a tracer reading, a switch, a threshold interrupt on a
         * shared stack) waits for nobody: what does not fit stays in the hardware buffer,
         * oldest first, for the next drain. */
        memmove(src, src + done, left * BTS_RECORD_SIZE);
        t->ds->bts_index = t->ds->bts_base + left * BTS_RECORD_SIZE;
    } else {
        if (left && t->cfg.policy == BTS_POLICY_STREAM)
            t->ring.lost += left; /* no tracer made room: counted, never silent */
        t->ds->bts_index = t->ds->bts_base;
    }
    t->draining = false;
    if (t->cfg.policy == BTS_POLICY_STOP && t->ring.overflowed && !t->stopped) {
        t->stopped = true;
        if (t->on_stop)
            t->on_stop(t, t->cb_arg);
    }
}

static void bts_pmi(struct trap_frame *f)
{
    const struct bts_backend *b = bts_backend();
    bool usable = bts_available(NULL);
    if (usable)
        b->write_debugctl(0); /* 1. stop recording (first: the handler itself is not traced) */
    struct bts_trace *t = usable ? bts_current() : NULL;
    if (t && t->configured && t->cfg.mode == BTS_MODE_INTERRUPT &&
        t->ds->bts_index >= t->ds->bts_thresh) {
        uint64_t at = (t->ds->bts_index - t->ds->bts_base) / BTS_RECORD_SIZE;
        if (t->pmis++ == 0 || at < t->pmi_at_min)
            t->pmi_at_min = at;
        if (at > t->pmi_at_max)
            t->pmi_at_max = at;
        /* 2-4. copy, reset, policy. The stream policy suspends the task in here, which only
         * a frame on the task's own stack survives: on an IST stack (an NMI in the SYSCALL
         * window or over another IST handler, kernel/isr.S) the records that do not fit stay
         * in the buffer. The index stays at or past the threshold: the model raises the
         * interrupt again at the next record, by then where the task can wait; whether
         * hardware does is open (docs/hardware.md §5, O3), and any later drain takes them. */
        bts_drain_hw(t, trap_can_block(f));
    } else {
        spurious++;
    }
    apic_write(APIC_LVT_PC, apic_read(APIC_LVT_PC) & ~APIC_LVT_MASKED); /* 5. */
    if (!nmi_delivery)
        apic_eoi(); /* 6. fixed delivery only */
    if (t && t->stopped)
        t->enabled = false; /* the stop policy ended it */
    else if (t && t->enabled)
        b->write_debugctl(bts_trace_debugctl(t)); /* 7. restart what the trace asked for */
}

void bts_pmi_init(bool nmi)
{
    nmi_delivery = nmi;
    trap_set_handler(nmi ? VEC_NMI : VEC_PMI, bts_pmi);
    apic_write(APIC_LVT_PC, nmi ? APIC_LVT_DM_NMI : (APIC_LVT_DM_FIXED | VEC_PMI));
}
