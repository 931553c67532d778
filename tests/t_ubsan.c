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
    CHECK(strstr(caught, where) && strstr(caught, check) && strstr(caught, says),
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

/* One operation per kind that the runtime describes its own way, each a function of its own
 * (site and line): the line is where UB_OP() is written. */
#define UB_OP(name, ...)                                                                           \
    enum { name##_line = __LINE__ };                                                               \
    static int __attribute__((noinline)) name##_raw(int a, int b)                                  \
    {                                                                                              \
        return (__VA_ARGS__);                                                                      \
    }                                                                                              \
    static int name(int a, int b)                                                                  \
    {                                                                                              \
        volatile int va = a, vb = b;                                                               \
        return name##_raw(va, vb);                                                                 \
    }

/* Not volatile: clang checks no volatile access for alignment or null (a volatile access may be
 * meant to touch what it touches). */
static char misaligned_buf[16] __attribute__((aligned(8)));
static volatile uint8_t not_a_bool = 2;
static char *volatile ptr_sink;

/* A pointer n bytes below the top of the address space, out of the compiler's sight (it would
 * turn arithmetic on a pointer it made from an integer into integer arithmetic). */
static char *__attribute__((noinline)) top_pointer(int n)
{
    return (char *)(uintptr_t)(-(int64_t)n);
}

UB_OP(sub_op, a - b)
UB_OP(mul_op, (a) * (b))
UB_OP(shift_op, a << b)
UB_OP(clz_op, (void)b, __builtin_clz((unsigned)a))
UB_OP(align_op, *(int *)(misaligned_buf + a + b))
UB_OP(bool_op, (void)a, (void)b, *(volatile bool *)&not_a_bool)
UB_OP(ptr_op, (ptr_sink = top_pointer(a) + b) != NULL)

struct ub_kind {
    int (*op)(int, int);
    int a, b;
    unsigned line;
    const char *check, *says;
};

TEST(ubsan, kinds, "each kind of report names its check and values", 0)
{
    const struct ub_kind kinds[] = {
        {sub_op, -INT_MAX_ - 1, 1, sub_op_line, "signed-integer-overflow",
         "-2147483648 - 1 does not fit 'int'"},
        {mul_op, 65536, 65536, mul_op_line, "signed-integer-overflow",
         "65536 * 65536 does not fit 'int'"},
        {shift_op, 1, 40, shift_op_line, "shift", "shift of 1 by 40: as wide as 'int' or wider"},
        {clz_op, 0, 0, clz_op_line, "builtin", "__builtin_clz() of zero"},
        {align_op, 1, 0, align_op_line, "alignment", "int' at 0x"},
        {bool_op, 0, 0, bool_op_line, "bool/enum", "load of 2, not a value of"},
        {ptr_op, 16, 32, ptr_op_line, "pointer-overflow",
         "pointer 0xfffffffffffffff0 moved to 0x10"},
    };
    for (unsigned i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        const struct ub_kind *k = &kinds[i];
        expect_report(k->op, k->a, k->b, k->line, k->check, k->says);
    }
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

TEST(ubsan, kinds, "each kind of report names its check and values", 0)
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
