/*
 * 32-bit entry from a multiboot loader, and the switch to long mode.
 *
 * The loader leaves us in flat 32-bit protected mode with paging off, EAX = loader magic and
 * EBX = physical address of its information block. We build an identity map of the first
 * 4 GiB with 2 MiB pages (enough for the kernel, the boot information, the LAPIC and any
 * framebuffer below 4 GiB), enable long mode and jump to kmain(). The final page tables, with
 * per-section protections, are built in C (kernel/paging.c).
 *
 * This code lives in .boot32: it is 32-bit code and must not be disassembled as 64-bit.
 */
#include "boot/asm.h"
#include "boot/layout.h"

#define CR0_PE          (1 << 0)
#define CR0_WP          (1 << 16)
#define CR0_PG          (1 << 31)
#define CR4_PAE         (1 << 5)
#define MSR_EFER        0xC0000080
#define EFER_LME        (1 << 8)
#define PTE_P           (1 << 0)
#define PTE_W           (1 << 1)
#define PTE_PS          (1 << 7)
#define CPUID_EXT_MAX   0x80000000
#define CPUID_EXT_FEAT  0x80000001
#define CPUID_EXT_LM    (1 << 29)
#define COM1            0x3F8

    .section .boot32, "ax"
    .code32
ENTRY(_start)
    cli
    cld
    mov %eax, %edi                      /* loader magic, kept for kmain */
    mov %ebx, %esi                      /* loader information */
    mov $(boot_stack + BOOT_STACK_SIZE), %esp

    /* Without long mode there is nothing we can do but say so. */
    mov $CPUID_EXT_MAX, %eax
    cpuid
    cmp $CPUID_EXT_FEAT, %eax
    jb no_long_mode
    mov $CPUID_EXT_FEAT, %eax
    cpuid
    test $CPUID_EXT_LM, %edx
    jz no_long_mode

    /* PML4[0] -> PDPT; PDPT[0..3] -> four page directories of 512 x 2 MiB. */
    mov $(boot_pdpt + PTE_P + PTE_W), %eax
    mov %eax, boot_pml4
    mov $boot_pd, %ebx
    xor %ecx, %ecx
1:  mov %ecx, %eax
    shl $12, %eax
    add %ebx, %eax
    or $(PTE_P + PTE_W), %eax
    mov %eax, boot_pdpt(, %ecx, 8)
    inc %ecx
    cmp $4, %ecx
    jne 1b

    xor %ecx, %ecx                      /* 2048 entries, 2 MiB each */
2:  mov %ecx, %eax
    shl $21, %eax
    or $(PTE_P + PTE_W + PTE_PS), %eax
    mov %eax, boot_pd(, %ecx, 8)
    mov %ecx, %eax
    shr $11, %eax                       /* high half of the physical address */
    mov %eax, boot_pd + 4(, %ecx, 8)
    inc %ecx
    cmp $2048, %ecx
    jne 2b

    mov %cr4, %eax
    or $CR4_PAE, %eax
    mov %eax, %cr4
    mov $boot_pml4, %eax
    mov %eax, %cr3
    mov $MSR_EFER, %ecx
    rdmsr
    or $EFER_LME, %eax
    wrmsr
    mov %cr0, %eax
    or $(CR0_PG | CR0_PE | CR0_WP), %eax
    mov %eax, %cr0

    lgdt gdt_desc32
    ljmp $GDT_KERNEL_CS, $long_mode_entry
END(_start)

LOCAL_ENTRY(no_long_mode)
    mov $no_lm_msg, %esi
3:  lodsb
    test %al, %al
    jz 5f
    mov %al, %bl
    mov $(COM1 + 5), %dx                /* wait for the transmitter */
4:  in %dx, %al
    test $0x20, %al
    jz 4b
    mov $COM1, %dx
    mov %bl, %al
    out %al, %dx
    jmp 3b
5:  cli
    hlt
    jmp 5b
END(no_long_mode)

LOCAL_DATA(no_lm_msg)
    .asciz "btsx: this CPU has no long mode (CPUID.80000001H:EDX.LM=0); halting\r\n"
END(no_lm_msg)

    .balign 8
LOCAL_DATA(gdt_desc32)
    .short gdt_end - gdt - 1
    .long gdt
END(gdt_desc32)

    .code64
LOCAL_ENTRY(long_mode_entry)
    mov $GDT_KERNEL_DS, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    xor %eax, %eax
    mov %ax, %fs
    mov %ax, %gs
    lgdt gdt_desc64(%rip)               /* the same table, at its 64-bit descriptor */
    mov $(boot_stack + BOOT_STACK_SIZE), %rsp
    xor %ebp, %ebp
    /* The stack protector's canary, before any C function that checks it has a frame. */
    mov %edi, %ebx
    mov %esi, %r12d
    call stackprot_init
    /* kmain(magic, info): zero-extended by the 32-bit moves. */
    mov %ebx, %edi
    mov %r12d, %esi
    call kmain
6:  cli
    hlt
    jmp 6b
END(long_mode_entry)

/* The GDT lives in .data: kernel/gdt.c fills the TSS descriptor at run time. */
    .data
    .balign 16
DATA(gdt)
    .quad 0                             /* null */
    .quad 0x00AF9A000000FFFF            /* 0x08 kernel code: L=1, DPL 0 */
    .quad 0x00CF92000000FFFF            /* 0x10 kernel data */
    .quad 0x00CFFA000000FFFF            /* 0x18 user code 32 (SYSRET base only) */
    .quad 0x00CFF2000000FFFF            /* 0x20 user data, DPL 3 */
    .quad 0x00AFFA000000FFFF            /* 0x28 user code: L=1, DPL 3 */
    .quad 0, 0                          /* 0x30 TSS, filled by gdt_init() */
gdt_end:
END(gdt)

    .balign 8
DATA(gdt_desc64)
    .short gdt_end - gdt - 1
    .quad gdt
END(gdt_desc64)

    .section .bss.boot, "aw", @nobits
    .balign 4096
LOCAL_DATA(boot_pml4)
    .skip 4096
END(boot_pml4)
LOCAL_DATA(boot_pdpt)
    .skip 4096
END(boot_pdpt)
LOCAL_DATA(boot_pd)
    .skip 4 * 4096
END(boot_pd)
DATA(boot_stack_guard)                  /* left unmapped by kernel/paging.c: overflow faults */
    .skip 4096
END(boot_stack_guard)
DATA(boot_stack)
    .skip BOOT_STACK_SIZE
END(boot_stack)
