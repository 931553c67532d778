/*
 * Per-CPU state: one struct percpu for each CPU, reached through GS. While the kernel runs,
 * IA32_GS_BASE holds the address of the CPU's struct percpu, whose first word points at
 * itself, so this_cpu() is one load. User tasks keep a GS base of their own: every way into
 * the kernel from CPL 3 swaps the two with SWAPGS and every way out swaps back
 * (sched/syscall_entry.S, kernel/user.S, kernel/isr.S; the interrupt entry swaps whenever
 * IA32_GS_BASE is not a per-CPU address, which also covers an NMI or #DB taken in the few
 * instructions where the kernel runs with the user's GS).
 *
 * What lives here is what bringing a CPU up needs (kernel/smp.c). Later steps of SMP move here
 * what is per CPU but still global today: the current task and RSP0 as the entry code reads it
 * (sched/, kernel/isr.S and sched/syscall_entry.S read cpu_tss[0], right while only the
 * bootstrap CPU runs user tasks), the current trace and the idle DS area (ds/), the BTS
 * model's state (stepping, decode cache, shadow registers), the PMI counters (ds/pmi.c) and
 * the test watchdog's timers (kernel/timer.c, kernel/nmiwd.c).
 */
#ifndef BTSX_KERNEL_PERCPU_H
#define BTSX_KERNEL_PERCPU_H

#define PERCPU_SIZE 256 /* each struct percpu, padded: kernel/isr.S tells GS bases by range */

#ifndef __ASSEMBLER__
#include <stdint.h>

#include "boot/layout.h"

struct tss;
struct trap_frame;

struct percpu {
    struct percpu *self;
    unsigned cpu;     /* 0: the bootstrap CPU; the others in MADT order */
    uint32_t apic_id; /* as the CPU's own LAPIC reports it */
    struct tss *tss;
    uint64_t stack_top;   /* the kernel stack it started on */
    volatile unsigned up; /* an AP's bring-up progress (kernel/smp.c) */
    /* Interrupts an application processor took (the bootstrap CPU's are not counted here),
     * and its last one-shot timer: when it was armed and when it fired (TSC). */
    volatile uint64_t timer_irqs, call_irqs, call_nmis;
    volatile uint64_t timer_armed_tsc, timer_fired_tsc;
    /* smp_call(): the function the next call IPI or NMI runs, and the answer. */
    void (*volatile call_fn)(void *arg);
    void *volatile call_arg;
    volatile uint64_t call_seq, call_done;
} __attribute__((aligned(PERCPU_SIZE)));

_Static_assert(sizeof(struct percpu) == PERCPU_SIZE, "kernel/isr.S steps through them by size");

/* Every CPU's, indexed by CPU number (kernel/smp.c). */
extern struct percpu percpu_all[SMP_MAX_CPUS];

static inline struct percpu *this_cpu(void)
{
    struct percpu *p;
    __asm__ volatile("mov %%gs:0, %0" : "=r"(p));
    return p;
}

/* Points this CPU's GS at p (and zeroes the user GS base it will swap in). Call with the final
 * GDT loaded: loading a GS selector afterwards would clear the base again. */
void percpu_install(struct percpu *p);
#endif /* __ASSEMBLER__ */

#endif
