/*
 * Exception reports: vector names, registers, the symbolised RIP and a backtrace. Its own
 * file so that kernel/panic.c and kernel/recover.c can print them without calling back into
 * kernel/trap.c, which calls both.
 */
#include "kernel/cpu.h"
#include "kernel/symbols.h"
#include "kernel/trap.h"

static const char *const exception_names[VEC_NUM_EXCEPTIONS] = {
    "#DE divide error",
    "#DB debug",
    "NMI",
    "#BP breakpoint",
    "#OF overflow",
    "#BR bound range",
    "#UD invalid opcode",
    "#NM device not available",
    "#DF double fault",
    "coprocessor segment overrun",
    "#TS invalid TSS",
    "#NP segment not present",
    "#SS stack fault",
    "#GP general protection",
    "#PF page fault",
    "reserved 15",
    "#MF x87 error",
    "#AC alignment check",
    "#MC machine check",
    "#XM SIMD error",
    "#VE virtualization",
    "#CP control protection",
    "reserved 22",
    "reserved 23",
    "reserved 24",
    "reserved 25",
    "reserved 26",
    "reserved 27",
    "#HV hypervisor injection",
    "#VC VMM communication",
    "#SX security",
    "reserved 31",
};

const char *trap_vector_name(unsigned vector)
{
    if (vector < VEC_NUM_EXCEPTIONS)
        return exception_names[vector];
    return vector < NUM_VECTORS ? "interrupt" : "bad vector";
}

void trap_report(const struct trap_frame *f, void (*out)(const char *fmt, ...))
{
    char sym[SYMBOL_TEXT_MAX];
    symbol_format(f->rip, sym, sizeof(sym));
    out("exception %lu (%s), error code %#lx, at %s\n", f->vector,
        trap_vector_name((unsigned)f->vector), f->error_code, sym);
    out("RIP %016lx CS %04lx RFLAGS %016lx CPL %lu\n", f->rip, f->cs, f->rflags, f->cs & 3);
    out("RSP %016lx SS %04lx CR2 %016lx CR3 %016lx\n", f->rsp, f->ss, read_cr2(), read_cr3());
    out("RAX %016lx RBX %016lx RCX %016lx RDX %016lx\n", f->rax, f->rbx, f->rcx, f->rdx);
    out("RSI %016lx RDI %016lx RBP %016lx R8  %016lx\n", f->rsi, f->rdi, f->rbp, f->r8);
    out("R9  %016lx R10 %016lx R11 %016lx R12 %016lx\n", f->r9, f->r10, f->r11, f->r12);
    out("R13 %016lx R14 %016lx R15 %016lx\n", f->r13, f->r14, f->r15);
    if (!trap_from_user(f))
        backtrace_from(f->rbp, out);
}
