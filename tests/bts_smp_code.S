/*
 * The user program of bts.smp.migrate (tests/t_bts_smp.c): uc_hop(rounds, ncpus) moves to
 * another CPU in the middle of its loop, round after round. Each round takes a direct JMP,
 * asks for CPU (round % ncpus) with SYS_MIGRATE, and loops back with a JNZ: consecutive
 * rounds name different CPUs, so every round migrates.
 *
 * The user program of bts.smp.drain_live: uc_chain(passes) runs a chain of taken branches,
 * each landing on the next branch, so in its trace every record starts where the one before
 * it ended, seven records a pass (the last pass six: its LOOP falls through).
 */
#include "boot/asm.h"
#include "sched/syscall.h"

#define L(name) LABEL(name)

    .section .rodata.user, "a"
DATA(uc_hop_start)
    mov %rdi, %r12                      /* rounds left (the kernel keeps R12, R13) */
    mov %rsi, %r13                      /* CPUs */
L(uc_hop_top)
L(uc_hop_jmp)
    jmp 1f
1:
L(uc_hop_jmp_to)
    mov %r12, %rax
    xor %edx, %edx
    div %r13
    mov %rdx, %rdi                      /* this round's CPU */
    mov $SYS_MIGRATE, %eax
    syscall
L(uc_hop_after)
    dec %r12
L(uc_hop_jnz)
    jnz uc_hop_top
    xor %edi, %edi
    mov $SYS_EXIT, %eax
    syscall
    ud2
L(uc_hop_end)
END(uc_hop_start)

DATA(uc_chain_start)
    mov %rdi, %rcx
L(uc_chain_top)
    jmp 1f
1:  jmp 2f
2:  jmp 3f
3:  jmp 4f
4:  jmp 5f
5:  jmp 6f
6:  loop uc_chain_top
    xor %edi, %edi
    mov $SYS_EXIT, %eax
    syscall
    ud2
L(uc_chain_end)
END(uc_chain_start)
