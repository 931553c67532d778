/*
 * Per-CPU state: one struct percpu for each CPU, reached through GS. While the kernel runs,
 * IA32_GS_BASE holds the address of the CPU's struct percpu, whose first word points at
 * itself, so this_cpu() is one load. User tasks keep a GS base of their own: every way into
 * the kernel from CPL 3 swaps the two with SWAPGS and every way out swaps back
 * (sched/syscall_entry.S, kernel/user.S, kernel/isr.S; the interrupt entry swaps whenever
 * IA32_GS_BASE is not a per-CPU address, which also covers an NMI or #DB taken in the few
 * instructions where the kernel runs with the user's GS).
 *
 * What lives here: what bringing a CPU up needs (kernel/smp.c), what the entry code reads
 * (the TSS, for RSP0 in kernel/isr.S and sched/syscall_entry.S; the user RSP across the
 * SYSCALL entry's stack switch), the scheduler's current task, run queue and idle task and the
 * trap nesting (sched/, kernel/trap.c), the DS layer's per-CPU state: the loaded trace, the
 * idle DS area, the spurious threshold interrupts (ds/trace.c, ds/pmi.c) and the BTS model's
 * registers and stepping state (ds/model.c), and the test watchdog's state on this CPU
 * (sched/supervise.c: whether the bootstrap CPU asked it to end the test task it runs, and whether
 * by an NMI). The watchdog's clock stays the bootstrap CPU's: its software timers (kernel/timer.c)
 * run on its LAPIC timer and the NMI watchdog (kernel/nmiwd.c) reaches it alone, so nothing
 * interrupts an AP before a test's deadline.
 */
#ifndef BTSX_KERNEL_PERCPU_H
#define BTSX_KERNEL_PERCPU_H

#define PERCPU_SIZE            256 /* each struct percpu, padded: kernel/isr.S tells GS bases by range */
/* Offsets the entry code reads through GS (checked below). */
#define PERCPU_TSS_OFFSET      16
#define PERCPU_USER_RSP_OFFSET 32
#define PERCPU_MODEL_OFFSET    40

#ifndef __ASSEMBLER__
#include <stdint.h>

#include "boot/layout.h"
#include "kernel/spinlock.h"

struct tss;
struct trap_frame;
struct task;
struct bts_trace;
struct ds_area;
struct model_cpu;

struct percpu {
    struct percpu *self;
    unsigned cpu;     /* 0: the bootstrap CPU; the others in MADT order */
    uint32_t apic_id; /* as the CPU's own LAPIC reports it */
    struct tss *tss;
    uint64_t stack_top;      /* the kernel stack it started on */
    uint64_t user_rsp;       /* sched/syscall_entry.S: the user's RSP while it switches stacks */
    struct model_cpu *model; /* the BTS model's state on this CPU (ds/model.c) */
    struct task *current;    /* the task running here (sched/) */
    struct task *prev;       /* the task it switched from, for the incoming one (sched/) */
    /* The scheduler's run queue of this CPU's tasks, its lock (other CPUs wake tasks into it),
     * the task it runs when the queue is empty, and how many scheduler locks it holds now (a
     * threshold interrupt must not wait for its tracer then: kernel/trap.c). */
    struct task *rq_head, *rq_tail, *idle;
    struct spinlock rq_lock;
    volatile unsigned sched_locks;
    volatile unsigned trap_depth; /* trap handlers nested here (kernel/trap.c) */
    /* The DS layer (ds/trace.c): the trace whose DS area this CPU's IA32_DS_AREA holds (NULL:
     * the idle area), this CPU's idle DS area, and threshold interrupts that found nothing. */
    struct bts_trace *ds_loaded;
    struct ds_area *ds_idle;
    volatile uint64_t pmi_spurious;
    volatile unsigned up; /* an AP's bring-up progress (kernel/smp.c) */
    /* Interrupts an application processor took (the bootstrap CPU's are not counted here),
     * and its last one-shot timer: when it was armed and when it fired (TSC). */
    volatile uint64_t timer_irqs, call_irqs, call_nmis;
    volatile uint64_t timer_armed_tsc, timer_fired_tsc;
    /* smp_call(): the function the next call IPI or NMI runs, and the answer. */
    void (*volatile call_fn)(void *arg);
    void *volatile call_arg;
    volatile uint64_t call_seq, call_done;
    /* smp_run(): the function an AP's idle loop runs next, outside any interrupt handler. */
    void (*volatile run_fn)(void *arg);
    void *volatile run_arg;
    volatile uint64_t run_seq, run_done;
    /* The test watchdog (sched/supervise.c): set by the bootstrap CPU when a test's deadline
     * found a task of the test running here, cleared here when this CPU answers; wd_nmi also
     * when the request went as an NMI (nothing else makes an NMI the watchdog's); the tasks the
     * watchdog ended here, and how many of them by the NMI. */
    volatile bool wd_asked, wd_nmi;
    volatile uint32_t wd_stopped, wd_stopped_nmi;
} __attribute__((aligned(PERCPU_SIZE)));

_Static_assert(sizeof(struct percpu) == PERCPU_SIZE, "kernel/isr.S steps through them by size");
_Static_assert(__builtin_offsetof(struct percpu, tss) == PERCPU_TSS_OFFSET, "entry code");
_Static_assert(__builtin_offsetof(struct percpu, user_rsp) == PERCPU_USER_RSP_OFFSET, "entry code");
_Static_assert(__builtin_offsetof(struct percpu, model) == PERCPU_MODEL_OFFSET, "ds/model.S");

/* Every CPU's, indexed by CPU number (kernel/smp.c). */
extern struct percpu percpu_all[SMP_MAX_CPUS];

static inline struct percpu *this_cpu(void)
{
    struct percpu *p;
    __asm__ volatile("mov %%gs:0, %0" : "=r"(p));
    return p;
}

/* Whether IA32_GS_BASE is one of the per-CPU structures, i.e. the kernel's GS is loaded rather
 * than a user task's (the test kernel/isr.S makes at every interrupt entry). */
static inline bool percpu_gs_loaded(void)
{
    uint64_t gs = rdmsr(MSR_GS_BASE) - (uint64_t)percpu_all;
    return gs < sizeof(percpu_all);
}

/* Points this CPU's GS at p (and zeroes the user GS base it will swap in). Call with the final
 * GDT loaded: loading a GS selector afterwards would clear the base again. */
void percpu_install(struct percpu *p);
#endif /* __ASSEMBLER__ */

#endif
