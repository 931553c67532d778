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
