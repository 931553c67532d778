/* The GDTs (the bootstrap CPU's built in boot/entry.S, copies for the others) and each CPU's
 * TSS: IST stacks and the ring-0 stack for user tasks. */
#ifndef BTSX_KERNEL_GDT_H
#define BTSX_KERNEL_GDT_H

/* Where the TSS keeps RSP0: the #DB and NMI entries (kernel/isr.S) move a frame from user mode
 * there, and the SYSCALL entry (sched/syscall_entry.S) takes its stack from it. */
#define TSS_RSP0_OFFSET 4

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stdint.h>

struct tss {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3, iomap_base;
} __attribute__((packed));

/* Each CPU's TSS, by CPU number (kernel/percpu.h). */
extern struct tss cpu_tss[];

/* The bootstrap CPU: its TSS into the boot GDT, loaded. */
void gdt_init(void);
/* On an application processor: its own copy of the GDT, with its own TSS (IST stacks, RSP0 =
 * rsp0), loaded; the segment registers reloaded, FS and GS null. Returns the TSS. */
struct tss *gdt_init_ap(unsigned cpu, uint64_t rsp0);
/* The stack the running CPU switches to when a user task traps into the kernel. */
void tss_set_rsp0(uint64_t rsp0);
/* Whether an address lies on one of the IST stacks (NMI, #DF, #MC, #DB) of any CPU, which every
 * task shares: a handler whose frame is there must not wait (kernel/trap.c, trap_can_block). */
bool ist_stack_contains(uint64_t addr);
#endif /* __ASSEMBLER__ */

#endif
