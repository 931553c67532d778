/* Helpers for tests that run the user programs of tests/user_code.S. */
#ifndef BTSX_TESTS_USERTEST_H
#define BTSX_TESTS_USERTEST_H

#include <stdint.h>

#include "ds/bts.h"
#include "sched/sched.h"
#include "tests/btscheck.h"

/* A program is the bytes between its _start and _end labels. */
#define USER_PROG(p)    p##_start, (uint64_t)(p##_end - p##_start)
/* Where a label of program p lives in the task's address space. */
#define UADDR(p, label) (USER_CODE_VA + (uint64_t)(label - p##_start))

extern const char uc_iso_start[], uc_iso_end[], uc_iso_loop[], uc_iso_ijmp[], uc_iso_chain_end[],
    uc_iso_after_yield[], uc_iso_jnz[];
extern const char uc_sys_start[], uc_sys_end[], uc_sys_j1[], uc_sys_t1[], uc_sys_call[],
    uc_sys_after[], uc_sys_j2[], uc_sys_t2[], uc_sys_int[], uc_sys_int_back[];
extern const char uc_bad_start[], uc_bad_end[];
extern const char uc_hello_start[], uc_hello_end[];
extern const char uc_read_start[], uc_read_end[], uc_read_insn[];
extern const char uc_write_start[], uc_write_end[], uc_write_insn[];
extern const char uc_exec_start[], uc_exec_end[];
extern const char uc_crash_start[], uc_crash_end[], uc_crash_call_a[], uc_crash_a[],
    uc_crash_call_b[], uc_crash_b[], uc_crash_call_c[], uc_crash_c[], uc_crash_load[];
extern const char uc_step_start[], uc_step_end[];
extern const char uc_systf_start[], uc_systf_end[], uc_systf_syscall[];
extern const char uc_nmi_wait_start[], uc_nmi_wait_end[];
extern const char uc_spin_start[], uc_spin_end[], uc_spin_top[], uc_spin_jnz[];
extern const char uc_fuzz_start[], uc_fuzz_end[], uc_fuzz_loop[], uc_fuzz_call[], uc_fuzz_jmp[];

/* Creates a user task from a program, failing the test if that fails. */
struct task *user_task(const char *name, const char *start, uint64_t len, uint64_t arg,
                       uint64_t arg2);

/* The records of uc_iso(k, rounds) with only user-mode transfers recorded. */
void iso_expect(struct expect *e, uint64_t k, unsigned rounds);
bool user_addr(uint64_t a);
/* A kernel-to-user return: the kernel's IRETQs and SYSRETQ into user code. */
bool kernel_to_user_return(const struct bts_record *r);
/* Keeps the records of r that start in user code unless the profile promises the
 * kernel-to-user returns; check: r is a trace, whose left-out records must be such returns. */
size_t user_sourced(struct bts_record *r, size_t n, bool check);
/* Compares n records of a user-only (BTS_CPL_USER) trace with e, leaving out the
 * kernel-to-user returns the profile lets hardware record or not (both lists are edited). */
bool match_user(struct bts_record *got, int64_t n, struct expect *e);

#endif
