/*
 * How an application processor gets from the start-up IPI to C (kernel/smp.c).
 *
 * A STARTUP IPI starts the CPU in real mode at CS:IP = (vector << 8):0, so the first part,
 * ap_trampoline, is copied to a free page below 1 MiB and must run wherever it lands: it only
 * addresses its own bytes relative to CS, and leaves for the kernel image (at its link
 * address, reachable in protected mode without paging) as soon as it can. It writes a word in
 * its page as it starts, so that a CPU that never reached the kernel can be told from one that
 * never answered (SDM Vol. 3A, "MP Initialization for P6 Family Processors" and "Multiple-
 * Processor (MP) Initialization": the start-up algorithm).
 *
 * The second part, ap_start32, runs from the kernel image in .boot32, which the kernel's page
 * tables map executable: it turns on long mode with the kernel's CR3 and EFER as the bootstrap
 * CPU left them in smp_ap_cr3 and smp_ap_efer, and calls smp_ap_main(smp_ap_percpu) on
 * smp_ap_stack. The bootstrap CPU starts one processor at a time, so one set of these
 * variables serves them all.
 */
#include "boot/asm.h"
#include "boot/layout.h"

#define CR0_PE          (1 << 0)
#define CR0_WP          (1 << 16)
#define CR0_PG          (1 << 31)
#define CR4_PAE         (1 << 5)
#define MSR_EFER        0xC0000080
#define AP_CS32         0x18            /* ap_gdt's 32-bit code segment */
#define TRAMPOLINE_ALIVE 0x5441         /* "AT": an AP ran the trampoline */

    .section .rodata.ap_trampoline, "a"
    .code16
DATA(ap_trampoline)
    cli
    cld
    mov %cs, %ax
    mov %ax, %ds
    movw $TRAMPOLINE_ALIVE, ap_trampoline_alive - ap_trampoline
    lgdtl ap_gdt_desc - ap_trampoline
    mov %cr0, %eax
    or $CR0_PE, %eax
    mov %eax, %cr0
    ljmpl $AP_CS32, $ap_start32
    .balign 8
LABEL(ap_trampoline_alive)
    .word 0
    .balign 8
ap_gdt_desc:
    .short ap_gdt_end - ap_gdt - 1
    .long ap_gdt
LABEL(ap_trampoline_end)
END(ap_trampoline)

/* The kernel's code and data segments at the same selectors, and a 32-bit code segment for the
 * step from real mode. smp_ap_main() loads the CPU's own GDT (kernel/gdt.c). The table is
 * read-only once paging is on, so every descriptor has its accessed bit set already: a CPU
 * loading a descriptor without it writes it in, and that write to a read-only page (CR0.WP)
 * faults. Bochs does so at the far jump into 64-bit code; QEMU's TCG never writes the bit. */
    .section .rodata
    .balign 16
LOCAL_DATA(ap_gdt)
    .quad 0                             /* null */
    .quad 0x00AF9B000000FFFF            /* 0x08 kernel code: L=1, DPL 0, accessed */
    .quad 0x00CF93000000FFFF            /* 0x10 kernel data, accessed */
    .quad 0x00CF9B000000FFFF            /* 0x18 32-bit code, DPL 0, accessed: the far jump */
ap_gdt_end:
END(ap_gdt)

    .section .boot32, "ax"
    .code32
LOCAL_ENTRY(ap_start32)
    mov $GDT_KERNEL_DS, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    mov %cr4, %eax
    or $CR4_PAE, %eax
    mov %eax, %cr4
    mov smp_ap_cr3, %eax
    mov %eax, %cr3
    mov $MSR_EFER, %ecx
    mov smp_ap_efer, %eax
    xor %edx, %edx
    wrmsr
    mov %cr0, %eax
    or $(CR0_PG | CR0_PE | CR0_WP), %eax
    mov %eax, %cr0
    ljmp $GDT_KERNEL_CS, $ap_start64
END(ap_start32)

    .code64
LOCAL_ENTRY(ap_start64)
    mov smp_ap_stack(%rip), %rsp
    mov smp_ap_percpu(%rip), %rdi
    xor %ebp, %ebp
    call smp_ap_main                    /* does not return */
1:  cli
    hlt
    jmp 1b
END(ap_start64)
