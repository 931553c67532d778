/* The IDT, trap dispatch and default exception handling (the reports: kernel/trapreport.c). */
#include "kernel/trap.h"

#include "boot/layout.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/extable.h"
#include "kernel/gdt.h"
#include "kernel/panic.h"
#include "kernel/percpu.h"

#define STUB_SIZE      16
#define GATE_INTERRUPT 0x8E /* present, DPL 0, 64-bit interrupt gate */
#define GATE_DPL3      0x60 /* reachable by INT n from CPL 3 */

/* TSS IST slots (kernel/gdt.c): the stacks that survive a broken RSP. */
#define IST_NMI 1
#define IST_DF  2
#define IST_MC  3
#define IST_DB  4 /* NMI and #DB: only until kernel/isr.S has picked the stack (IST_MOVE) */

struct idt_gate {
    uint16_t off_lo, sel;
    uint8_t ist, type;
    uint16_t off_mid;
    uint32_t off_hi, reserved;
} __attribute__((packed));

static struct idt_gate idt[NUM_VECTORS] __attribute__((aligned(16)));
static trap_handler_t handlers[NUM_VECTORS], ap_handlers[NUM_VECTORS];
trap_exit_hook_t trap_exit_hook;
trap_entry_hook_t trap_entry_hook;
syscall_entry_hook_t syscall_entry_hook;
syscall_exit_hook_t syscall_exit_hook;
trap_fault_hook_t trap_fault_hook, trap_recover_hook;
trap_nmi_hook_t trap_nmi_hook;

extern const char isr_stubs[];

uint64_t trap_stub_address(unsigned vector)
{
    return (uint64_t)isr_stubs + vector * STUB_SIZE;
}

static void set_gate(unsigned v, uint8_t ist, uint8_t type)
{
    uint64_t a = trap_stub_address(v);
    idt[v] = (struct idt_gate){
        .off_lo = (uint16_t)a,
        .sel = GDT_KERNEL_CS,
        .ist = ist,
        .type = type,
        .off_mid = (uint16_t)(a >> 16),
        .off_hi = (uint32_t)(a >> 32),
    };
}

static void default_exception(struct trap_frame *f);

void idt_init(void)
{
    /* Every exception starts with the default handling, which trap_set_handler() returns as
     * the previous handler: a handler installed over it can observe and pass on. */
    for (unsigned v = 0; v < VEC_NUM_EXCEPTIONS; v++)
        if (!handlers[v])
            handlers[v] = default_exception;
    for (unsigned v = 0; v < NUM_VECTORS; v++)
        set_gate(v, 0, GATE_INTERRUPT);
    set_gate(VEC_NMI, IST_NMI, GATE_INTERRUPT);
    set_gate(VEC_DF, IST_DF, GATE_INTERRUPT);
    set_gate(VEC_MC, IST_MC, GATE_INTERRUPT);
    set_gate(VEC_DB, IST_DB, GATE_INTERRUPT);
    /* Trace tests execute int3 and int $0x80 from user mode too. */
    set_gate(VEC_BP, 0, GATE_INTERRUPT | GATE_DPL3);
    set_gate(VEC_TEST_SOFTINT, 0, GATE_INTERRUPT | GATE_DPL3);
    idt_load();
}

void idt_load(void)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) d = {
        sizeof(idt) - 1,
        (uint64_t)idt,
    };
    __asm__ volatile("lidt %0" : : "m"(d));
}

trap_handler_t trap_set_ap_handler(unsigned vector, trap_handler_t h)
{
    trap_handler_t old = ap_handlers[vector];
    ap_handlers[vector] = h;
    return old;
}

trap_handler_t trap_set_handler(unsigned vector, trap_handler_t h)
{
    trap_handler_t old = handlers[vector];
    handlers[vector] = h;
    return old;
}

bool trap_can_block(const struct trap_frame *f)
{
    /* Nor while this CPU holds a scheduler lock: an NMI comes in anyway (kernel/percpu.h). */
    return !ist_stack_contains((uint64_t)f) && this_cpu()->sched_locks == 0;
}

/* An exception's fixup entry, else the containment of a faulting task (trap_fault_hook):
 * whether one of them took it. Every CPU's. */
static bool fixup_or_contain(struct trap_frame *f)
{
    uint64_t fixup = extable_lookup(f->rip);
    if (fixup && !trap_from_user(f)) {
        f->rip = fixup;
        return true;
    }
    return trap_fault_hook && trap_fault_hook(f);
}

static void default_exception(struct trap_frame *f)
{
    if (fixup_or_contain(f))
        return;
    if (trap_recover_hook && trap_recover_hook(f))
        return;
    panic_frame(f, "unexpected exception");
}

static struct db_hazard_stats db_hazards;
static bool syscall_tf_quirk; /* trap_probe_syscall_tf() saw it at boot */

void trap_db_hazard_stats(struct db_hazard_stats *s)
{
    *s = db_hazards;
}

/*
 * A #DB at CPL 0 on a stack that is not the kernel's (kernel/isr.S, db_entry): the SYSCALL
 * window, before syscall_entry has switched stacks. This runs on the #DB IST stack with
 * interrupts off and must never schedule or enter the ordinary handlers (the BTS model's
 * handler may raise a PMI, and the stream policy suspends the task in it): it decides and
 * returns, and the IST stack is free again.
 *
 * The one case seen in practice: a single step reported at the SYSCALL entry point. SYSCALL
 * clears TF through IA32_FMASK, and the CPU decides whether to single-step from the flags
 * after the instruction, so hardware raises no #DB there; Bochs 2.7 decides from the flags
 * before the mask. That trap belongs to no instruction of the kernel: it is counted, named
 * once (by the header when trap_probe_syscall_tf() saw it at boot, here otherwise), and
 * ignored (the BTS model never sees it, so it records nothing for it).
 * Any other single step here means TF leaked into kernel code running on a foreign stack;
 * like Linux, clear TF, say so once, and go on. Anything else (a breakpoint: btsx sets none)
 * cannot be explained and stops the machine.
 */
void trap_db_hazard(struct trap_frame *f);
void trap_db_hazard(struct trap_frame *f)
{
    uint64_t dr6 = read_dr6();
    if (!(dr6 & DR6_BS))
        panic_frame(f, "#DB on a non-kernel stack that is not a single step");
    write_dr6(DR6_RESET);
    f->rflags &= ~RFLAGS_TF;
    if (f->rip == rdmsr(MSR_LSTAR)) {
        if (db_hazards.syscall_tf++ == 0 && !syscall_tf_quirk) /* else the header named it */
            kprintf_diag("quirk: emulator raised #DB after SYSCALL despite FMASK.TF (at %#lx, "
                         "RSP %#lx): ignored",
                         f->rip, f->rsp);
        return;
    }
    db_hazards.foreign_rip = f->rip;
    if (db_hazards.foreign_steps++ == 0)
        kprintf_diag("single step at CPL 0 on a non-kernel stack (RIP %#lx, RSP %#lx): TF "
                     "cleared",
                     f->rip, f->rsp);
}

extern const char syscall_tf_probe_entry[];
void syscall_tf_probe(void);
static volatile unsigned probe_steps;

static void probe_db(struct trap_frame *f)
{
    write_dr6(DR6_RESET);
    if (f->rip == (uint64_t)syscall_tf_probe_entry)
        probe_steps++;
    f->rflags &= ~RFLAGS_TF;
}

void trap_probe_syscall_tf(void)
{
    bool irq = irq_save();
    trap_handler_t old = trap_set_handler(VEC_DB, probe_db);
    uint64_t efer = rdmsr(MSR_EFER), star = rdmsr(MSR_STAR), lstar = rdmsr(MSR_LSTAR),
             fmask = rdmsr(MSR_FMASK);
    wrmsr(MSR_STAR, (uint64_t)GDT_KERNEL_CS << 32); /* SYSCALL's CS: the kernel's */
    wrmsr(MSR_LSTAR, (uint64_t)syscall_tf_probe_entry);
    wrmsr(MSR_FMASK, RFLAGS_TF | RFLAGS_IF);
    wrmsr(MSR_EFER, efer | EFER_SCE);
    probe_steps = 0;
    syscall_tf_probe();
    syscall_tf_quirk = probe_steps != 0;
    wrmsr(MSR_EFER, efer);
    wrmsr(MSR_FMASK, fmask);
    wrmsr(MSR_LSTAR, lstar);
    wrmsr(MSR_STAR, star);
    trap_set_handler(VEC_DB, old);
    irq_restore(irq);
}

bool trap_syscall_tf_quirk(void)
{
    return syscall_tf_quirk;
}

/* An AP runs tasks but no tests: its exceptions get the fixup table (the MSR probes) and the
 * scheduler's containment of a faulting task (trap_fault_hook), never the test-recovery hook,
 * whose recovery points are the test runner's, on the bootstrap CPU. */
static void ap_dispatch(struct trap_frame *f)
{
    trap_handler_t h = ap_handlers[f->vector];
    if (h) {
        h(f);
        return;
    }
    if (f->vector < VEC_NUM_EXCEPTIONS && fixup_or_contain(f))
        return;
    panic_frame(f, "unexpected exception or interrupt on an application processor");
}

void trap_dispatch(struct trap_frame *f);
void trap_dispatch(struct trap_frame *f)
{
    struct percpu *c = this_cpu();
    c->trap_depth++;
    if (trap_entry_hook)
        trap_entry_hook(f);
    trap_handler_t h = handlers[f->vector];
    if (c->cpu != 0)
        ap_dispatch(f);
    else if (f->vector == VEC_NMI && trap_nmi_hook && trap_nmi_hook(f))
        ; /* the watchdog's NMI */
    else if (h)
        h(f);
    else
        panic_frame(f, "interrupt with no handler");
    if (c->trap_depth == 1 && trap_exit_hook)
        trap_exit_hook(f);
    c->trap_depth--;
}
