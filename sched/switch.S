/*
 * sched_switch_stacks(&prev->rsp, next->rsp): the callee-saved registers and RFLAGS go on the
 * outgoing stack, the incoming task's come off its own. A new task's stack is laid out by
 * task_create() as if it had switched out just before task_start.
 */
#include "boot/asm.h"

    .text
ENTRY(sched_switch_stacks)
    pushfq
    push %rbp
    push %rbx
    push %r12
    push %r13
    push %r14
    push %r15
    mov %rsp, (%rdi)
    mov %rsi, %rsp
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbx
    pop %rbp
    popfq
    ret
END(sched_switch_stacks)
