#include "kernel/gdt.h"

#include <stddef.h>

#include "boot/layout.h"
#include "kernel/percpu.h"

#define TSS_TYPE_AVAILABLE 0x89 /* present, 64-bit TSS (available) */
#define IST_COUNT          4    /* NMI, #DF, #MC, #DB: see kernel/trap.c */

_Static_assert(offsetof(struct tss, rsp) == TSS_RSP0_OFFSET, "kernel/isr.S reads RSP0 there");

/* The bootstrap CPU's GDT, built in boot/entry.S: the template of the others. */
extern uint64_t gdt[GDT_ENTRIES];
/* Each CPU's own TSS, and a GDT for each application processor (a TSS descriptor names one
 * TSS and is marked busy by LTR, so no two CPUs can share a GDT). The entry code finds the
 * running CPU's through its IST stacks or GS (kernel/isr.S, sched/syscall_entry.S). */
struct tss cpu_tss[SMP_MAX_CPUS] __attribute__((aligned(16)));
static uint64_t ap_gdt[SMP_MAX_CPUS][GDT_ENTRIES] __attribute__((aligned(16)));
/* Every CPU's IST stacks in one array, so that one range check tells a shared stack. */
static uint8_t ist_stacks[SMP_MAX_CPUS][IST_COUNT][IST_STACK_SIZE] __attribute__((aligned(16)));
/* Where traps from user mode land until the scheduler gives each user task its own. */
static uint8_t rsp0_stack[BOOT_STACK_SIZE] __attribute__((aligned(16)));

/* Each IST stack starts IST_TOP_RESERVED bytes below its end: the word there holds the
 * CPU's TSS, which kernel/isr.S reads right above the frame the CPU pushed (an IST gate
 * always starts at the top), when the user's GS is still loaded and no other per-CPU pointer
 * can be had. The rest keeps the stack 16-byte aligned. */
#define IST_TOP_RESERVED 16

static void tss_fill(unsigned cpu, uint64_t rsp0)
{
    struct tss *t = &cpu_tss[cpu];
    for (unsigned i = 0; i < IST_COUNT; i++) {
        uint64_t top = (uint64_t)&ist_stacks[cpu][i][IST_STACK_SIZE - IST_TOP_RESERVED];
        *(struct tss **)top = t;
        t->ist[i] = top;
    }
    t->rsp[0] = rsp0;
    t->iomap_base = sizeof(*t); /* no I/O bitmap: user mode gets no port access */
}

static void tss_descriptor(uint64_t *table, const struct tss *t)
{
    uint64_t base = (uint64_t)t, limit = sizeof(*t) - 1;
    unsigned slot = GDT_TSS / 8;
    table[slot] = (limit & 0xFFFF) | ((base & 0xFFFFFF) << 16) |
                  ((uint64_t)TSS_TYPE_AVAILABLE << 40) | (((limit >> 16) & 0xF) << 48) |
                  (((base >> 24) & 0xFF) << 56);
    table[slot + 1] = base >> 32;
}

void gdt_init(void)
{
    tss_fill(0, (uint64_t)&rsp0_stack[sizeof(rsp0_stack)]);
    tss_descriptor(gdt, &cpu_tss[0]);
    __asm__ volatile("ltr %w0" : : "r"(GDT_TSS));
}

struct tss *gdt_init_ap(unsigned cpu, uint64_t rsp0)
{
    uint64_t *table = ap_gdt[cpu];
    for (unsigned i = 0; i < GDT_ENTRIES; i++)
        table[i] = gdt[i];
    tss_fill(cpu, rsp0);
    tss_descriptor(table, &cpu_tss[cpu]);
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) d = {sizeof(ap_gdt[cpu]) - 1, (uint64_t)table};
    /* The trampoline's selectors have the same numbers, but CS must be reloaded from this
     * table all the same (a far return), and FS and GS made null before GS gets its base. */
    __asm__ volatile("lgdt %0\n\t"
                     "pushq %1\n\t"
                     "lea 1f(%%rip), %%rax\n\t"
                     "pushq %%rax\n\t"
                     "lretq\n"
                     "1:\n\t"
                     "mov %2, %%ds\n\t"
                     "mov %2, %%es\n\t"
                     "mov %2, %%ss\n\t"
                     "mov %3, %%fs\n\t"
                     "mov %3, %%gs\n\t"
                     "ltr %w4"
                     :
                     : "m"(d), "i"(GDT_KERNEL_CS), "r"(GDT_KERNEL_DS), "r"(0), "r"(GDT_TSS)
                     : "rax", "memory");
    return &cpu_tss[cpu];
}

bool ist_stack_contains(uint64_t addr)
{
    return addr >= (uint64_t)ist_stacks && addr < (uint64_t)ist_stacks + sizeof(ist_stacks);
}

void tss_set_rsp0(uint64_t rsp0)
{
    this_cpu()->tss->rsp[0] = rsp0;
}
