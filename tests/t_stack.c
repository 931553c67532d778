/* The stack protector (-fstack-protector-strong, kernel/stackprot.c): the canary chosen at
 * boot, and a function that overwrites its own canary is reported by name and ends only the
 * code running under the innermost recovery point. */
#include <stdbool.h>

#include "kernel/recover.h"
#include "kernel/stackprot.h"
#include "kernel/string.h"
#include "tests/test.h"

#define SMASH_BYTE 0x41

static void stack_header(void (*line)(const char *fmt, ...))
{
    line("stack protector: strong, canary from %s", stackprot_source_name(stackprot_source()));
}
TEST_HEADER(stack_header);

/* Writes over [from, to): out of line, so the compiler cannot see the overflow coming. */
static void __attribute__((noinline)) fill(volatile char *from, volatile char *to)
{
    while (from < to)
        *from++ = SMASH_BYTE;
}

/* An array makes the function protected; the fill runs from the array up to the saved frame
 * pointer: over the canary (placed between the locals and the saved registers) and nothing
 * of the caller's. */
static void __attribute__((noinline)) stack_smasher(void *arg)
{
    volatile char buf[32];
    buf[0] = 0;
    fill(buf, (volatile char *)__builtin_frame_address(0));
    (void)arg;
}

/* The same function shape without the overflow: its check passes. */
static void __attribute__((noinline)) stack_keeper(void *arg)
{
    volatile char buf[32];
    fill(buf, buf + sizeof(buf));
    (void)arg;
}

TEST(stack, canary, "the canary is set at boot and is not zero in its low bytes' place", 0)
{
    CHECK(__stack_chk_guard != 0, "the canary is still zero");
    CHECK((__stack_chk_guard & 0xff) == 0, "the canary's low byte is %#lx, not zero",
          __stack_chk_guard & 0xff);
    CHECK((__stack_chk_guard >> 8) != 0, "the canary's upper bytes are zero");
}

TEST(stack, smash, "a function that overwrites its own canary is reported and contained", 0)
{
    struct recovery r = {.report = false};
    CHECK_EQ(recover_run(&r, stack_keeper, NULL), RECOVER_NONE);
    enum recover_reason why = recover_run(&r, stack_smasher, NULL);
    if (why == RECOVER_TIMEOUT)
        recover_propagate(why);
    CHECK_EQ(why, RECOVER_ABORT);
    if (why != RECOVER_ABORT)
        return;
    test_info("%s", r.why);
    CHECK(strstr(r.why, "stack protector") && strstr(r.why, "stack_smasher"),
          "the report does not name the protector and the function: '%s'", r.why);
}

/* selftest=1: the same overflow with no recovery point of its own. The framework's must
 * contain it as this test's failure, with the report as its reason, and run the next test. */
TEST_FLAGS(selftest, stack_smash, "overwrites its own canary (must fail, reported)", 0,
           TEST_FLAG_SELFTEST)
{
    stack_smasher(NULL);
}
