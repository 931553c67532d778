/*
 * The local APIC, in xAPIC (MMIO) or x2APIC (MSR) mode: EOI, self-IPIs (fixed and NMI), the
 * LVT performance-counter entry that carries the BTS threshold interrupt, and the one-shot
 * timer and TSC rates (CPUID 0x15 where a measurement against the PIT or HPET agrees with it,
 * else the measurement).
 */
#ifndef BTSX_KERNEL_APIC_H
#define BTSX_KERNEL_APIC_H

#include <stdbool.h>
#include <stdint.h>

/* Register offsets (xAPIC MMIO offsets; x2APIC MSR = 0x800 + offset / 16). SDM Vol. 3A, 11. */
#define APIC_ID         0x020
#define APIC_VERSION    0x030
#define APIC_TPR        0x080
#define APIC_EOI        0x0B0
#define APIC_SVR        0x0F0
#define APIC_ISR0       0x100 /* eight 32-bit words, 0x10 apart */
#define APIC_ESR        0x280
#define APIC_ICR_LO     0x300
#define APIC_ICR_HI     0x310
#define APIC_LVT_TIMER  0x320
#define APIC_LVT_PC     0x340
#define APIC_LVT_LINT0  0x350
#define APIC_LVT_LINT1  0x360
#define APIC_LVT_ERROR  0x370
#define APIC_TIMER_INIT 0x380
#define APIC_TIMER_CUR  0x390
#define APIC_TIMER_DIV  0x3E0
#define APIC_SELF_IPI   0x3F0 /* x2APIC only */

#define APIC_SVR_ENABLE     (1u << 8)
#define APIC_LVT_MASKED     (1u << 16)
#define APIC_LVT_DM_FIXED   (0u << 8)
#define APIC_LVT_DM_NMI     (4u << 8)
#define APIC_LVT_DM_MASK    (7u << 8)
#define APIC_LVT_VECTOR     0xFFu
#define APIC_ICR_DM_NMI     (4u << 8)
#define APIC_ICR_PENDING    (1u << 12)
#define APIC_ICR_ASSERT     (1u << 14)
#define APIC_ICR_SELF       (1u << 18) /* destination shorthand: self (fixed only) */
#define APIC_ICR_DM_INIT    (5u << 8)
#define APIC_ICR_DM_STARTUP (6u << 8)
#define APIC_ICR_LEVEL      (1u << 15) /* trigger mode: level (INIT) */
#define APIC_TIMER_DIV_16   0x3

/* apic=: the LAPIC mode. auto keeps x2APIC if the firmware turned it on, else xAPIC. */
enum apic_mode { APIC_MODE_AUTO, APIC_MODE_XAPIC, APIC_MODE_X2APIC };
/* clock=: the reference for the LAPIC timer and TSC rates. auto: the PIT, else the HPET, else
 * CPUID 0x15; the others force one, for tests. */
enum clock_choice { CLOCK_AUTO, CLOCK_PIT, CLOCK_HPET, CLOCK_CPUID };

/* Enables the LAPIC in the mode apic= asks for and calibrates its timer and the TSC. */
void apic_init(void);
bool apic_is_x2apic(void);
/* Why the mode differs from the one asked for, or "". */
const char *apic_note(void);
uint32_t apic_id(void);
uint32_t apic_read(uint32_t reg);
void apic_write(uint32_t reg, uint32_t v);
void apic_eoi(void);
/* EOI every vector still in service (after a handler was abandoned by a recovery). */
unsigned apic_eoi_all(void);
bool apic_in_service(unsigned vector);

void apic_self_ipi(unsigned vector);
void apic_self_nmi(void);
/* IPIs to another CPU by APIC ID: a fixed vector, an NMI, and the INIT and STARTUP messages
 * that start an application processor (kernel/smp.c). */
void apic_send_ipi(uint32_t dest, unsigned vector);
void apic_send_nmi(uint32_t dest);
void apic_send_init(uint32_t dest);
void apic_send_startup(uint32_t dest, unsigned page);
/* On an application processor: its LAPIC on in the bootstrap CPU's mode, set up as
 * apic_init() set the bootstrap CPU's (the timer's divider too: the rates apply to it). */
void apic_init_ap(void);
/* Starts the calling CPU's one-shot timer (VEC_TIMER) with this many ticks. */
void apic_timer_start_ticks(uint64_t ticks);

/* LAPIC timer: calibrated at init; one-shot with a handler. */
uint64_t apic_timer_hz(void);
/* Where the rates came from and why, for the header: "pit", "hpet; clock=hpet",
 * "pit; cpuid-0x15 said 2400000 Hz, tsc 1497600000 Hz", "cpuid-0x15; pit agrees"... */
const char *apic_timer_source(void);
#define APIC_SOURCE_MAX 128
struct trap_frame;
/* Arms the one-shot timer; fn runs in the timer interrupt with the interrupted frame.
 * kernel/timer.h multiplexes it: use that, not this. */
void apic_timer_oneshot_us(uint64_t us, void (*fn)(struct trap_frame *f));
void apic_timer_cancel(void);
/* The independent clocks the rates can be measured against. */
enum clock_ref { CLOCK_REF_NONE, CLOCK_REF_PIT, CLOCK_REF_HPET };
const char *clock_ref_name(enum clock_ref ref);
/* The clock to check the rates against: the PIT if it counts, else the HPET, else none. */
enum clock_ref apic_check_ref(void);
/* Counts the LAPIC timer and the TSC against `ref` (not NONE) over `ms` (for calibration and
 * the rate test); returns LAPIC timer Hz at the divider in use, TSC Hz in *tsc. */
uint64_t apic_timer_measure_hz(enum clock_ref ref, unsigned ms, uint64_t *tsc);


/* TSC frequency, calibrated with the LAPIC timer. */
uint64_t tsc_hz(void);
uint64_t tsc_to_us(uint64_t cycles);
void udelay(uint64_t us);

#endif
