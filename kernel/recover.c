#include "kernel/recover.h"

#include "boot/layout.h"
#include "kernel/console.h"
#include "kernel/cpu.h"

enum { KJMP_RSP = 6 };
/* Room left below the saved stack pointer for the trampoline's own frame. */
#define TRAMPOLINE_GAP 256

static struct recovery *top;

bool recover_active(void)
{
    return top != NULL;
}
struct recovery *recover_current(void)
{
    return top;
}

static bool recover_fault(struct trap_frame *f)
{
    return recover_from_trap(f, RECOVER_FAULT);
}

enum recover_reason recover_run(struct recovery *r, void (*fn)(void *), void *arg)
{
    /* Faults no one else takes end the innermost recovery point from now on; with none
     * active recover_from_trap() declines, as it did before any existed. */
    trap_recover_hook = recover_fault;
    r->reason = RECOVER_NONE;
    r->why = NULL;
    r->trap_depth = this_cpu()->trap_depth;
    r->prev = top;
    top = r;
    if (kjmp_set(r->jb) == 0)
        fn(arg);
    /* Both ways end here; on the recovery path the registers came back from kjmp_long(). */
    top = r->prev;
    return r->reason;
}

/* Runs on the stack below the recovery point, after the IRETQ out of the trap. */
static void __attribute__((noreturn, used)) recover_trampoline(void)
{
    /* A trap taken in user mode comes back here at CPL 0, but its way out of the interrupt
     * swapped the user's GS back in (kernel/isr.S): the kernel's again, before any per-CPU
     * access. */
    if (!percpu_gs_loaded())
        __asm__ volatile("swapgs" ::: "memory");
    this_cpu()->trap_depth = top->trap_depth;
    kjmp_long(top->jb, 1);
}

void recover_propagate(enum recover_reason why)
{
    top->reason = why;
    this_cpu()->trap_depth = top->trap_depth;
    kjmp_long(top->jb, 1);
}

void recover_abort_here(const char *why)
{
    top->why = why;
    recover_propagate(RECOVER_ABORT);
}

struct fault_info fault_info_from(const struct trap_frame *f)
{
    return (struct fault_info){
        .vector = (unsigned)f->vector,
        .error_code = f->error_code,
        .rip = f->rip,
        .cr2 = f->vector == VEC_PF ? read_cr2() : 0,
        .rsp = f->rsp,
        .user = trap_from_user(f),
    };
}

bool recover_from_trap(struct trap_frame *f, enum recover_reason why)
{
    struct recovery *r = top;
    if (!r)
        return false;
    r->reason = why;
    r->fault = fault_info_from(f);
    if (why == RECOVER_FAULT && r->report)
        trap_report(f, kprintf_diag);
    /* Return from the trap into the trampoline, at CPL 0, interrupts and single-step off. */
    f->rip = (uint64_t)recover_trampoline;
    f->cs = GDT_KERNEL_CS;
    f->ss = GDT_KERNEL_DS;
    f->rsp = ((r->jb[KJMP_RSP] - TRAMPOLINE_GAP) & ~15ULL) - 8;
    f->rflags = RFLAGS_FIXED;
    return true;
}
