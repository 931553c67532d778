/* Host tests of tests/report.c: the exact text, escaping, truncation of values, the size
 * limit and the "more" line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tests/report.h"

static const struct report_fact facts[] = {
    {"cpu", "QEMU TCG CPU"},
    {"hv", "TCG"},
    {"er", NULL}, /* left out */
    {"boot", "bios"},
};

static struct report_facts base(void)
{
    return (struct report_facts){
        .version = "0.1.0", .facts = facts, .nfacts = 4, .passed = 3, .verdict = "PASS"};
}

static void test_exact_text(void **state)
{
    (void)state;
    static const struct report_test tests[] = {
        {"selftest.fail", REPORT_FAIL, "want 5, got 4"},
        {"bts.hw", REPORT_SKIP, "no BTS"},
        {"selftest.hang", REPORT_TIMEOUT, "after 50 ms"},
        {"ds.hw", REPORT_SKIP, "no BTS"},
        {"ds.pebs", REPORT_SKIP, "no PEBS"},
    };
    struct report_facts f = base();
    f.failed = 2;
    f.skipped = 3;
    f.tests = tests;
    f.ntests = 5;
    f.verdict = "FAIL";
    f.nfacts = 1; /* cpu: room for every line */
    static const struct report_fact late[] = {{"dc", "core"}};
    f.late = late;
    f.nlate = 1;
    char buf[REPORT_MAX + 1];
    size_t n = report_format(&f, buf, sizeof(buf));
    const char *want = "btsx-report/1\nv=0.1.0\ncpu=QEMU TCG CPU\nn=3/2/3\n"
                       "f=selftest.fail:want 5, got 4\nt=selftest.hang:after 50 ms\ndc=core\n"
                       "s=2:no BTS\ns=1:no PEBS\nr=FAIL\n";
    assert_string_equal(buf, want);
    assert_int_equal(n, strlen(want));
}

static void test_escaping(void **state)
{
    (void)state;
    static const struct report_fact odd[] = {{"cpu", "a\\b\nc\x7f\xe9"}};
    struct report_facts f = base();
    f.facts = odd;
    f.nfacts = 1;
    char buf[REPORT_MAX + 1];
    report_format(&f, buf, sizeof(buf));
    assert_non_null(strstr(buf, "\ncpu=a\\\\b\\x0ac\\x7f\\xe9\n"));
}

static void test_value_cut(void **state)
{
    (void)state;
    char longv[100];
    memset(longv, 'x', sizeof(longv) - 1);
    longv[sizeof(longv) - 1] = '\0';
    longv[REPORT_VALUE_MAX - 2] = '\n'; /* an escape that would straddle the cut */
    const struct report_fact one[] = {{"cpu", longv}};
    struct report_facts f = base();
    f.facts = one;
    f.nfacts = 1;
    char buf[REPORT_MAX + 1];
    report_format(&f, buf, sizeof(buf));
    const char *v = strstr(buf, "\ncpu=") + 5;
    size_t len = (size_t)(strchr(v, '\n') - v);
    assert_true(len <= REPORT_VALUE_MAX);
    assert_int_equal(v[len - 1], REPORT_CUT[0]);
    /* The escape did not fit whole, so it is left out whole. */
    assert_int_equal(len, REPORT_VALUE_MAX - 2 + 1);
    assert_null(strstr(v, "\\x"));
    /* A value that fits exactly is not cut. */
    longv[REPORT_VALUE_MAX] = '\0';
    memset(longv, 'y', REPORT_VALUE_MAX);
    report_format(&f, buf, sizeof(buf));
    v = strstr(buf, "\ncpu=") + 5;
    assert_int_equal(strchr(v, '\n') - v, REPORT_VALUE_MAX);
    assert_null(memchr(v, REPORT_CUT[0], REPORT_VALUE_MAX));
}

static void test_size_limit_and_more(void **state)
{
    (void)state;
    static char names[40][16];
    static struct report_test many[40];
    for (unsigned i = 0; i < 40; i++) {
        snprintf(names[i], sizeof(names[i]), "suite.t%02u", i);
        /* Lengths alternate, so a short line would still fit after a long one did not. */
        many[i] = (struct report_test){
            names[i], REPORT_FAIL, i % 2 ? "x" : "a first diagnostic line long enough to be cut"};
    }
    struct report_facts f = base();
    f.failed = 40;
    f.tests = many;
    f.ntests = 40;
    f.verdict = "FAIL";
    char buf[1024];
    size_t n = report_format(&f, buf, sizeof(buf));
    assert_true(n <= REPORT_MAX);
    assert_int_equal(n, strlen(buf));
    unsigned listed = 0;
    for (const char *p = buf; (p = strstr(p, "\nf=")); p++)
        listed++;
    const char *more = strstr(buf, "\nmore=");
    assert_non_null(more);
    assert_true(listed > 0);
    /* The listed ones are the first ones, in order: "more" counts the tail. */
    const char *p = buf;
    for (unsigned i = 0; i < listed; i++) {
        char want[32];
        snprintf(want, sizeof(want), "\nf=%.15s:", names[i]);
        p = strstr(p, want);
        assert_non_null(p);
    }
    assert_int_equal(listed + (unsigned)atoi(more + 6), 40);
    /* The verdict is the last line, whatever was left out. */
    assert_string_equal(buf + n - strlen("r=FAIL\n"), "r=FAIL\n");
    /* A smaller buffer lowers the limit the same way. */
    n = report_format(&f, buf, 120);
    assert_true(n < 120);
    assert_string_equal(buf + n - strlen("r=FAIL\n"), "r=FAIL\n");
    /* Too small for the fixed lines: nothing. */
    assert_int_equal(report_format(&f, buf, 20), 0);
    assert_string_equal(buf, "");
}

/* Facts take their place in the budget like the rest: too many of them are counted in more=,
 * and then no failure line follows them. */
static void test_facts_count_in_more(void **state)
{
    (void)state;
    static struct report_fact lots[12];
    for (unsigned i = 0; i < 12; i++)
        lots[i] = (struct report_fact){"x", "a fact value of some length"};
    static const struct report_test one[] = {{"t.fail", REPORT_FAIL, "why"}};
    struct report_facts f = base();
    f.facts = lots;
    f.nfacts = 12;
    f.failed = 1;
    f.tests = one;
    f.ntests = 1;
    f.verdict = "FAIL";
    char buf[REPORT_MAX + 1];
    size_t n = report_format(&f, buf, sizeof(buf));
    assert_true(n > 0 && n <= REPORT_MAX);
    unsigned listed = 0;
    for (const char *p = buf; (p = strstr(p, "\nx=")); p++)
        listed++;
    const char *more = strstr(buf, "\nmore=");
    assert_non_null(more);
    assert_int_equal(listed + (unsigned)atoi(more + 6), 13); /* 12 facts, 1 failure */
    assert_null(strstr(buf, "\nf="));
    assert_non_null(strstr(buf, "\nn=3/1/0\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_text),          cmocka_unit_test(test_escaping),
        cmocka_unit_test(test_value_cut),           cmocka_unit_test(test_size_limit_and_more),
        cmocka_unit_test(test_facts_count_in_more),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
