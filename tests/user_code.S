/*
 * User-mode programs for the scheduler suites. Each is position-independent and copied to
 * USER_CODE_VA by task_create_user(); a label's user address is USER_CODE_VA plus its offset
 * from the program's start, which is how tests/t_sched.c builds expectations.
 */
#include "boot/asm.h"
#include "kernel/msr-index.h"
#include "kernel/trap.h"
#include "sched/syscall.h"

#define L(name) LABEL(name)
#define SYSCALL(nr) mov $(nr), %eax; syscall

    .section .rodata.user, "a"

/* Isolation and stress: RDI = k (1..CHAIN), RSI = rounds. Each round jumps into a chain of
 * two-byte jumps so that exactly k of them run, then yields; finally exits with status k. */
#define UC_CHAIN 8
DATA(uc_iso_start)
    mov %rdi, %rbx
    mov %rsi, %r12
L(uc_iso_loop)
    lea uc_iso_chain_end(%rip), %rax
    mov %rbx, %rcx
    shl $1, %rcx
    sub %rcx, %rax
L(uc_iso_ijmp)
    jmp *%rax
L(uc_iso_chain)
    .rept UC_CHAIN
    .byte 0xEB, 0x00
    .endr
L(uc_iso_chain_end)
L(uc_iso_yield)
    SYSCALL(SYS_YIELD)
L(uc_iso_after_yield)
    dec %r12
L(uc_iso_jnz)
    jnz uc_iso_loop
    mov %rbx, %rdi
    SYSCALL(SYS_EXIT)
    ud2
L(uc_iso_end)
END(uc_iso_start)

/* A greeting on the console, exit(0). */
DATA(uc_hello_start)
    lea uc_hello_msg(%rip), %rdi
    mov $uc_hello_msg_len, %esi
    SYSCALL(SYS_WRITE)
    xor %edi, %edi
    SYSCALL(SYS_EXIT)
    ud2
uc_hello_msg:
    .ascii "hello from CPL 3"
    uc_hello_msg_len = . - uc_hello_msg
L(uc_hello_end)
END(uc_hello_start)

/* db.syscall_tf: exit(0) by a SYSCALL that starts with TF set by the POPFQ before it.
 * IA32_FMASK clears TF, so no single step follows it on hardware. RSP stays at the top of
 * the stack page; only the PUSHFQ writes below it (one word). */
DATA(uc_systf_start)
    xor %edi, %edi
    mov $SYS_EXIT, %eax
    pushfq
    orq $RFLAGS_TF, (%rsp)
    popfq
L(uc_systf_syscall)
    syscall
    ud2
L(uc_systf_end)
END(uc_systf_start)

/* db.switch_in_user_handler: exit(n + (n-1) + ... + 1), RDI = n, computed with TF set
 * (the loop of db_step_loop in tests/db_code.S, at CPL 3). */
DATA(uc_step_start)
    mov %rdi, %rcx
    xor %eax, %eax
    pushfq
    orq $RFLAGS_TF, (%rsp)
    popfq
1:  add %rcx, %rax
    dec %rcx
    jnz 1b
    pushfq
    andq $~RFLAGS_TF, (%rsp)
    popfq
    mov %rax, %rdi
    SYSCALL(SYS_EXIT)
    ud2
L(uc_step_end)
END(uc_step_start)

/* CPL filter and SYSCALL/SYSRET records: a jump, a system call with a short kernel path
 * (the count of its own trace), a jump, an int n whose handler returns at once (the test
 * installs it: the IRETQ back is a kernel-to-user return), exit(0). */
DATA(uc_sys_start)
L(uc_sys_j1)
    jmp uc_sys_t1
    ud2
L(uc_sys_t1)
    mov $TRACE_OP_COUNT, %edi
    mov $SYS_TRACE, %eax
L(uc_sys_call)
    syscall
L(uc_sys_after)
L(uc_sys_j2)
    jmp uc_sys_t2
    ud2
L(uc_sys_t2)
L(uc_sys_int)
    int $VEC_TEST_SOFTINT
L(uc_sys_int_back)
    xor %edi, %edi
    SYSCALL(SYS_EXIT)
    ud2
L(uc_sys_end)
END(uc_sys_start)

/* Bad system calls: each result is stored at USER_DATA_VA + 8 * i, then exit(0). RDI = the
 * data page. An unknown number, a kernel pointer, an unmapped pointer, a too-long write. */
DATA(uc_bad_start)
    mov %rdi, %rbx
    SYSCALL(SYS_COUNT + 7)
    mov %rax, 0(%rbx)
    mov $0x100000, %rdi                 /* kernel text */
    mov $4, %esi
    SYSCALL(SYS_WRITE)
    mov %rax, 8(%rbx)
    mov $0x7000000000, %rdi             /* user half, unmapped */
    mov $4, %esi
    SYSCALL(SYS_WRITE)
    mov %rax, 16(%rbx)
    mov %rbx, %rdi
    mov $100000, %esi
    SYSCALL(SYS_WRITE)
    mov %rax, 24(%rbx)
    mov $99, %edi
    SYSCALL(SYS_TRACE)                  /* no trace: E_STATE */
    mov %rax, 32(%rbx)
    xor %edi, %edi
    SYSCALL(SYS_EXIT)
    ud2
L(uc_bad_end)
END(uc_bad_start)

/* Protection: RDI = an address to read (kernel memory, another task's page, a trace buffer). */
DATA(uc_read_start)
L(uc_read_insn)
    mov (%rdi), %rax
    xor %edi, %edi
    SYSCALL(SYS_EXIT)
    ud2
L(uc_read_end)
END(uc_read_start)

/* Protection: RDI = an address to write. */
DATA(uc_write_start)
L(uc_write_insn)
    movq $1, (%rdi)
    xor %edi, %edi
    SYSCALL(SYS_EXIT)
    ud2
L(uc_write_end)
END(uc_write_start)

/* Protection: execute its own (no-execute) data page: RDI = the data page. */
DATA(uc_exec_start)
    movb $0xC3, (%rdi)                  /* a RET, so that only NX can stop it */
L(uc_exec_call)
    call *%rdi
    xor %edi, %edi
    SYSCALL(SYS_EXIT)
    ud2
L(uc_exec_end)
END(uc_exec_start)

/* Crash: a known call chain a -> b -> c, then a load through RDI (a bad pointer). */
DATA(uc_crash_start)
L(uc_crash_call_a)
    call uc_crash_a
    ud2
L(uc_crash_a)
L(uc_crash_call_b)
    call uc_crash_b
    ud2
L(uc_crash_b)
L(uc_crash_call_c)
    call uc_crash_c
    ud2
L(uc_crash_c)
L(uc_crash_load)
    mov (%rdi), %rax
    ud2
L(uc_crash_end)
END(uc_crash_start)

/* nmi.from_user: spins until the quadword at RSI turns non-zero (the kernel writes it when
 * the NMI came) or RDI rounds have passed, then exit(0). */
DATA(uc_nmi_wait_start)
    cmpq $0, (%rsi)
    jne 1f
    dec %rdi
    jnz uc_nmi_wait_start
1:  xor %edi, %edi
    SYSCALL(SYS_EXIT)
    ud2
L(uc_nmi_wait_end)
END(uc_nmi_wait_start)

/* Stream: RDI iterations of a two-instruction loop (RDI - 1 taken JNZs), then exit(0). */
DATA(uc_spin_start)
L(uc_spin_top)
    dec %rdi
L(uc_spin_jnz)
    jnz uc_spin_top
    xor %edi, %edi
    SYSCALL(SYS_EXIT)
    ud2
L(uc_spin_end)
END(uc_spin_start)

/* sys.fuzz: RDI = a call block (struct fuzz_block in tests/t_sysfuzz.c: the number, six
 * arguments, the result, a count of calls made). Makes the call the block holds with every
 * argument register loaded, stores the result, counts the call, yields to the runner (which
 * writes the next call) and starts again; it ends only by a fuzzed SYS_EXIT or the runner. */
DATA(uc_fuzz_start)
    mov %rdi, %rbx
L(uc_fuzz_loop)
    mov 0(%rbx), %rax
    mov 8(%rbx), %rdi
    mov 16(%rbx), %rsi
    mov 24(%rbx), %rdx
    mov 32(%rbx), %r10
    mov 40(%rbx), %r8
    mov 48(%rbx), %r9
L(uc_fuzz_call)
    syscall
    mov %rax, 56(%rbx)
    incq 64(%rbx)
    SYSCALL(SYS_YIELD)
L(uc_fuzz_jmp)
    jmp uc_fuzz_loop
L(uc_fuzz_end)
END(uc_fuzz_start)
