#include "kernel/gdt.h"

#include <stddef.h>

#include "boot/layout.h"

#define TSS_TYPE_AVAILABLE 0x89 /* present, 64-bit TSS (available) */
#define IST_COUNT          4    /* NMI, #DF, #MC, #DB: see kernel/trap.c */

struct tss {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3, iomap_base;
} __attribute__((packed));

_Static_assert(offsetof(struct tss, rsp) == TSS_RSP0_OFFSET, "kernel/isr.S reads RSP0 there");
_Static_assert(offsetof(struct tss, ist) == TSS_IST_NMI_OFFSET, "kernel/isr.S reads IST1 there");

extern uint64_t gdt[GDT_ENTRIES];
/* Not static: the #DB and NMI entries read RSP0 and IST1 (kernel/isr.S). */
struct tss kernel_tss __attribute__((aligned(16)));
static uint8_t ist_stacks[IST_COUNT][IST_STACK_SIZE] __attribute__((aligned(16)));
/* Where traps from user mode land until the scheduler gives each user task its own. */
static uint8_t rsp0_stack[BOOT_STACK_SIZE] __attribute__((aligned(16)));

void gdt_init(void)
{
    for (unsigned i = 0; i < IST_COUNT; i++)
        kernel_tss.ist[i] = (uint64_t)&ist_stacks[i][IST_STACK_SIZE];
    kernel_tss.rsp[0] = (uint64_t)&rsp0_stack[sizeof(rsp0_stack)];
    kernel_tss.iomap_base = sizeof(kernel_tss); /* no I/O bitmap: user mode gets no port access */

    uint64_t base = (uint64_t)&kernel_tss, limit = sizeof(kernel_tss) - 1;
    unsigned slot = GDT_TSS / 8;
    gdt[slot] = (limit & 0xFFFF) | ((base & 0xFFFFFF) << 16) |
                ((uint64_t)TSS_TYPE_AVAILABLE << 40) | (((limit >> 16) & 0xF) << 48) |
                (((base >> 24) & 0xFF) << 56);
    gdt[slot + 1] = base >> 32;
    __asm__ volatile("ltr %w0" : : "r"(GDT_TSS));
}

bool ist_stack_contains(uint64_t addr)
{
    return addr >= (uint64_t)ist_stacks && addr < (uint64_t)ist_stacks + sizeof(ist_stacks);
}

void tss_set_rsp0(uint64_t rsp0)
{
    kernel_tss.rsp[0] = rsp0;
}
