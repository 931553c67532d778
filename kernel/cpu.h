/* CPU access: CPUID, MSRs (plain and fault-safe), control registers, TSC, interrupts. */
#ifndef BTSX_KERNEL_CPU_H
#define BTSX_KERNEL_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/msr-index.h"

struct cpuid_regs {
    uint32_t eax, ebx, ecx, edx;
};

static inline struct cpuid_regs cpuid_count(uint32_t leaf, uint32_t sub)
{
    struct cpuid_regs r;
    __asm__ volatile("cpuid"
                     : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
                     : "a"(leaf), "c"(sub));
    return r;
}
static inline struct cpuid_regs cpuid(uint32_t leaf)
{
    return cpuid_count(leaf, 0);
}

static inline uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}
static inline void wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" : : "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)) : "memory");
}

/* Fault-safe MSR access: 0 on success, E_FAULT if the instruction raised #GP
 * (the exception-fixup table in kernel/extable.h resumes after it). */
int rdmsr_safe(uint32_t msr, uint64_t *val);
int wrmsr_safe(uint32_t msr, uint64_t val);

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
/* Ordered TSC read: lfence keeps earlier instructions from drifting past it. */
static inline uint64_t rdtsc_ordered(void)
{
    __asm__ volatile("lfence" ::: "memory");
    return rdtsc();
}

#define DEFINE_CR_ACCESS(n)                                                                        \
    static inline uint64_t read_cr##n(void)                                                        \
    {                                                                                              \
        uint64_t v;                                                                                \
        __asm__ volatile("mov %%cr" #n ", %0" : "=r"(v));                                          \
        return v;                                                                                  \
    }                                                                                              \
    static inline void write_cr##n(uint64_t v)                                                     \
    {                                                                                              \
        __asm__ volatile("mov %0, %%cr" #n : : "r"(v) : "memory");                                 \
    }
DEFINE_CR_ACCESS(0)
DEFINE_CR_ACCESS(2)
DEFINE_CR_ACCESS(3)
DEFINE_CR_ACCESS(4)
#undef DEFINE_CR_ACCESS

static inline uint64_t read_dr6(void)
{
    uint64_t v;
    __asm__ volatile("mov %%dr6, %0" : "=r"(v));
    return v;
}
static inline void write_dr6(uint64_t v)
{
    __asm__ volatile("mov %0, %%dr6" : : "r"(v));
}

static inline uint64_t read_rflags(void)
{
    uint64_t v;
    __asm__ volatile("pushfq; pop %0" : "=r"(v));
    return v;
}
static inline void irq_enable(void)
{
    __asm__ volatile("sti" ::: "memory");
}
static inline void irq_disable(void)
{
    __asm__ volatile("cli" ::: "memory");
}
static inline bool irq_enabled(void)
{
    return read_rflags() & RFLAGS_IF;
}
/* Disable interrupts and return whether they were enabled, for irq_restore(): the pair nests,
 * and a section entered with interrupts off leaves them off. */
static inline bool irq_save(void)
{
    bool was = irq_enabled();
    irq_disable();
    return was;
}
static inline void irq_restore(bool was_enabled)
{
    if (was_enabled)
        irq_enable();
}
static inline void cpu_relax(void)
{
    __asm__ volatile("pause" ::: "memory");
}
static inline void cpu_halt(void)
{
    __asm__ volatile("hlt" ::: "memory");
}
static inline void invlpg(uintptr_t va)
{
    __asm__ volatile("invlpg (%0)" : : "r"(va) : "memory");
}
/* SMAP: open and close the window in which the kernel may touch user pages. */
void user_access_begin(void);
void user_access_end(void);

/* What the CPU offers, read once at boot (cpu_init) and then asked through predicates. */
struct cpu_caps {
    uint32_t max_leaf, max_ext_leaf;
    uint32_t family, model, stepping;
    uint32_t leaf1_ecx, leaf1_edx, leaf7_ebx, ext_edx;
    char vendor[13];
    char brand[49];
    char hypervisor[13]; /* empty on bare metal */
};
extern struct cpu_caps cpu_caps;

void cpu_init(void);
/* The microcode revision (Intel) or patch level (AMD) in *rev: 0, E_FAULT if
 * IA32_BIOS_SIGN_ID faults, E_NOTSUP for other vendors (needs the exception-fixup table, so
 * not before the IDT is up). */
int cpu_microcode_rev(uint32_t *rev);
/* Turn on NX (EFER.NXE), SMEP, SMAP and CR0.WP where the CPU has them. */
void cpu_enable_protections(void);
static inline bool cpu_has_ds(void)
{
    return cpu_caps.leaf1_edx & CPUID_1_EDX_DS;
}
static inline bool cpu_has_dtes64(void)
{
    return cpu_caps.leaf1_ecx & CPUID_1_ECX_DTES64;
}
static inline bool cpu_has_ds_cpl(void)
{
    return cpu_caps.leaf1_ecx & CPUID_1_ECX_DS_CPL;
}
static inline bool cpu_has_x2apic(void)
{
    return cpu_caps.leaf1_ecx & CPUID_1_ECX_X2APIC;
}
static inline bool cpu_has_nx(void)
{
    return cpu_caps.ext_edx & CPUID_EXT_EDX_NX;
}
static inline bool cpu_has_smep(void)
{
    return cpu_caps.leaf7_ebx & CPUID_7_EBX_SMEP;
}
static inline bool cpu_has_smap(void)
{
    return cpu_caps.leaf7_ebx & CPUID_7_EBX_SMAP;
}
static inline bool cpu_is_virtual(void)
{
    return cpu_caps.leaf1_ecx & CPUID_1_ECX_HYPERVISOR;
}
bool cpu_is_qemu(void);
bool cpu_is_bochs(void);

#endif
