/* The UBSan kernel's runtime (kernel/ubsan.c, make ubsan): an operation of each kind the tests
 * plant is reported with its check, file, line and values. The ubsan.* tests catch the report
 * themselves (their own reporter for a moment); the selftest.* ones leave it to the kernel's,
 * which must fail the running test with the report. In the ordinary kernel, which has no
 * runtime, they skip. Each site is reported once per boot (kernel/ubsan.c), so each test has
 * its own. */
#include <stdbool.h>
#include <stdint.h>

#include "kernel/string.h"
#include "tests/test.h"

#ifdef BTSX_UBSAN
#include "kernel/ubsan.h"

#define INT_MAX_  0x7fffffff
#define TABLE_LEN 4

static void ubsan_header(void (*line)(const char *fmt, ...))
{
    line("ubsan: on (%s)", BTSX_UBSAN);
}
TEST_HEADER(ubsan_header);

static const int table[TABLE_LEN] = {1, 2, 3, 4};

/* Out of line and fed through volatile variables: the compiler cannot fold the operations. */
enum { ADD_LINE = __LINE__ + 3 };
static int __attribute__((noinline)) add_ints(int a, int b)
{
    return a + b;
}

enum { INDEX_LINE = __LINE__ + 3 };
static int __attribute__((noinline)) table_at(unsigned i)
{
    return table[i];
}

static char caught[UBSAN_REPORT_MAX];
static unsigned ncaught;

/* Keeps the first report: an operation may fail more than one check (an index past an array
 * is out of its bounds and past the object too). */
static void catch_report(const char *text, bool fatal)
{
    (void)fatal;
    if (ncaught++ == 0)
        strlcpy(caught, text, sizeof(caught));
}

static bool contains(const char *s, const char *word)
{
    size_t n = strlen(word);
    for (; *s; s++)
        if (!strncmp(s, word, n))
            return true;
    return false;
}

/* The kernel's reporter while a test has its own; put back after every test, however it ended. */
static void (*kernel_reporter)(const char *, bool);

static void restore_reporter(void)
{
    if (kernel_reporter)
        ubsan_report_hook = kernel_reporter;
    kernel_reporter = NULL;
}
TEST_CLEANUP(restore_reporter);

/* Runs op(a, b) with catch_report as the reporter, and checks its first report against the
 * site's line and what it must say. */
static void expect_report(int (*op)(int, int), int a, int b, unsigned line, const char *check,
                          const char *says)
{
    ncaught = 0;
    caught[0] = '\0';
    kernel_reporter = ubsan_report_hook;
    ubsan_report_hook = catch_report;
    (void)op(a, b);
    restore_reporter();
    test_info("%s", caught);
    char where[48];
    ksnprintf(where, sizeof(where), "ubsan: tests/t_ubsan.c:%u:", line);
    CHECK(ncaught >= 1, "no report");
    CHECK(contains(caught, where) && contains(caught, check) && contains(caught, says),
          "the report does not say '%s', '%s' and '%s': '%s'", where, check, says, caught);
}

static int add_op(int a, int b)
{
    volatile int va = a, vb = b;
    return add_ints(va, vb);
}

static int index_op(int a, int b)
{
    (void)b;
    volatile unsigned i = (unsigned)a;
    return table_at(i);
}

TEST(ubsan, signed_overflow, "INT_MAX + 1 is reported with its site and values", 0)
{
    expect_report(add_op, INT_MAX_, 1, ADD_LINE, "signed-integer-overflow",
                  "2147483647 + 1 does not fit 'int'");
}

TEST(ubsan, bounds, "an index past an array's end is reported with its site and value", 0)
{
    expect_report(index_op, TABLE_LEN, 0, INDEX_LINE, "bounds", "index 4 out of range");
}

/* selftest=1: the same kinds with the kernel's reporter, each at a site of its own. Each must
 * fail with the report as its reason (file:line) and the run go on. */
TEST_FLAGS(selftest, ubsan_overflow, "a signed overflow (must fail, reported)", 0,
           TEST_FLAG_SELFTEST)
{
    volatile int a = INT_MAX_, b = 1;
    volatile int sum = a + b;
    (void)sum;
}

TEST_FLAGS(selftest, ubsan_bounds, "an index past an array's end (must fail, reported)", 0,
           TEST_FLAG_SELFTEST)
{
    volatile unsigned i = TABLE_LEN;
    volatile int v = table[i];
    (void)v;
}

#else /* the ordinary kernel: no runtime */

#define NO_UBSAN "not the UBSan kernel (make ubsan builds it)"

TEST(ubsan, signed_overflow, "INT_MAX + 1 is reported with its site and values", 0)
{
    test_skip(NO_UBSAN);
}

TEST(ubsan, bounds, "an index past an array's end is reported with its site and value", 0)
{
    test_skip(NO_UBSAN);
}

TEST_FLAGS(selftest, ubsan_overflow, "a signed overflow (must fail, reported)", 0,
           TEST_FLAG_SELFTEST)
{
    test_skip(NO_UBSAN);
}

TEST_FLAGS(selftest, ubsan_bounds, "an index past an array's end (must fail, reported)", 0,
           TEST_FLAG_SELFTEST)
{
    test_skip(NO_UBSAN);
}

#endif
