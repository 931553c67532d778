/* Interrupt and exception entry: the saved frame, handler registration, and reports. */
#ifndef BTSX_KERNEL_TRAP_H
#define BTSX_KERNEL_TRAP_H

/* Vectors btsx assigns (usable from assembly). */
#define VEC_TEST_SOFTINT 0x80 /* `int $0x80` in trace tests */
#define VEC_TEST_IPI     0xE0 /* self-IPI test vector */
#define VEC_SMP_CALL     0xE4 /* smp_call() to an application processor (kernel/smp.c) */
#define VEC_PMI          0xE8 /* LVT performance counter (BTS threshold) */
#define VEC_TIMER        0xF0 /* LAPIC timer */
/* The test watchdog's request to an AP to end the test task it runs (sched/supervise.c). In the
 * top priority class, like the wake-up below: a tracee suspended in its threshold interrupt
 * keeps that class in service while the CPU runs its tracer, which may be what hangs. */
#define VEC_WATCHDOG     0xF4
/* Wakes a CPU's idle loop (smp_run(), a task queued from another CPU). Above the threshold
 * interrupt's priority class: a task suspended inside its PMI (the stream policy) keeps that
 * vector in service until it resumes, and its CPU must still be woken meanwhile. */
#define VEC_SMP_WAKE     0xF8
#define VEC_SPURIOUS     0xFF
#define NUM_VECTORS      256

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stdint.h>

#include "kernel/percpu.h"

/* Exception vectors (SDM Vol. 3A, 6.3.1). */
enum {
    VEC_DE = 0,
    VEC_DB = 1,
    VEC_NMI = 2,
    VEC_BP = 3,
    VEC_OF = 4,
    VEC_BR = 5,
    VEC_UD = 6,
    VEC_NM = 7,
    VEC_DF = 8,
    VEC_TS = 10,
    VEC_NP = 11,
    VEC_SS = 12,
    VEC_GP = 13,
    VEC_PF = 14,
    VEC_MF = 16,
    VEC_AC = 17,
    VEC_MC = 18,
    VEC_XM = 19,
    VEC_VE = 20,
    VEC_CP = 21,
    VEC_NUM_EXCEPTIONS = 32,
};

/* Laid out by kernel/isr.S: pushed registers, then vector and error code, then the CPU's frame. */
struct trap_frame {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error_code;
    uint64_t rip, cs, rflags, rsp, ss;
};

typedef void (*trap_handler_t)(struct trap_frame *f);

void idt_init(void);
/* Loads the IDT idt_init() built on the calling CPU (an application processor). */
void idt_load(void);
/* Installs a handler for a vector; returns the previous one. An exception vector's first
 * handler is the default handling (fixups, fault hooks, panic): chain to it to keep that. */
trap_handler_t trap_set_handler(unsigned vector, trap_handler_t h);
/* An application processor's handler for a vector. APs have a table of their own: they take
 * only what is sent to them (kernel/smp.h) and what the DS layer installs on every CPU (the
 * BTS model's #DB, the threshold interrupt), never the bootstrap CPU's test handlers. An
 * exception with no AP handler gets its fixup, else trap_fault_hook (a task's fault ends the
 * task, as on the bootstrap CPU), else a panic; the test-recovery hook stays the bootstrap
 * CPU's. The entry and exit hooks and trap_depth are every CPU's. Returns the previous one. */
trap_handler_t trap_set_ap_handler(unsigned vector, trap_handler_t h);
/* Entry address of a vector's entry code (what an IDT gate points at, a BTS record's `to`). */
uint64_t trap_stub_address(unsigned vector);
/* The IRETQ every vector's entry code returns through (a BTS record's `from` then). */
extern const char isr_iretq[];

/* kernel/trapreport.c */
const char *trap_vector_name(unsigned vector);
/* Whether the handler of this frame may block or switch tasks and come back: false when the
 * frame is on an IST stack, which the next NMI or #DB of any task reuses. kernel/isr.S moves
 * #DB and NMI frames to the interrupted task's stack except in the SYSCALL window (CPL 0 on a
 * user-half RSP) and when the interrupted code was itself on an IST stack. */
bool trap_can_block(const struct trap_frame *f);
/* Prints an exception report: vector name, error code, symbolised RIP, CR2, registers. */
void trap_report(const struct trap_frame *f, void (*out)(const char *fmt, ...));

/* The nesting depth of trap handling on the running CPU (0 = ordinary code) is
 * this_cpu()->trap_depth (kernel/percpu.h). */

/* Called with the outermost frame just before it returns (used by the BTS model). */
typedef void (*trap_exit_hook_t)(struct trap_frame *f);
extern trap_exit_hook_t trap_exit_hook;
/* Called at every entry before the handler (used by the BTS model to record interrupts). */
typedef void (*trap_entry_hook_t)(struct trap_frame *f);
extern trap_entry_hook_t trap_entry_hook;

/* SYSCALL/SYSRET boundaries (the BTS model records them like the CPU would): entry gets the
 * SYSCALL instruction, the entry point and the user's RFLAGS; exit gets the SYSRETQ, the user
 * RIP it returns to and the user RFLAGS it will load (which the hook may change). */
typedef void (*syscall_entry_hook_t)(uint64_t from, uint64_t to, uint64_t user_rflags);
typedef void (*syscall_exit_hook_t)(uint64_t from, uint64_t to, uint64_t *user_rflags);
extern syscall_entry_hook_t syscall_entry_hook;
extern syscall_exit_hook_t syscall_exit_hook;
/* Consulted in this order before an exception that no handler or fixup took panics; each
 * returns true if it took the fault (and then does not return to the faulting code).
 * trap_fault_hook contains the fault where it happened (the scheduler ends a faulting task);
 * trap_recover_hook abandons the innermost recovery point (kernel/recover.c installs it).
 * Registered from above, so that this layer calls neither. */
typedef bool (*trap_fault_hook_t)(struct trap_frame *f);
extern trap_fault_hook_t trap_fault_hook, trap_recover_hook;
/* Asked first about every NMI: returns true if the NMI was its own (the NMI watchdog's, which
 * shares the vector with the PMI and the tests' self-NMIs) and it handled it. */
typedef bool (*trap_nmi_hook_t)(struct trap_frame *f);
extern trap_nmi_hook_t trap_nmi_hook;

/* #DBs taken at CPL 0 on a stack that is not the kernel's, handled on the #DB IST stack
 * (kernel/trap.c, trap_db_hazard). */
struct db_hazard_stats {
    uint64_t syscall_tf;    /* single steps at the SYSCALL entry point: the emulator quirk */
    uint64_t foreign_steps; /* other single steps there (TF leaked into kernel code) */
    uint64_t foreign_rip;   /* where the last of those was reported */
};
void trap_db_hazard_stats(struct db_hazard_stats *s);
/* At boot, before syscall_init() owns the SYSCALL MSRs: does this CPU raise a single-step #DB
 * after a SYSCALL that IA32_FMASK stripped of TF (Bochs does; hardware does not)? */
void trap_probe_syscall_tf(void);
bool trap_syscall_tf_quirk(void);

static inline bool trap_from_user(const struct trap_frame *f)
{
    return (f->cs & 3) != 0;
}
#endif /* __ASSEMBLER__ */

#endif
