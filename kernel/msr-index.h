/*
 * Hardware constants: MSRs and their bits, CPUID leaves and bits, control-register bits.
 * Usable from C and assembly. Sources: Intel SDM Vol. 4 (MSRs), Vol. 2A (CPUID), Vol. 3A.
 */
#ifndef BTSX_KERNEL_MSR_INDEX_H
#define BTSX_KERNEL_MSR_INDEX_H

#ifdef __ASSEMBLER__
#define BIT(n)     (1 << (n))
#define BIT_ULL(n) (1 << (n))
#else
#define BIT(n)     (1U << (n))
#define BIT_ULL(n) (1ULL << (n))
#endif

/* MSRs */
#define MSR_IA32_APIC_BASE            0x0000001B
#define MSR_IA32_FEATURE_CONTROL      0x0000003A
#define MSR_IA32_BIOS_SIGN_ID         0x0000008B /* microcode revision: bits 63:32 */
#define MSR_IA32_MISC_ENABLE          0x000001A0
#define MSR_IA32_DEBUGCTL             0x000001D9 /* MSR_DEBUGCTLA on NetBurst; bits: ds/debugctl.h */
#define MSR_IA32_PERF_CAPABILITIES    0x00000345
#define MSR_IA32_PERF_GLOBAL_STATUS   0x0000038E
#define MSR_IA32_PERF_GLOBAL_CTRL     0x0000038F
#define MSR_IA32_PERF_GLOBAL_OVF_CTRL 0x00000390
#define MSR_IA32_DS_AREA              0x00000600
#define MSR_IA32_TSC_DEADLINE         0x000006E0
#define MSR_EFER                      0xC0000080
#define MSR_STAR                      0xC0000081
#define MSR_LSTAR                     0xC0000082
#define MSR_CSTAR                     0xC0000083
#define MSR_FMASK                     0xC0000084
#define MSR_FS_BASE                   0xC0000100
#define MSR_GS_BASE                   0xC0000101
#define MSR_KERNEL_GS_BASE            0xC0000102
#define MSR_X2APIC_BASE               0x00000800 /* x2APIC register r is MSR 0x800 + r/16 */

/* IA32_APIC_BASE */
#define APIC_BASE_BSP       BIT(8)
#define APIC_BASE_EXTD      BIT(10) /* x2APIC mode */
#define APIC_BASE_EN        BIT(11)
#define APIC_BASE_ADDR_MASK 0xFFFFFFFFFF000ULL

/* IA32_MISC_ENABLE */
#define MISC_ENABLE_PERF_AVAIL   BIT(7)
#define MISC_ENABLE_BTS_UNAVAIL  BIT(11) /* read-only; 1 = no BTS */
#define MISC_ENABLE_PEBS_UNAVAIL BIT(12)

/* EFER */
#define EFER_SCE BIT(0)
#define EFER_LME BIT(8)
#define EFER_LMA BIT(10)
#define EFER_NXE BIT(11)

/* Control registers */
#define CR0_PE     BIT(0)
#define CR0_WP     BIT(16)
#define CR0_PG     BIT(31)
#define CR4_PAE    BIT(5)
#define CR4_PGE    BIT(7)
#define CR4_OSFXSR BIT(9)
#define CR4_SMEP   BIT(20)
#define CR4_SMAP   BIT(21)

/* RFLAGS */
#define RFLAGS_CF    BIT(0)
#define RFLAGS_FIXED BIT(1) /* always 1 */
#define RFLAGS_TF    BIT(8)
#define RFLAGS_IF    BIT(9)
#define RFLAGS_DF    BIT(10)
#define RFLAGS_NT    BIT(14)
#define RFLAGS_RF    BIT(16)
#define RFLAGS_AC    BIT(18)

/* DR6 */
#define DR6_BS    BIT(14)    /* single step */
#define DR6_RESET 0xFFFF0FF0 /* what the handler writes back: no condition pending */

/* CPUID.01H */
#define CPUID_LEAF_FEATURES      0x1
#define CPUID_1_ECX_DTES64       BIT(2)
#define CPUID_1_ECX_DS_CPL       BIT(4)
#define CPUID_1_ECX_PDCM         BIT(15)
#define CPUID_1_ECX_X2APIC       BIT(21)
#define CPUID_1_ECX_TSC_DEADLINE BIT(24)
#define CPUID_1_ECX_HYPERVISOR   BIT(31)
#define CPUID_1_EDX_TSC          BIT(4)
#define CPUID_1_EDX_MSR          BIT(5)
#define CPUID_1_EDX_APIC         BIT(9)
#define CPUID_1_EDX_DS           BIT(21)
/* CPUID.07H.0 */
#define CPUID_LEAF_EXT_FEATURES  0x7
#define CPUID_7_EBX_SMEP         BIT(7)
#define CPUID_7_EBX_SMAP         BIT(20)
/* Extended leaves */
#define CPUID_LEAF_EXT_MAX       0x80000000
#define CPUID_LEAF_EXT_INFO      0x80000001
#define CPUID_EXT_EDX_NX         BIT(20)
#define CPUID_EXT_EDX_PAGE1G     BIT(26)
#define CPUID_EXT_EDX_LM         BIT(29)
#define CPUID_LEAF_BRAND0        0x80000002
#define CPUID_LEAF_TSC_CRYSTAL   0x15
#define CPUID_LEAF_FREQ          0x16
#define CPUID_LEAF_HYPERVISOR    0x40000000

#endif
