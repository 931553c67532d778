/*
 * The NMI watchdog: a one-shot NMI at a deadline, for code that spins with interrupts off, which
 * the LAPIC timer cannot interrupt. An HPET comparator raises an edge on an I/O APIC input
 * programmed for NMI delivery. It is one-shot on purpose: nothing arrives before the deadline,
 * so a test that finishes in time never sees it (the BTS model records every interrupt that
 * reaches traced code, so a periodic NMI would add records to exact traces).
 */
#ifndef BTSX_KERNEL_NMIWD_H
#define BTSX_KERNEL_NMIWD_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/trap.h"

/* Sets it up (after apic_init: it needs this CPU's APIC ID). False when there is no HPET
 * comparator that can reach an I/O APIC input. */
bool nmi_watchdog_init(void);
bool nmi_watchdog_available(void);
/* What it runs on, or why there is none, for the header. */
const char *nmi_watchdog_describe(void);
/* Arms (or re-arms) it `us` from now; fn runs in the NMI with the interrupted frame. */
void nmi_watchdog_arm_us(uint64_t us, void (*fn)(struct trap_frame *f));
void nmi_watchdog_cancel(void);

#endif
