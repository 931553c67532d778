#include "tests/usertest.h"

#include "ds/bts.h"
#include "kernel/trap.h"
#include "kernel/user.h"
#include "sched/syscall.h"
#include "tests/test.h"

struct task *user_task(const char *name, const char *start, uint64_t len, uint64_t arg,
                       uint64_t arg2)
{
    struct task *t = task_create_user(name, start, len, 0, arg, arg2);
    if (!t)
        test_fail("cannot create user task %s", name);
    return t;
}

/* The records of uc_iso(k, rounds) with only user-mode transfers recorded. */
void iso_expect(struct expect *e, uint64_t k, unsigned rounds)
{
    exp_add(e, LBL(user_enter_iretq), UADDR(uc_iso, uc_iso_start));
    uint64_t end = UADDR(uc_iso, uc_iso_chain_end);
    for (unsigned r = 0; r < rounds; r++) {
        exp_add(e, UADDR(uc_iso, uc_iso_ijmp), end - 2 * k);
        for (uint64_t j = k; j > 0; j--)
            exp_add(e, end - 2 * j, end - 2 * j + 2);
        exp_add(e, LBL(syscall_sysretq), UADDR(uc_iso, uc_iso_after_yield));
        if (r + 1 < rounds)
            exp_add(e, UADDR(uc_iso, uc_iso_jnz), UADDR(uc_iso, uc_iso_loop));
    }
}

bool user_addr(uint64_t a)
{
    return a >= USER_BASE && a < USER_END;
}

/* A kernel-to-user return: the kernel's IRETQs and SYSRETQ into user code. */
bool kernel_to_user_return(const struct bts_record *r)
{
    return (r->from == LBL(user_enter_iretq) || r->from == LBL(isr_iretq) ||
            r->from == LBL(syscall_sysretq)) &&
           user_addr(r->to);
}

/*
 * The kernel-to-user returns (IRETQ, SYSRETQ) may or may not be recorded when BTS_OFF_OS
 * filters CPL 0 (docs/hardware.md §6, O4): the profile says which. Unless it promises them,
 * both lists keep only the records that start in user code, and every record left out must
 * be such a return (none at all if the profile says never); under an exact profile the lists
 * must match in full. check: r is a trace (not a list of expectations) to check so.
 */
size_t user_sourced(struct bts_record *r, size_t n, bool check)
{
    enum bts_maybe m = bts_profile()->offos_user_returns;
    if (m == BTS_ALWAYS)
        return n;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (user_addr(r[i].from))
            r[k++] = r[i];
        else if (check)
            CHECK(m == BTS_EITHER && kernel_to_user_return(&r[i]),
                  "record %lu %#lx -> %#lx: not a user transfer, nor a return the profile allows",
                  i, r[i].from, r[i].to);
    }
    return k;
}

bool match_user(struct bts_record *got_, int64_t n, struct expect *e)
{
    if (n < 0)
        return false;
    e->n = user_sourced(e->rec, e->n, false);
    return exp_match(got_, user_sourced(got_, (size_t)n, true), e);
}

/* A test that leaves tasks behind fails, and the tasks go, so the next test starts clean. */
static void leftover_tasks(void)
{
    unsigned n = sched_kill_others();
    if (n)
        test_fail("%u task(s) left running or unjoined after the test", n);
}
TEST_CLEANUP(leftover_tasks);
