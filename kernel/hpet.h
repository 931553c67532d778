/*
 * The HPET (IA-PC HPET Specification 1.0a), found through the ACPI HPET table: its main counter
 * as a reference clock, and one comparator as a one-shot interrupt routed through the I/O APIC
 * (the NMI watchdog's).
 */
#ifndef BTSX_KERNEL_HPET_H
#define BTSX_KERNEL_HPET_H

#include <stdbool.h>
#include <stdint.h>

/* Finds the HPET and starts its main counter. False when there is none (or it is unusable). */
bool hpet_init(void);
bool hpet_present(void);
uint64_t hpet_hz(void);
uint64_t hpet_base(void);
/* The main counter (32-bit counters are zero-extended: use hpet_since()). */
uint64_t hpet_counter(void);
/* Ticks from `start` to now, modulo the counter's width. */
uint64_t hpet_since(uint64_t start);

/* Picks a comparator that can raise a one-shot edge on an I/O APIC input; returns the GSI, or
 * -1 when none can. */
int hpet_oneshot_setup(void);
/* Arms the comparator `ticks` from now (edge, one-shot); disarm stops it. */
void hpet_oneshot_arm(uint64_t ticks);
void hpet_oneshot_disarm(void);
/* The longest one-shot that hpet_since() can still tell from a wrap: half the counter. */
uint64_t hpet_max_oneshot(void);
unsigned hpet_oneshot_timer(void);

#endif
