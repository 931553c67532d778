/*
 * The user program of smp.user_gs (tests/t_smp.c): a user task's GS base is its own (0), not
 * the kernel's per-CPU pointer (kernel/percpu.h). It reads through GS once as it starts and
 * once after a system call; either read faulting at CR2 = 0 is right, and the test starts it
 * twice to check each: RDI = 0 reads at once, RDI = 1 yields first.
 */
#include "boot/asm.h"
#include "sched/syscall.h"

#define L(name) LABEL(name)

    .section .rodata.user, "a"
DATA(uc_gs_start)
    test %rdi, %rdi
    jz 1f
    mov $SYS_YIELD, %eax
    syscall
1:
L(uc_gs_load)
    mov %gs:0, %rax
    xor %edi, %edi
    mov $SYS_EXIT, %eax
    syscall
    ud2
L(uc_gs_end)
END(uc_gs_start)
