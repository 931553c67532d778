/* CPU identification and fault-safe MSR access. */
#include "kernel/cpu.h"

#include "kernel/errno.h"
#include "kernel/extable.h"
#include "kernel/string.h"

struct cpu_caps cpu_caps;

static void copy_regs_text(char *dst, const uint32_t *words, unsigned n)
{
    memcpy(dst, words, n * sizeof(uint32_t));
    dst[n * sizeof(uint32_t)] = '\0';
}

void cpu_init(void)
{
    struct cpuid_regs r = cpuid(0);
    cpu_caps.max_leaf = r.eax;
    uint32_t vendor[3] = {r.ebx, r.edx, r.ecx};
    copy_regs_text(cpu_caps.vendor, vendor, 3);

    r = cpuid(CPUID_LEAF_FEATURES);
    cpu_caps.leaf1_ecx = r.ecx;
    cpu_caps.leaf1_edx = r.edx;
    uint32_t fam = (r.eax >> 8) & 0xF, model = (r.eax >> 4) & 0xF;
    /* SDM Vol. 2A, CPUID: extended family/model apply to families 6 and 15. */
    if (fam == 0xF)
        fam += (r.eax >> 20) & 0xFF;
    if (fam == 0x6 || fam == 0xF)
        model |= ((r.eax >> 16) & 0xF) << 4;
    cpu_caps.family = fam;
    cpu_caps.model = model;
    cpu_caps.stepping = r.eax & 0xF;

    if (cpu_caps.max_leaf >= CPUID_LEAF_EXT_FEATURES)
        cpu_caps.leaf7_ebx = cpuid_count(CPUID_LEAF_EXT_FEATURES, 0).ebx;

    cpu_caps.max_ext_leaf = cpuid(CPUID_LEAF_EXT_MAX).eax;
    if (cpu_caps.max_ext_leaf >= CPUID_LEAF_EXT_INFO)
        cpu_caps.ext_edx = cpuid(CPUID_LEAF_EXT_INFO).edx;
    if (cpu_caps.max_ext_leaf >= CPUID_LEAF_BRAND0 + 2) {
        uint32_t words[12];
        for (unsigned i = 0; i < 3; i++) {
            r = cpuid(CPUID_LEAF_BRAND0 + i);
            words[i * 4 + 0] = r.eax;
            words[i * 4 + 1] = r.ebx;
            words[i * 4 + 2] = r.ecx;
            words[i * 4 + 3] = r.edx;
        }
        copy_regs_text(cpu_caps.brand, words, 12);
    } else {
        strlcpy(cpu_caps.brand, cpu_caps.vendor, sizeof(cpu_caps.brand));
    }

    if (cpu_is_virtual()) {
        r = cpuid(CPUID_LEAF_HYPERVISOR);
        uint32_t sig[3] = {r.ebx, r.ecx, r.edx};
        copy_regs_text(cpu_caps.hypervisor, sig, 3);
    }
}

bool cpu_is_qemu(void)
{
    /* TCG and KVM under QEMU; other KVM front ends lack isa-debug-exit but ignore the write. */
    return strcmp(cpu_caps.hypervisor, "TCGTCGTCGTCG") == 0 ||
           strncmp(cpu_caps.hypervisor, "KVMKVMKVM", 9) == 0;
}

bool cpu_is_bochs(void)
{
    /* Bochs has no hypervisor leaf; its port 0xE9 hack reads back 0xE9. */
    uint8_t v;
    __asm__ volatile("inb $0xE9, %0" : "=a"(v));
    return !cpu_is_virtual() && v == 0xE9;
}

int rdmsr_safe(uint32_t msr, uint64_t *val)
{
    uint32_t lo = 0, hi = 0;
    int err = 0;
    __asm__ volatile("1: rdmsr\n2:\n\t"
                     ".pushsection .fixup, \"ax\"\n"
                     "3: movl %[efault], %[err]\n\tjmp 2b\n\t"
                     ".popsection\n\t" EXTABLE_ENTRY(1b, 3b)
                     : "=a"(lo), "=d"(hi), [err] "+r"(err)
                     : "c"(msr), [efault] "i"(E_FAULT));
    *val = ((uint64_t)hi << 32) | lo;
    return err;
}

int wrmsr_safe(uint32_t msr, uint64_t val)
{
    int err = 0;
    __asm__ volatile("1: wrmsr\n2:\n\t"
                     ".pushsection .fixup, \"ax\"\n"
                     "3: movl %[efault], %[err]\n\tjmp 2b\n\t"
                     ".popsection\n\t" EXTABLE_ENTRY(1b, 3b)
                     : [err] "+r"(err)
                     : "c"(msr), "a"((uint32_t)val),
                       "d"((uint32_t)(val >> 32)), [efault] "i"(E_FAULT)
                     : "memory");
    return err;
}

int cpu_microcode_rev(uint32_t *rev)
{
    uint64_t v;
    int err;
    if (strcmp(cpu_caps.vendor, "AuthenticAMD") == 0) {
        /* AMD keeps its microcode patch level in the low half of the same MSR, read as it
         * is (as Linux does). */
        err = rdmsr_safe(MSR_IA32_BIOS_SIGN_ID, &v);
        if (err)
            return err;
        *rev = (uint32_t)v;
        return 0;
    }
    if (strcmp(cpu_caps.vendor, "GenuineIntel") != 0)
        return E_NOTSUP;
    /* SDM Vol. 3A, "Microcode Update Facilities": write 0 to IA32_BIOS_SIGN_ID, execute
     * CPUID leaf 1, and the MSR's high half holds the revision loaded. Some emulators and
     * hypervisors fault on the MSR: the caller says the revision is unknown. */
    err = wrmsr_safe(MSR_IA32_BIOS_SIGN_ID, 0);
    if (err)
        return err;
    (void)cpuid(1);
    err = rdmsr_safe(MSR_IA32_BIOS_SIGN_ID, &v);
    if (err)
        return err;
    *rev = (uint32_t)(v >> 32);
    return 0;
}

static bool smap_on;

void cpu_enable_protections(void)
{
    if (cpu_has_nx())
        wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_NXE);
    uint64_t cr4 = read_cr4();
    if (cpu_has_smep())
        cr4 |= CR4_SMEP;
    if (cpu_has_smap()) {
        cr4 |= CR4_SMAP;
        smap_on = true;
    }
    write_cr4(cr4);
    write_cr0(read_cr0() | CR0_WP);
}

void user_access_begin(void)
{
    if (smap_on)
        __asm__ volatile("stac" ::: "memory");
}

void user_access_end(void)
{
    if (smap_on)
        __asm__ volatile("clac" ::: "memory");
}
