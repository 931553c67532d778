#include "boot/asm.h"
#include "boot/layout.h"
#include "kernel/msr-index.h"

    .text
ENTRY(user_enter)
    pushq $(GDT_USER_DS | RPL_USER)
    pushq %rsi
    pushfq                              /* a single-stepped (BTS model) caller keeps TF */
    andq $RFLAGS_TF, (%rsp)
    orq $(RFLAGS_IF | RFLAGS_FIXED), (%rsp)
    pushq $(GDT_USER_CS | RPL_USER)
    pushq %rdi
    mov %rdx, %rdi
    mov %rcx, %rsi
    /* Nothing of the kernel's registers leaks to user mode. */
    xor %eax, %eax
    xor %ebx, %ebx
    xor %ecx, %ecx
    xor %edx, %edx
    xor %ebp, %ebp
    xor %r8d, %r8d
    xor %r9d, %r9d
    xor %r10d, %r10d
    xor %r11d, %r11d
    xor %r12d, %r12d
    xor %r13d, %r13d
    xor %r14d, %r14d
    xor %r15d, %r15d
    swapgs                              /* the user's GS (kernel/percpu.h) */
LABEL(user_enter_iretq)
    iretq
END(user_enter)
