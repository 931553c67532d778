/*
 * SYSCALL lands here at CPL 0 with the user's RSP, RIP in RCX, RFLAGS in R11 and IF/TF/DF/AC
 * cleared by IA32_FMASK. Swap in the kernel's GS (kernel/percpu.h), switch to the task's kernel
 * stack (RSP0 of this CPU's TSS: the scheduler keeps it at the top of the current user task's
 * stack), build struct syscall_frame, call syscall_dispatch, swap GS back and SYSRET with
 * whatever it left in the frame.
 */
#include "boot/asm.h"
#include "kernel/gdt.h"
#include "kernel/percpu.h"

    .text
ENTRY(syscall_entry)
    swapgs                              /* the kernel's GS (kernel/percpu.h) */
    mov %rsp, %gs:PERCPU_USER_RSP_OFFSET
    mov %gs:PERCPU_TSS_OFFSET, %rsp     /* this CPU's TSS */
    mov TSS_RSP0_OFFSET(%rsp), %rsp
    pushq %gs:PERCPU_USER_RSP_OFFSET
    push %r11
    push %rcx
    push %rax
    push %rdi
    push %rsi
    push %rdx
    push %r10
    push %r8
    push %r9
    push %rbx
    push %rbp
    push %r12
    push %r13
    push %r14
    push %r15
    mov %rsp, %rdi
    call syscall_dispatch
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbp
    pop %rbx
    pop %r9
    pop %r8
    pop %r10
    pop %rdx
    pop %rsi
    pop %rdi
    pop %rax
    pop %rcx
    pop %r11
    swapgs                              /* the user's GS again */
    pop %rsp                            /* interrupts are off: nothing runs on this stack */
LABEL(syscall_sysretq)
    sysretq
END(syscall_entry)
