/* kjmp_set/kjmp_long: setjmp/longjmp for recovery points (callee-saved registers, RSP, RIP). */
#include "boot/asm.h"

    .text
ENTRY(kjmp_set)
    mov %rbx, 0(%rdi)
    mov %rbp, 8(%rdi)
    mov %r12, 16(%rdi)
    mov %r13, 24(%rdi)
    mov %r14, 32(%rdi)
    mov %r15, 40(%rdi)
    lea 8(%rsp), %rax                   /* RSP after our return */
    mov %rax, 48(%rdi)
    mov (%rsp), %rax                    /* return address */
    mov %rax, 56(%rdi)
    xor %eax, %eax
    ret
END(kjmp_set)

ENTRY(kjmp_long)
    mov %esi, %eax
    mov 0(%rdi), %rbx
    mov 8(%rdi), %rbp
    mov 16(%rdi), %r12
    mov 24(%rdi), %r13
    mov 32(%rdi), %r14
    mov 40(%rdi), %r15
    mov 48(%rdi), %rsp
    jmp *56(%rdi)
END(kjmp_long)
