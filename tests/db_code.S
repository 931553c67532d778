/*
 * Kernel code for the db.* suite (tests/t_db.c): single steps where the #DB entry must pick
 * the right stack. The expectations come from the single-step rule (SDM Vol. 3B, 17.3.1.4):
 * when POPFQ sets TF, the trap comes after the instruction that follows it.
 */
#include "boot/asm.h"
#include "kernel/msr-index.h"


    .text

/* db_foreign_step(rsp): one single step at CPL 0 with RSP = rdi, a user-half address (the
 * state of the SYSCALL window). The trap follows the MOV to RSP, so it reports
 * db_foreign_trap; nothing touches the stack between the two MOVs. The kernel clears TF. */
ENTRY(db_foreign_step)
    mov %rsp, %rax
    pushfq
    orq $RFLAGS_TF, (%rsp)
    popfq
    mov %rdi, %rsp
LABEL(db_foreign_trap)
    mov %rax, %rsp
LABEL(db_foreign_ret)
    ret
END(db_foreign_step)

/* Four bytes that belong to no function: boot.symbols looks them up (tests/t_boot.c). */
    .skip 4, 0xCC

/* db_step_loop(n): returns n + (n-1) + ... + 1, computed with TF set. Single steps: the 3n
 * instructions of the loop and the PUSHFQ and AND after it; the POPFQ that clears TF may or
 * may not be followed by one more. */
ENTRY(db_step_loop)
    xor %eax, %eax
    pushfq
    orq $RFLAGS_TF, (%rsp)
    popfq
1:  add %rdi, %rax
    dec %rdi
    jnz 1b
    pushfq
    andq $~RFLAGS_TF, (%rsp)
    popfq
    ret
END(db_step_loop)
