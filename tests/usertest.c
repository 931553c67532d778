#include "tests/usertest.h"

#include "tests/test.h"

struct task *user_task(const char *name, const char *start, uint64_t len, uint64_t arg,
                       uint64_t arg2)
{
    struct task *t = task_create_user(name, start, len, 0, arg, arg2);
    if (!t)
        test_fail("cannot create user task %s", name);
    return t;
}

/* A test that leaves tasks behind fails, and the tasks go, so the next test starts clean. */
static void leftover_tasks(void)
{
    unsigned n = sched_kill_others();
    if (n)
        test_fail("%u task(s) left running or unjoined after the test", n);
}
TEST_CLEANUP(leftover_tasks);
