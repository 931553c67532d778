/* Host tests of kernel/printf.c: a cross-product of flags x width x precision x conversion x
 * length x value compared against the host's snprintf, plus hand-checked cases for the
 * deliberate differences (%p, NULL %s), truncation and error returns. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define UNIT_TIMEOUT_S 60

#include "kernel/errno.h"
#include "kernel/printf.h"

#define OUT_MAX             512
#define MISMATCH_REPORT_MAX 20

static unsigned long cases, mismatches;

/* Compares a ksnprintf result with the host's, including any embedded NUL from %c. */
static void record(const char *what, const char *exp, int re, const char *got, int rg)
{
    size_t n;

    cases++;
    if (re < 0 || re >= OUT_MAX)
        fail_msg("reference output too long for '%s'", what);
    n = (size_t)re + 1;
    if (re == rg && memcmp(exp, got, n) == 0)
        return;
    if (++mismatches <= MISMATCH_REPORT_MAX)
        print_error("MISMATCH %s: host %d [%s] ours %d [%s]\n", what, re, exp, rg, got);
}

/* Calls snprintf and ksnprintf with the same (non-literal) format and arguments. */
#define SAME(fmt, ...)                                                                             \
    do {                                                                                           \
        char e_[OUT_MAX], g_[OUT_MAX];                                                             \
        int re_ = snprintf(e_, sizeof(e_), fmt, __VA_ARGS__);                                      \
        int rg_ = ksnprintf(g_, sizeof(g_), fmt, __VA_ARGS__);                                     \
        record(fmt, e_, re_, g_, rg_);                                                             \
    } while (0)

/* Passes the '*' arguments the format asks for, then the value. */
#define SAME_STARS(fmt, wstar, pstar, w, p, val)                                                   \
    do {                                                                                           \
        if ((wstar) && (pstar))                                                                    \
            SAME(fmt, w, p, val);                                                                  \
        else if (wstar)                                                                            \
            SAME(fmt, w, val);                                                                     \
        else if (pstar)                                                                            \
            SAME(fmt, p, val);                                                                     \
        else                                                                                       \
            SAME(fmt, val);                                                                        \
    } while (0)

static const char *const int_flags[] = {
    "", "-", "0", "+", " ", "#", "-0", "+0", " 0", "-+", "- ", "+ ", "#0", "#-", "-#0+ ", "0#+",
};
static const char *const widths[] = {"", "1", "3", "8", "20", "*"};
static const int star_widths[] = {0, 5, -7, 22};
static const char *const precisions[] = {"", ".", ".0", ".1", ".2", ".5", ".25", ".*"};
static const int star_precs[] = {-1, 0, 3, 12};
static const char *const lengths[] = {"", "hh", "h", "l", "ll", "z", "t", "j"};
static const char int_convs[] = "diuxXo";
static const long long int_values[] = {
    0,         1,         -1,       7,     8,       9,       10,       15,
    16,        42,        127,      -128,  255,     256,     300,      -300,
    32767,     -32768,    65535,    65536, INT_MAX, INT_MIN, UINT_MAX, 0x123456789abcdef0ll,
    LLONG_MAX, LLONG_MIN, -1234567,
};

/* For formats the compiler's printf checking rejects on purpose (flags C ignores, NULL %s,
 * oversized widths): no format attribute, so the call reaches ksnprintf unchecked. */
static int unchecked(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    int r;

    va_start(ap, fmt);
    r = kvsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return r;
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* One integer case with the argument type C requires for this length modifier. */
static void int_case(const char *fmt, char conv, const char *len, bool wstar, bool pstar, int w,
                     int p, long long v)
{
    bool sgn = conv == 'd' || conv == 'i';

    if (!strcmp(len, "") || !strcmp(len, "hh") || !strcmp(len, "h")) {
        if (sgn)
            SAME_STARS(fmt, wstar, pstar, w, p, (int)v);
        else
            SAME_STARS(fmt, wstar, pstar, w, p, (unsigned)v);
    } else if (!strcmp(len, "l")) {
        if (sgn)
            SAME_STARS(fmt, wstar, pstar, w, p, (long)v);
        else
            SAME_STARS(fmt, wstar, pstar, w, p, (unsigned long)v);
    } else if (!strcmp(len, "ll")) {
        if (sgn)
            SAME_STARS(fmt, wstar, pstar, w, p, v);
        else
            SAME_STARS(fmt, wstar, pstar, w, p, (unsigned long long)v);
    } else if (!strcmp(len, "z") || !strcmp(len, "t")) {
        if (sgn)
            SAME_STARS(fmt, wstar, pstar, w, p, (ptrdiff_t)v);
        else
            SAME_STARS(fmt, wstar, pstar, w, p, (size_t)v);
    } else {
        if (sgn)
            SAME_STARS(fmt, wstar, pstar, w, p, (intmax_t)v);
        else
            SAME_STARS(fmt, wstar, pstar, w, p, (uintmax_t)v);
    }
}

/* Iterates the star values only for the positions that are '*'. */
#define FOR_STARS(wstar, pstar, w, p)                                                              \
    for (size_t wi_ = 0; wi_ < ((wstar) ? NELEM(star_widths) : 1); wi_++)                          \
        for (size_t pi_ = 0; pi_ < ((pstar) ? NELEM(star_precs) : 1); pi_++)                       \
            for (int w = star_widths[wi_], p = star_precs[pi_], once_ = 1; once_; once_ = 0)

static void test_integers_vs_host(void **state)
{
    (void)state;
    cases = mismatches = 0;
    for (const char *c = int_convs; *c; c++)
        for (size_t fi = 0; fi < NELEM(int_flags); fi++) {
            /* C leaves '#' undefined for d, i and u: only the defined combinations. */
            if (strchr(int_flags[fi], '#') && (*c == 'd' || *c == 'i' || *c == 'u'))
                continue;
            for (size_t wi = 0; wi < NELEM(widths); wi++)
                for (size_t pi = 0; pi < NELEM(precisions); pi++)
                    for (size_t li = 0; li < NELEM(lengths); li++) {
                        char fmt[64];
                        bool ws = strchr(widths[wi], '*') != NULL;
                        bool ps = strchr(precisions[pi], '*') != NULL;

                        snprintf(fmt, sizeof(fmt), "<%%%s%s%s%s%c>", int_flags[fi], widths[wi],
                                 precisions[pi], lengths[li], *c);
                        FOR_STARS(ws, ps, w, p)
                        for (size_t vi = 0; vi < NELEM(int_values); vi++)
                            int_case(fmt, *c, lengths[li], ws, ps, w, p, int_values[vi]);
                    }
        }
    print_message("integer cases compared with host snprintf: %lu\n", cases);
    assert_true(cases > 100000);
    assert_int_equal(mismatches, 0);
}

static void test_text_vs_host(void **state)
{
    static const char *const text_flags[] = {"", "-"};
    static const char *const strings[] = {
        "", "a", "hello", "hello, world!", "a string longer than twenty-five characters",
    };
    static const int chars[] = {'a', ' ', '~', '%', 0};

    (void)state;
    cases = mismatches = 0;
    for (size_t fi = 0; fi < NELEM(text_flags); fi++)
        for (size_t wi = 0; wi < NELEM(widths); wi++) {
            bool ws = strchr(widths[wi], '*') != NULL;
            for (size_t pi = 0; pi < NELEM(precisions); pi++) {
                char fmt[64];
                bool ps = strchr(precisions[pi], '*') != NULL;

                snprintf(fmt, sizeof(fmt), "[%%%s%s%ss]", text_flags[fi], widths[wi],
                         precisions[pi]);
                FOR_STARS(ws, ps, w, p)
                for (size_t si = 0; si < NELEM(strings); si++)
                    SAME_STARS(fmt, ws, ps, w, p, strings[si]);
            }
            /* %c: C defines no precision for it. */
            char fmt[64];
            snprintf(fmt, sizeof(fmt), "[%%%s%sc]", text_flags[fi], widths[wi]);
            FOR_STARS(ws, false, w, p)
            for (size_t ci = 0; ci < NELEM(chars); ci++)
                SAME_STARS(fmt, ws, false, w, p, chars[ci]);
        }
    SAME("%s%%%s", "100", "!");
    SAME("%% %d%%", 5);
    SAME("%c%c%c", 'a', 'b', 'c');
    SAME("mixed %d %s %x %c %lu %5.2s|", -3, "str", 255u, 'z', 123456789ul, "abc");
    print_message("text cases compared with host snprintf: %lu\n", cases);
    assert_int_equal(mismatches, 0);
}

/* ksnprintf into a buffer of every size must match the prefix of the full output. */
static void test_truncation(void **state)
{
    char full[OUT_MAX], buf[OUT_MAX];
    int n = snprintf(full, sizeof(full), "%s=%08x %-6d|", "value", 0xbeefu, -42);

    (void)state;
    for (size_t size = 1; size <= (size_t)n + 2; size++) {
        memset(buf, 'Z', sizeof(buf));
        assert_int_equal(ksnprintf(buf, size, "%s=%08x %-6d|", "value", 0xbeefu, -42), n);
        assert_int_equal(strlen(buf), size - 1 < (size_t)n ? size - 1 : (size_t)n);
        assert_memory_equal(buf, full, strlen(buf));
        /* Nothing past the terminator is touched. */
        assert_int_equal(buf[size], 'Z');
    }
    /* size 0: nothing written, buf may be NULL, length still reported. */
    assert_int_equal(ksnprintf(NULL, 0, "%d apples", 12345), 12);
    memset(buf, 'Z', sizeof(buf));
    assert_int_equal(ksnprintf(buf, 0, "abc"), 3);
    assert_int_equal(buf[0], 'Z');
}

static void test_pointer(void **state)
{
    char buf[64];

    (void)state;
    assert_int_equal(ksnprintf(buf, sizeof(buf), "%p", (void *)0), 18);
    assert_string_equal(buf, "0x0000000000000000");
    ksnprintf(buf, sizeof(buf), "%p", (void *)0xdeadbeefUL);
    assert_string_equal(buf, "0x00000000deadbeef");
    ksnprintf(buf, sizeof(buf), "%p", (void *)UINTPTR_MAX);
    assert_string_equal(buf, "0xffffffffffffffff");
    ksnprintf(buf, sizeof(buf), "[%20p]", (void *)0x1000);
    assert_string_equal(buf, "[  0x0000000000001000]");
    ksnprintf(buf, sizeof(buf), "[%-20p]", (void *)0x1000);
    assert_string_equal(buf, "[0x0000000000001000  ]");
    ksnprintf(buf, sizeof(buf), "[%5p]", (void *)0x1);
    assert_string_equal(buf, "[0x0000000000000001]");
}

static void test_null_string(void **state)
{
    char buf[64];
    const char *null = NULL;

    (void)state;
    assert_int_equal(unchecked(buf, sizeof(buf), "%s", null), 6);
    assert_string_equal(buf, "(null)");
    unchecked(buf, sizeof(buf), "[%8s]", null);
    assert_string_equal(buf, "[  (null)]");
    unchecked(buf, sizeof(buf), "[%-8s]", null);
    assert_string_equal(buf, "[(null)  ]");
    /* Deliberately unlike glibc: the precision cuts "(null)" like any other string. */
    unchecked(buf, sizeof(buf), "[%.3s]", null);
    assert_string_equal(buf, "[(nu]");
}

static void test_hand_checked(void **state)
{
    char buf[128];
    const char unterminated[3] = {'a', 'b', 'c'};

    (void)state;
    ksnprintf(buf, sizeof(buf), "%d|%i|%u|%x|%X|%o", -42, 42, 42u, 0xabcu, 0xabcu, 8u);
    assert_string_equal(buf, "-42|42|42|abc|ABC|10");
    ksnprintf(buf, sizeof(buf), "%lld|%llu", LLONG_MIN, ULLONG_MAX);
    assert_string_equal(buf, "-9223372036854775808|18446744073709551615");
    ksnprintf(buf, sizeof(buf), "%jd|%zu|%td", INTMAX_MIN, SIZE_MAX, (ptrdiff_t)-5);
    assert_string_equal(buf, "-9223372036854775808|18446744073709551615|-5");
    /* int arguments on purpose: C converts them to (unsigned) char/short. */
    unchecked(buf, sizeof(buf), "%hhd|%hhu|%hd|%hu", 300, -1, 70000, -1);
    assert_string_equal(buf, "44|255|4464|65535");
    ksnprintf(buf, sizeof(buf), "%#x|%#X|%#o|%#o|%#x|%#.0o", 255u, 255u, 8u, 0u, 0u, 0u);
    assert_string_equal(buf, "0xff|0XFF|010|0|0|0");
    unchecked(buf, sizeof(buf), "[%+d][% d][%+ d][%05d][%-5d][%.3d][%08.3d]", 5, 5, 5, -5, -5, 7,
              7);
    assert_string_equal(buf, "[+5][ 5][+5][-0005][-5   ][007][     007]");
    ksnprintf(buf, sizeof(buf), "[%.0d][%5.0d][%.0x]", 0, 0, 0u);
    assert_string_equal(buf, "[][     ][]");
    ksnprintf(buf, sizeof(buf), "[%*d][%-*d][%*d][%.*d][%.*d]", 4, 1, 4, 2, -4, 3, 3, 4, -1, 5);
    assert_string_equal(buf, "[   1][2   ][3   ][004][5]");
    ksnprintf(buf, sizeof(buf), "[%.3s][%.*s]", unterminated, 2, unterminated);
    assert_string_equal(buf, "[abc][ab]");
    unchecked(buf, sizeof(buf), "[%05s][%05c]", "ab", 'x'); /* '0' ignored for text */
    assert_string_equal(buf, "[   ab][    x]");
    ksnprintf(buf, sizeof(buf), "100%%");
    assert_string_equal(buf, "100%");
}

/* Formats that C leaves undefined still produce something visible, never a crash. */
static void test_malformed(void **state)
{
    char buf[64];
    const char *f; /* non-literal, so the compiler's format check lets these through */

    (void)state;
    f = "abc%";
    assert_int_equal(unchecked(buf, sizeof(buf), f, 0), 4);
    assert_string_equal(buf, "abc%");
    f = "x%-5";
    unchecked(buf, sizeof(buf), f, 0);
    assert_string_equal(buf, "x%-5");
    f = "[%y]";
    unchecked(buf, sizeof(buf), f, 0);
    assert_string_equal(buf, "[%y]");
    f = "[%5lq]";
    unchecked(buf, sizeof(buf), f, 0);
    assert_string_equal(buf, "[%5lq]");
}

static void test_overflow_errors(void **state)
{
    char buf[16];
    const char *f;

    (void)state;
    f = "%2147483648d";
    assert_int_equal(unchecked(buf, sizeof(buf), f, 1), E_OVERFLOW);
    f = "%.99999999999d";
    assert_int_equal(unchecked(buf, sizeof(buf), f, 1), E_OVERFLOW);
    assert_int_equal(unchecked(buf, sizeof(buf), "ab%*d", INT_MIN, 1), E_OVERFLOW);
    /* The buffer is still a valid string holding what came before the error. */
    assert_string_equal(buf, "ab");
}

struct counter {
    size_t n;
    char last;
};

static void count_put(char c, void *ctx)
{
    struct counter *cnt = ctx;
    cnt->n++;
    cnt->last = c;
}

static int call_vformat(struct counter *cnt, const char *fmt, ...) BTSX_PRINTF_LIKE(2, 3);
static int call_vformat(struct counter *cnt, const char *fmt, ...)
{
    va_list ap;
    int r;

    va_start(ap, fmt);
    r = fmt_vformat(count_put, cnt, fmt, ap);
    va_end(ap);
    return r;
}

static void test_vformat_callback(void **state)
{
    struct counter cnt = {0, 0};

    (void)state;
    assert_int_equal(call_vformat(&cnt, "%s-%d!", "abc", 12), 7);
    assert_int_equal(cnt.n, 7);
    assert_int_equal(cnt.last, '!');
    cnt.n = 0;
    assert_int_equal(call_vformat(&cnt, "%1000d", 1), 1000);
    assert_int_equal(cnt.n, 1000);
    cnt.n = 0;
    assert_int_equal(call_vformat(&cnt, "%s", ""), 0);
    assert_int_equal(cnt.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_integers_vs_host), cmocka_unit_test(test_text_vs_host),
        cmocka_unit_test(test_truncation),       cmocka_unit_test(test_pointer),
        cmocka_unit_test(test_null_string),      cmocka_unit_test(test_hand_checked),
        cmocka_unit_test(test_malformed),        cmocka_unit_test(test_overflow_errors),
        cmocka_unit_test(test_vformat_callback),
    };
    /* A runaway loop in the code under test must fail the run, not hang `make unit`. */
    alarm(UNIT_TIMEOUT_S);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
