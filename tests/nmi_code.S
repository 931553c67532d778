/*
 * Kernel code for the nmi.* suite (tests/t_nmi.c): the points where the NMI entry must pick
 * the right stack, with every register known there.
 */
#include "boot/asm.h"

    .section .rodata
    .balign 8
LOCAL_DATA(nmi_regs_expect)
    .irp i, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15
    .quad 0x5A00000000000000 + \i * 0x0001010101010101
    .endr
END(nmi_regs_expect)

    .bss
    .balign 8
LOCAL_DATA(nmi_regs_rsp)
    .quad 0
END(nmi_regs_rsp)
LOCAL_DATA(nmi_regs_which)
    .quad 0
END(nmi_regs_which)

    .text

/* nmi_int2_regs(): loads a distinct pattern into every general register but RSP, enters the
 * NMI gate with INT 2 (the same gate, IST switch and entry as an NMI, but without blocking
 * NMIs) and returns 0 if every register and RSP came back unchanged, else the number of the
 * first that did not: 1..15 in the order RAX RBX RCX RDX RSI RDI RBP R8..R15, 16 for RSP. */
ENTRY(nmi_int2_regs)
    push %rbx
    push %rbp
    push %r12
    push %r13
    push %r14
    push %r15
    mov %rsp, nmi_regs_rsp(%rip)
    n = 0
    .irp r, rax, rbx, rcx, rdx, rsi, rdi, rbp, r8, r9, r10, r11, r12, r13, r14, r15
    mov nmi_regs_expect + n * 8(%rip), %\r
    n = n + 1
    .endr
LABEL(nmi_int2_insn)
    int $2
LABEL(nmi_int2_ret)
    n = 0
    .irp r, rax, rbx, rcx, rdx, rsi, rdi, rbp, r8, r9, r10, r11, r12, r13, r14, r15
    movq $(n + 1), nmi_regs_which(%rip)
    cmp nmi_regs_expect + n * 8(%rip), %\r
    jne 1f
    n = n + 1
    .endr
    movq $16, nmi_regs_which(%rip)
    cmp nmi_regs_rsp(%rip), %rsp
    jne 1f
    movq $0, nmi_regs_which(%rip)
1:  mov nmi_regs_rsp(%rip), %rsp
    mov nmi_regs_which(%rip), %rax
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbp
    pop %rbx
    ret
END(nmi_int2_regs)

/* nmi_foreign_iret(rsp): called inside an NMI handler with a second NMI pending (blocked
 * until the next IRET). The IRETQ unblocks it and lands at nmi_foreign_land at CPL 0 with
 * RSP = rdi, a user-half address: the state of the SYSCALL window. The pending NMI is taken
 * before the first instruction there; the NOPs leave room for a CPU that takes it a few
 * instructions late, and nothing touches the stack until RSP is back. */
ENTRY(nmi_foreign_iret)
    mov %rsp, %rax
    mov %ss, %ecx
    push %rcx
    push %rdi
    pushfq
    mov %cs, %ecx
    push %rcx
    lea nmi_foreign_land(%rip), %rcx
    push %rcx
    iretq
LABEL(nmi_foreign_land)
    nop
    nop
    nop
    nop
LABEL(nmi_foreign_land_end)
    mov %rax, %rsp
    ret
END(nmi_foreign_iret)

/* nmi_unblock(): an IRETQ to the next instruction, on the same stack: inside an NMI handler
 * it unblocks NMIs, as the return from a #PF or a fixed-up #GP would. */
ENTRY(nmi_unblock)
    mov %rsp, %rax
    mov %ss, %ecx
    push %rcx
    push %rax
    pushfq
    mov %cs, %ecx
    push %rcx
    lea 1f(%rip), %rcx
    push %rcx
    iretq
1:  ret
END(nmi_unblock)
