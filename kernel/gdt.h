/* The GDT (built in boot/entry.S) and the TSS: IST stacks and the ring-0 stack for user tasks. */
#ifndef BTSX_KERNEL_GDT_H
#define BTSX_KERNEL_GDT_H

/* Where the TSS keeps RSP0: the #DB entry (kernel/isr.S) moves a frame from user mode there,
 * and the SYSCALL entry (sched/syscall_entry.S) takes its stack from it. */
#define TSS_RSP0_OFFSET 4

#ifndef __ASSEMBLER__
#include <stdint.h>

void gdt_init(void);
/* The stack the CPU switches to when a user task traps into the kernel. */
void tss_set_rsp0(uint64_t rsp0);
#endif /* __ASSEMBLER__ */

#endif
