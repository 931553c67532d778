/*
 * sched.*: the cooperative scheduler: round-robin order, exit status and join, sleep, block
 * and wake, user tasks and their system calls, and protection between tasks and the kernel.
 */
#include "kernel/apic.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/paging.h"
#include "kernel/trap.h"
#include "sched/sched.h"
#include "sched/syscall.h"
#include "tests/btscheck.h"
#include "tests/test.h"
#include "tests/usertest.h"

#define ORDER_TASKS  3
#define ORDER_ROUNDS 3
#define SLEEP_MS     20

static unsigned order_log[ORDER_TASKS * ORDER_ROUNDS], order_len;

static void order_task(void *arg)
{
    for (unsigned r = 0; r < ORDER_ROUNDS; r++) {
        order_log[order_len++] = (unsigned)(uintptr_t)arg;
        task_yield();
    }
    task_exit((int)(uintptr_t)arg + 100);
}

TEST(sched, round_robin, "tasks take turns in creation order; join returns exit status", 0)
{
    struct task *t[ORDER_TASKS];
    order_len = 0;
    for (uintptr_t i = 0; i < ORDER_TASKS; i++)
        t[i] = task_create("order", order_task, (void *)i);
    for (unsigned i = 0; i < ORDER_TASKS; i++) {
        int status = -1;
        if (!CHECK(t[i] != NULL, "task_create failed"))
            return;
        CHECK_EQ(task_join(t[i], &status), 0);
        CHECK_EQ(status, 100 + i);
    }
    CHECK_EQ(order_len, ORDER_TASKS * ORDER_ROUNDS);
    for (unsigned i = 0; i < order_len; i++)
        CHECK(order_log[i] == i % ORDER_TASKS, "turn %u went to task %u", i, order_log[i]);
}

static volatile uint64_t woke_at;
static void sleeper(void *arg)
{
    (void)arg;
    task_sleep_ms(SLEEP_MS);
    woke_at = rdtsc();
}

TEST(sched, sleep, "a task sleeps N ms on the LAPIC timer while others run", 0)
{
    woke_at = 0;
    uint64_t t0 = rdtsc();
    struct task *t = task_create("sleeper", sleeper, NULL);
    if (!CHECK(t != NULL, "task_create failed"))
        return;
    unsigned spins = 0;
    while (!woke_at && spins < 1000000) {
        task_yield(); /* the runner keeps running while the sleeper sleeps */
        spins++;
    }
    task_join(t, NULL);
    uint64_t us = tsc_to_us(woke_at - t0);
    test_info("slept %lu us, the runner yielded %u times meanwhile", us, spins);
    CHECK(woke_at != 0, "never woke");
    CHECK(us >= SLEEP_MS * 1000 * 95 / 100, "woke after %lu us, asked %u ms", us, SLEEP_MS);
    CHECK(spins > 1, "the runner did not run during the sleep");
}

static struct task *blocked_task;
static volatile int block_stage;
static void blocker(void *arg)
{
    (void)arg;
    block_stage = 1;
    task_block();
    block_stage = 2;
}

TEST(sched, block_wake, "a blocked task runs again only after task_wake", 0)
{
    block_stage = 0;
    blocked_task = task_create("blocker", blocker, NULL);
    if (!CHECK(blocked_task != NULL, "task_create failed"))
        return;
    for (int i = 0; i < 5; i++)
        task_yield();
    CHECK_EQ(block_stage, 1);
    task_wake(blocked_task);
    task_join(blocked_task, NULL);
    CHECK_EQ(block_stage, 2);
}

TEST(sched, user_task, "a user task runs at CPL 3, writes to the console, exits", 0)
{
    struct task *t = user_task("hello", USER_PROG(uc_hello), 0, 0);
    if (!t)
        return;
    int status = -1;
    task_join(t, &status);
    CHECK_EQ(status, 0);
}

TEST(sched, bad_syscalls, "bad numbers and bad pointers get error results, not faults", 0)
{
    struct task *t = user_task("uc_bad", USER_PROG(uc_bad), USER_DATA_VA, 0);
    if (!t)
        return;
    task_wait(t);
    const int64_t *res = (const int64_t *)(as_lookup(&t->as, USER_DATA_VA) & PTE_ADDR_MASK);
    CHECK(!t->faulted, "the task faulted");
    CHECK_EQ(res[0], (uint64_t)(int64_t)E_INVAL);
    CHECK_EQ(res[1], (uint64_t)(int64_t)E_FAULT);
    CHECK_EQ(res[2], (uint64_t)(int64_t)E_FAULT);
    CHECK_EQ(res[3], (uint64_t)(int64_t)E_RANGE);
    CHECK_EQ(res[4], (uint64_t)(int64_t)E_STATE);
    int status = -1;
    task_join(t, &status);
    CHECK_EQ(status, 0);
}

/* A user task that must end by a page fault at `insn`, with these error-code bits. */
static void expect_user_fault(const char *what, struct task *t, uint64_t insn, unsigned err_bits)
{
    if (!t)
        return;
    task_wait(t);
    if (CHECK(t->faulted, "%s: no fault", what)) {
        CHECK(t->fault.vector == VEC_PF && t->fault.user, "%s: vector %u user %d", what,
              t->fault.vector, t->fault.user);
        CHECK((t->fault.error_code & err_bits) == err_bits, "%s: error code %#lx", what,
              t->fault.error_code);
        CHECK(t->fault.rip == insn, "%s: fault at %#lx, expected %#lx", what, t->fault.rip, insn);
    }
    int status = 0;
    task_join(t, &status);
    CHECK(status == E_FAULT, "%s: exit status %d", what, status);
}

TEST(sched, protection, "user tasks cannot touch the kernel, other tasks or trace buffers", 0)
{
    /* Another task's page, by its only other address: the kernel's identity map. */
    struct task *other = user_task("other", USER_PROG(uc_iso), 1, 1);
    if (!other)
        return;
    uint64_t other_page = as_lookup(&other->as, USER_DATA_VA) & PTE_ADDR_MASK;
    struct bts_trace tr = {0};
    struct bts_config cfg = cfg_circular(64, BTS_CPL_USER);
    int err = bts_configure(&tr, &cfg);
    CHECK(err == 0, "trace: %s", err_name(err));

    expect_user_fault("read kernel text", user_task("rd", USER_PROG(uc_read), 0x100000, 0),
                      UADDR(uc_read, uc_read_insn), PF_ERR_P | PF_ERR_U);
    expect_user_fault("write another task's page",
                      user_task("wr", USER_PROG(uc_write), other_page, 0),
                      UADDR(uc_write, uc_write_insn), PF_ERR_P | PF_ERR_U | PF_ERR_W);
    if (err == 0)
        expect_user_fault("read a trace buffer",
                          user_task("rdtr", USER_PROG(uc_read), (uint64_t)tr.buf, 0),
                          UADDR(uc_read, uc_read_insn), PF_ERR_P | PF_ERR_U);
    if (cpu_has_nx())
        expect_user_fault("execute own data", user_task("ex", USER_PROG(uc_exec), USER_DATA_VA, 0),
                          USER_DATA_VA, PF_ERR_P | PF_ERR_U | PF_ERR_I);
    else
        test_diag("no NX: executing data cannot fault on this CPU");
    task_join(other, NULL);
    bts_release(&tr);
}
