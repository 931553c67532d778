#include "kernel/gdt.h"

#include "boot/layout.h"

#define TSS_TYPE_AVAILABLE 0x89 /* present, 64-bit TSS (available) */
#define IST_COUNT          3    /* NMI, #DF, #MC: see kernel/trap.c */

struct tss {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3, iomap_base;
} __attribute__((packed));

extern uint64_t gdt[GDT_ENTRIES];
static struct tss tss __attribute__((aligned(16)));
static uint8_t ist_stacks[IST_COUNT][IST_STACK_SIZE] __attribute__((aligned(16)));
/* Where traps from user mode land until the scheduler gives each user task its own. */
static uint8_t rsp0_stack[BOOT_STACK_SIZE] __attribute__((aligned(16)));

void gdt_init(void)
{
    for (unsigned i = 0; i < IST_COUNT; i++)
        tss.ist[i] = (uint64_t)&ist_stacks[i][IST_STACK_SIZE];
    tss.rsp[0] = (uint64_t)&rsp0_stack[sizeof(rsp0_stack)];
    tss.iomap_base = sizeof(tss); /* no I/O bitmap: user mode gets no port access */

    uint64_t base = (uint64_t)&tss, limit = sizeof(tss) - 1;
    unsigned slot = GDT_TSS / 8;
    gdt[slot] = (limit & 0xFFFF) | ((base & 0xFFFFFF) << 16) |
                ((uint64_t)TSS_TYPE_AVAILABLE << 40) | (((limit >> 16) & 0xF) << 48) |
                (((base >> 24) & 0xFF) << 56);
    gdt[slot + 1] = base >> 32;
    __asm__ volatile("ltr %w0" : : "r"(GDT_TSS));
}

void tss_set_rsp0(uint64_t rsp0)
{
    tss.rsp[0] = rsp0;
}
