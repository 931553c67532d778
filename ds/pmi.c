/*
 * The threshold interrupt, one handler for both backends (docs/hardware.md §5): stop
 * recording, drain base..index into the loaded trace's ring under its policy, reset the
 * index, unmask LVT PC (the CPU masked it when it delivered), EOI for fixed delivery, restart.
 * "The only surefire way of knowing this PMI is ours": the index has reached the threshold.
 * Anything else is counted as spurious and otherwise ignored. The trace's part (which PMI is
 * ours, the buffer policy) is ds/trace.c's bts_threshold(); this file owns the delivery.
 */
#include "ds/backend.h"
#include "ds/bts.h"
#include "ds/pmi.h"
#include "ds/trace.h"
#include "kernel/apic.h"
#include "kernel/smp.h"
#include "kernel/trap.h"

static bool nmi_delivery;

/* count_spurious: false when another NMI source claimed this NMI (an AP's smp_call()). */
static void pmi_handle(struct trap_frame *f, bool count_spurious)
{
    const struct bts_backend *b = bts_backend();
    bool usable = bts_available(NULL);
    /* What was running when the PMI came: a late PMI (skid, docs/hardware.md O2) can arrive
     * after its trace was already stopped by a DEBUGCTL write of 0, and must not turn
     * recording back on behind that write. */
    uint64_t found = usable ? b->read_debugctl() : 0;
    if (usable)
        b->write_debugctl(0); /* 1. stop recording (first: the handler itself is not traced) */
    /* 2-4. copy, reset, policy. The stream policy suspends the task in here, which only a
     * frame on the task's own stack survives: on an IST stack (an NMI in the SYSCALL window or
     * over another IST handler, kernel/isr.S) the records that do not fit stay in the buffer.
     * The index stays at or past the threshold: the model raises the interrupt again at the
     * next record, by then where the task can wait; whether hardware does is open
     * (docs/hardware.md §5, O3), and any later drain takes them. */
    struct bts_trace *t = bts_threshold(trap_can_block(f), count_spurious);
    apic_write(APIC_LVT_PC, apic_read(APIC_LVT_PC) & ~APIC_LVT_MASKED); /* 5. */
    if (!nmi_delivery)
        apic_eoi(); /* 6. fixed delivery only */
    if (t && t->stopped)
        t->enabled = false; /* the stop policy ended it */
    else if (t && t->enabled && found)
        b->write_debugctl(bts_trace_debugctl(t)); /* 7. restart what the trace asked for */
}

static void bts_pmi(struct trap_frame *f)
{
    pmi_handle(f, true);
}

static void bts_pmi_ap_nmi(struct trap_frame *f, bool claimed)
{
    pmi_handle(f, !claimed);
}

void bts_pmi_init(bool nmi)
{
    nmi_delivery = nmi;
    trap_set_handler(nmi ? VEC_NMI : VEC_PMI, bts_pmi);
    if (nmi)
        smp_set_nmi_hook(bts_pmi_ap_nmi); /* an AP's NMI handler is kernel/smp.c's */
    else
        trap_set_ap_handler(VEC_PMI, bts_pmi);
}

void bts_pmi_cpu_init(void)
{
    apic_write(APIC_LVT_PC, nmi_delivery ? APIC_LVT_DM_NMI : (APIC_LVT_DM_FIXED | VEC_PMI));
}
