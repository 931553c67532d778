/*
 * Known code for the trace tests. Every branch and every target carries a label; the tests
 * build their expected records from these labels (tests/t_bts.c, tests/t_ds.c), never from a
 * previous run. Encodings that matter (rel8 vs rel32) are spelled as bytes so that no
 * assembler can choose differently. Each function is called as fn(arg) from bts_run().
 */
#include "boot/asm.h"
#include "boot/layout.h"
#include "kernel/trap.h"

#define L(name) LABEL(name)

    .section .text.traced, "ax"

/* jmp rel8 and rel32. */
ENTRY(tc_jmp)
L(tc_jmp_b8)
    .byte 0xEB, tc_jmp_t8 - tc_jmp_b8 - 2
    ud2
L(tc_jmp_t8)
L(tc_jmp_b32)
    .byte 0xE9
    .long tc_jmp_t32 - tc_jmp_b32 - 5
    ud2
L(tc_jmp_t32)
L(tc_jmp_ret)
    ret
END(tc_jmp)

/* jcc: the taken ones give a record, the not-taken ones none. arg (RDI) is 1. */
ENTRY(tc_jcc)
    test %rdi, %rdi
L(tc_jcc_nt8)
    .byte 0x74, tc_jcc_bad - tc_jcc_nt8 - 2             /* jz rel8: not taken */
L(tc_jcc_t8)
    .byte 0x75, tc_jcc_t8_to - tc_jcc_t8 - 2            /* jnz rel8: taken */
    ud2
L(tc_jcc_t8_to)
L(tc_jcc_nt32)
    .byte 0x0F, 0x84                                    /* jz rel32: not taken */
    .long tc_jcc_bad - tc_jcc_nt32 - 6
L(tc_jcc_t32)
    .byte 0x0F, 0x85                                    /* jnz rel32: taken */
    .long tc_jcc_t32_to - tc_jcc_t32 - 6
    ud2
L(tc_jcc_t32_to)
L(tc_jcc_ret)
    ret
L(tc_jcc_bad)
    ud2
END(tc_jcc)

/* loop (taken twice, then falls through) and jrcxz (taken once, not taken once). */
ENTRY(tc_loop)
    mov $3, %ecx
L(tc_loop_top)
    nop
L(tc_loop_insn)
    .byte 0xE2, tc_loop_top - tc_loop_insn - 2          /* loop */
    xor %ecx, %ecx
L(tc_jrcxz_insn)
    .byte 0xE3, tc_jrcxz_to - tc_jrcxz_insn - 2         /* jrcxz: RCX = 0, taken */
    ud2
L(tc_jrcxz_to)
    mov $1, %ecx
L(tc_jrcxz_nt)
    .byte 0xE3, tc_loop_bad - tc_jrcxz_nt - 2           /* jrcxz: RCX = 1, not taken */
L(tc_loop_ret)
    ret
L(tc_loop_bad)
    ud2
END(tc_loop)

/* Direct call and ret. */
ENTRY(tc_call)
L(tc_call_site)
    call tc_callee
L(tc_call_back)
L(tc_call_ret)
    ret
END(tc_call)
ENTRY(tc_callee)
    nop
L(tc_callee_ret)
    ret
END(tc_callee)

/* Indirect jmp and call, through a register and through memory. */
ENTRY(tc_ind)
    lea tc_ind_t1(%rip), %rax
L(tc_ind_jreg)
    jmp *%rax
    ud2
L(tc_ind_t1)
L(tc_ind_jmem)
    jmp *tc_ind_slot(%rip)
    ud2
L(tc_ind_t2)
    lea tc_ind_fn(%rip), %rax
L(tc_ind_creg)
    call *%rax
L(tc_ind_creg_back)
L(tc_ind_cmem)
    call *tc_ind_fnslot(%rip)
L(tc_ind_cmem_back)
L(tc_ind_ret)
    ret
END(tc_ind)
ENTRY(tc_ind_fn)
L(tc_ind_fn_ret)
    ret
END(tc_ind_fn)

/* A jump table: RDI selects the case. */
ENTRY(tc_jtab)
    lea tc_jtab_table(%rip), %rax
L(tc_jtab_jmp)
    jmp *(%rax, %rdi, 8)
L(tc_jtab_c0)
    mov $10, %eax
L(tc_jtab_j0)
    jmp tc_jtab_end
L(tc_jtab_c1)
    mov $11, %eax
L(tc_jtab_j1)
    jmp tc_jtab_end
L(tc_jtab_c2)
    mov $12, %eax
L(tc_jtab_end)
L(tc_jtab_ret)
    ret
END(tc_jtab)

/* ret imm16 and a far return to the same code segment. */
ENTRY(tc_retf)
    sub $16, %rsp                       /* what ret $16 will pop */
L(tc_retimm_call)
    call tc_retimm_fn
L(tc_retimm_back)
    pushq $GDT_KERNEL_CS
    lea tc_lret_to(%rip), %rax
    push %rax
L(tc_lret)
    lretq
    ud2
L(tc_lret_to)
L(tc_retf_ret)
    ret
END(tc_retf)
ENTRY(tc_retimm_fn)
L(tc_retimm_insn)
    ret $16
END(tc_retimm_fn)

/* int3 and int n: their handlers return at once; the IRETQ back is recorded too. */
ENTRY(tc_int)
L(tc_int3)
    int3
L(tc_int3_back)
L(tc_intn)
    int $VEC_TEST_SOFTINT
L(tc_intn_back)
L(tc_int_ret)
    ret
END(tc_int)

/* The same trap rules in another shape: int n before int3, back to back, run twice by a
 * loop rel8 (RCX = 2), so each trap is recorded from two passes and the loop once. */
ENTRY(tc_trap2)
    mov $2, %ecx
L(tc_trap2_top)
L(tc_trap2_intn)
    int $VEC_TEST_SOFTINT
L(tc_trap2_int3)
    int3
L(tc_trap2_loop)
    .byte 0xE2, tc_trap2_top - tc_trap2_loop - 2        /* loop: taken once */
L(tc_trap2_ret)
    ret
END(tc_trap2)

/* loop in a counted loop of RDI passes (RDI >= 1): RDI - 1 taken, the last falls through.
 * The body is a 5-byte instruction, so the backward displacement differs from tc_loop's. */
ENTRY(tc_loopn)
    mov %rdi, %rcx
L(tc_loopn_top)
    add $1, %eax
    nop
    nop
L(tc_loopn_insn)
    .byte 0xE2, tc_loopn_top - tc_loopn_insn - 2        /* loop */
L(tc_loopn_ret)
    ret
END(tc_loopn)

/* #UD from ud2 and a #PF (RDI = an unmapped address), each resumed by the fixup table. */
ENTRY(tc_fault)
L(tc_ud)
    ud2
L(tc_ud_fix)
L(tc_pf)
    mov (%rdi), %rax
L(tc_pf_fix)
L(tc_fault_ret)
    ret
    .pushsection __ex_table, "a"
    .balign 8
    .quad tc_ud, tc_ud_fix
    .quad tc_pf, tc_pf_fix
    .popsection
END(tc_fault)

/* A self-IPI sent from traced code, arriving in the NOP sled after the send.
 * RDI points at { u64 ICR-low address (xAPIC only), u64 ICR value (x2APIC: the vector) }. */
ENTRY(tc_ipi_xapic)
    mov 8(%rdi), %esi
    mov (%rdi), %rdi
L(tc_ipi_xapic_send)
    movl %esi, (%rdi)
L(tc_ipi_xapic_sled)
    .rept 32
    nop
    .endr
L(tc_ipi_xapic_ret)
    ret
END(tc_ipi_xapic)
ENTRY(tc_ipi_x2apic)
    mov $0x83F, %ecx                    /* x2APIC SELF IPI */
    mov 8(%rdi), %eax
    xor %edx, %edx
L(tc_ipi_x2apic_send)
    wrmsr
L(tc_ipi_x2apic_sled)
    .rept 32
    nop
    .endr
L(tc_ipi_x2apic_ret)
    ret
END(tc_ipi_x2apic)

/* fib(n), recursive: the expected sequence is generated by walking the same recursion. */
ENTRY(tc_fib)
    cmp $2, %rdi
L(tc_fib_jb)
    jb tc_fib_base
    push %rbx
    push %rdi
    dec %rdi
L(tc_fib_call1)
    call tc_fib
L(tc_fib_back1)
    mov %rax, %rbx
    pop %rdi
    sub $2, %rdi
L(tc_fib_call2)
    call tc_fib
L(tc_fib_back2)
    add %rbx, %rax
    pop %rbx
L(tc_fib_ret1)
    ret
L(tc_fib_base)
    mov %rdi, %rax
L(tc_fib_ret0)
    ret
END(tc_fib)

/* A chain of TC_CHAIN_LEN two-byte jumps, each to the next instruction. */
#define TC_CHAIN_LEN 64
ENTRY(tc_chain)
    .rept TC_CHAIN_LEN
    .byte 0xEB, 0x00
    .endr
L(tc_chain_ret)
    ret
END(tc_chain)

/* The stream loop: RDI iterations, RDI - 1 taken JNZs. */
ENTRY(tc_spin)
L(tc_spin_top)
    dec %rdi
L(tc_spin_jnz)
    jnz tc_spin_top
L(tc_spin_ret)
    ret
END(tc_spin)

    .section .rodata
    .balign 8
LOCAL_DATA(tc_ind_slot)
    .quad tc_ind_t2
END(tc_ind_slot)
LOCAL_DATA(tc_ind_fnslot)
    .quad tc_ind_fn
END(tc_ind_fnslot)
LOCAL_DATA(tc_jtab_table)
    .quad tc_jtab_c0, tc_jtab_c1, tc_jtab_c2
END(tc_jtab_table)

/* bench_single_step(fn, arg): fn(arg) with RFLAGS.TF set, for the bare-trap baseline. */
    .text
ENTRY(bench_single_step)
    push %rbx
    mov %rdi, %rbx
    mov %rsi, %rdi
    pushfq
    orq $0x100, (%rsp)                  /* RFLAGS.TF */
    popfq
    call *%rbx
    pushfq
    andq $~0x100, (%rsp)
    popfq
    pop %rbx
    ret
END(bench_single_step)
