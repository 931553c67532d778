/*
 * The exception-fixup table: an instruction that may fault names a place to resume at.
 * The trap handler looks the faulting RIP up here before it treats a fault as fatal, which is
 * how rdmsr_safe()/wrmsr_safe() probe MSRs by doing (style of XTF's *_safe helpers).
 */
#ifndef BTSX_KERNEL_EXTABLE_H
#define BTSX_KERNEL_EXTABLE_H

#include <stdint.h>

struct extable_entry {
    uint64_t insn;  /* address of the instruction that may fault */
    uint64_t fixup; /* where to resume */
};

/* Inline-asm fragment: "if the instruction at label `from` faults, continue at `to`". */
#define EXTABLE_ENTRY(from, to)                                                                    \
    ".pushsection __ex_table, \"a\"\n\t.balign 8\n\t.quad " #from ", " #to "\n\t.popsection\n\t"

/* Returns the fixup address for a faulting RIP, or 0. */
uint64_t extable_lookup(uint64_t rip);

#endif
