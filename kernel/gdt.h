/* The GDT (built in boot/entry.S) and the TSS: IST stacks and the ring-0 stack for user tasks. */
#ifndef BTSX_KERNEL_GDT_H
#define BTSX_KERNEL_GDT_H

/* Where the TSS keeps RSP0: the #DB and NMI entries (kernel/isr.S) move a frame from user mode
 * there, and the SYSCALL entry (sched/syscall_entry.S) takes its stack from it. */
#define TSS_RSP0_OFFSET    4
/* Where the TSS keeps IST1, the NMI's stack (kernel/trap.c): the NMI entry's hazard path. */
#define TSS_IST_NMI_OFFSET 36

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stdint.h>

void gdt_init(void);
/* The stack the CPU switches to when a user task traps into the kernel. */
void tss_set_rsp0(uint64_t rsp0);
/* Whether an address lies on one of the IST stacks (NMI, #DF, #MC, #DB), which every task
 * shares: a handler whose frame is there must not wait (kernel/trap.c, trap_can_block). */
bool ist_stack_contains(uint64_t addr);
#endif /* __ASSEMBLER__ */

#endif
