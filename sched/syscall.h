/*
 * System calls for user tasks: SYSCALL/SYSRET (SDM Vol. 2B). RAX = number, arguments in RDI,
 * RSI, RDX; the result (>= 0, or a negative E_* code) in RAX. A bad number or a bad pointer is
 * an error result, never a kernel fault.
 */
#ifndef BTSX_SCHED_SYSCALL_H
#define BTSX_SCHED_SYSCALL_H

/* Numbers (usable from assembly: tests/user_code.S). */
#define SYS_YIELD   0 /* () */
#define SYS_EXIT    1 /* (status) */
/* (buf, len): to the console, as KTAP diagnostics; a byte other than printable ASCII, tab and
 * newline shows as '?'. */
#define SYS_WRITE   2
#define SYS_TRACE   3 /* (op, buf, max): control of the caller's own trace */
#define SYS_MIGRATE 4 /* (cpu): yield, and run on from that CPU (task_migrate()) */
#define SYS_COUNT   5 /* the number of calls: sched/syscall.c's table has one handler each */

#define TRACE_OP_ENABLE  0
#define TRACE_OP_DISABLE 1
#define TRACE_OP_COUNT   2 /* records held */
#define TRACE_OP_DRAIN   3 /* copy up to max raw records to buf, remove them */

#define SYS_WRITE_MAX 256

#ifndef __ASSEMBLER__
#include <stdint.h>

struct syscall_frame {
    uint64_t r15, r14, r13, r12, rbp, rbx;
    uint64_t r9, r8, r10, rdx, rsi, rdi, rax;
    uint64_t rip, rflags, rsp; /* the user's RCX, R11 and RSP */
};

/* Points SYSCALL at syscall_entry (kmain, after sched_init()); the entry takes the current
 * task's kernel stack from the TSS's RSP0, which the scheduler sets for every user task. */
void syscall_init(void);
/* Labels of the entry path (the BTS records of a system call name them). */
extern const char syscall_entry[], syscall_sysretq[];
#endif

#endif
