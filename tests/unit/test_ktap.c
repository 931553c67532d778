/* Host tests of tests/ktap.c: exact output text, line discipline (one whole line per put()
 * call), counters, and the misuse errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define UNIT_TIMEOUT_S 60

#include "tests/ktap.h"

#define CAPTURE_MAX 8192

struct capture {
    char text[CAPTURE_MAX];
    size_t len;
    unsigned lines;
};

/* Appends one put() call, checking the contract: a non-empty line ending in exactly one '\n',
 * never longer than the line buffer. */
static void capture_put(const char *line, void *ctx)
{
    struct capture *c = ctx;
    size_t n = strlen(line);

    assert_true(n >= 1 && n <= KTAP_LINE_MAX - 1);
    assert_int_equal(line[n - 1], '\n');
    assert_null(memchr(line, '\n', n - 1));
    assert_true(c->len + n < sizeof(c->text));
    memcpy(c->text + c->len, line, n + 1);
    c->len += n;
    c->lines++;
}

static struct capture cap;
static struct ktap k;
/* An empty reason, out of sight of gcc's -Wformat-zero-length; callers pass a dummy
 * argument so clang's -Wformat-security accepts the non-literal format. */
static const char *empty_fmt = "";

static int setup(void **state)
{
    (void)state;
    memset(&cap, 0, sizeof(cap));
    ktap_begin(&k, capture_put, &cap);
    return 0;
}

static void test_spec_example(void **state)
{
    (void)state;
    assert_int_equal(ktap_header_line(&k, "btsx %d.%d.%d", 0, 1, 0), 0);
    assert_int_equal(ktap_plan(&k, 3), 0);
    assert_int_equal(ktap_result(&k, KTAP_PASS, "boot.memmap", NULL), 0);
    assert_int_equal(ktap_result(&k, KTAP_FAIL, "paging.write_text", "expected %d, got %d", 5, 4),
                     0);
    assert_int_equal(ktap_result(&k, KTAP_SKIP, "apic.timer", "no LAPIC timer"), 0);
    ktap_summary(&k);
    assert_string_equal(cap.text, "KTAP version 1\n"
                                  "# btsx 0.1.0\n"
                                  "1..3\n"
                                  "ok 1 boot.memmap\n"
                                  "# expected 5, got 4\n"
                                  "not ok 2 paging.write_text\n"
                                  "ok 3 apic.timer # SKIP no LAPIC timer\n"
                                  "# 1 passed, 1 failed, 1 skipped\n");
    assert_int_equal(cap.lines, 8);
    assert_true(ktap_plan_met(&k));
}

static void test_all_statuses_and_counters(void **state)
{
    (void)state;
    ktap_result(&k, KTAP_PASS, "a", NULL);
    ktap_result(&k, KTAP_FAIL, "b", NULL);
    ktap_result(&k, KTAP_SKIP, "c", "no %s", "BTS");
    ktap_result(&k, KTAP_TIMEOUT, "d", "after %u ms", 500u);
    ktap_result(&k, KTAP_ERROR, "e", "unexpected #%s", "PF");
    ktap_result(&k, KTAP_PASS, "f", empty_fmt, 0);
    ktap_summary(&k);
    assert_string_equal(cap.text, "KTAP version 1\n"
                                  "ok 1 a\n"
                                  "not ok 2 b\n"
                                  "ok 3 c # SKIP no BTS\n"
                                  "not ok 4 d # TIMEOUT after 500 ms\n"
                                  "not ok 5 e # ERROR unexpected #PF\n"
                                  "ok 6 f\n"
                                  "# 2 passed, 3 failed, 1 skipped\n");
    assert_int_equal(k.passed, 2);
    assert_int_equal(k.failed, 3);
    assert_int_equal(k.skipped, 1);
    assert_int_equal(ktap_count(&k), 6);
    /* Results but no plan: the plan is not met. */
    assert_false(ktap_plan_met(&k));
}

static void test_name_sanitised(void **state)
{
    (void)state;
    ktap_result(&k, KTAP_PASS, "bad#name\nwith\rbreaks", NULL);
    assert_string_equal(cap.text, "KTAP version 1\nok 1 bad_name_with_breaks\n");
}

static void test_multiline_diag(void **state)
{
    (void)state;
    ktap_diag(&k, "first %d\nsecond\n\nfourth", 1);
    ktap_diag(&k, "trailing newline\n");
    ktap_diag(&k, "%s", "");
    ktap_diag(&k, "\n");
    assert_string_equal(cap.text, "KTAP version 1\n"
                                  "# first 1\n"
                                  "# second\n"
                                  "#\n"
                                  "# fourth\n"
                                  "# trailing newline\n"
                                  "#\n"
                                  "#\n");
}

/* A FAIL reason is a diagnostic (split like one); a directive reason stays on its line. */
static void test_reason_line_breaks(void **state)
{
    (void)state;
    ktap_result(&k, KTAP_FAIL, "x", "line one\nline two");
    ktap_result(&k, KTAP_SKIP, "y", "no\nnewline");
    ktap_result(&k, KTAP_SKIP, "z", "%s", "  ");
    assert_string_equal(cap.text, "KTAP version 1\n"
                                  "# line one\n"
                                  "# line two\n"
                                  "not ok 1 x\n"
                                  "ok 2 y # SKIP no newline\n"
                                  "ok 3 z # SKIP\n");
}

static void test_misuse(void **state)
{
    (void)state;
    /* Directives need a reason; nothing is emitted or counted without one. */
    assert_int_equal(ktap_result(&k, KTAP_SKIP, "a", NULL), E_INVAL);
    assert_int_equal(ktap_result(&k, KTAP_TIMEOUT, "a", empty_fmt, 0), E_INVAL);
    assert_int_equal(ktap_result(&k, KTAP_ERROR, "a", NULL), E_INVAL);
    assert_int_equal(ktap_result(&k, KTAP_PASS, NULL, NULL), E_INVAL);
    assert_int_equal(ktap_result(&k, KTAP_PASS, "", NULL), E_INVAL);
    assert_int_equal(ktap_result(&k, (enum ktap_status)42, "a", NULL), E_INVAL);
    assert_int_equal(ktap_count(&k), 0);
    assert_int_equal(k.passed + k.failed + k.skipped, 0);

    assert_int_equal(ktap_plan(&k, 2), 0);
    assert_int_equal(ktap_plan(&k, 3), E_STATE);
    assert_int_equal(ktap_header_line(&k, "too late"), E_STATE);
    assert_int_equal(ktap_result(&k, KTAP_PASS, "a", NULL), 0);
    assert_false(ktap_plan_met(&k));
    assert_int_equal(ktap_result(&k, KTAP_PASS, "b", NULL), 0);
    assert_true(ktap_plan_met(&k));
    assert_string_equal(cap.text, "KTAP version 1\n1..2\nok 1 a\nok 2 b\n");
}

static void test_header_after_result(void **state)
{
    (void)state;
    assert_int_equal(ktap_header_line(&k, "cpu %s", "GenuineIntel"), 0);
    ktap_result(&k, KTAP_PASS, "a", NULL);
    assert_int_equal(ktap_header_line(&k, "late"), E_STATE);
    assert_int_equal(ktap_diag(&k, "fine"), 0);
    assert_string_equal(cap.text, "KTAP version 1\n# cpu GenuineIntel\nok 1 a\n# fine\n");
}

/* Long diagnostics wrap onto further "# " lines and lose nothing. */
static void test_long_diag_wraps(void **state)
{
    char msg[3 * KTAP_LINE_MAX], rebuilt[3 * KTAP_LINE_MAX];
    size_t n = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(msg) - 1; i++)
        msg[i] = (char)('a' + i % 26);
    msg[sizeof(msg) - 1] = '\0';
    ktap_diag(&k, "%s", msg);
    assert_true(cap.lines >= 1 + 3);
    /* Strip "KTAP version 1\n" and every "# " and "\n": the message must come back whole. */
    for (const char *p = strchr(cap.text, '\n') + 1; *p;) {
        assert_true(p[0] == '#' && p[1] == ' ');
        p += 2;
        while (*p != '\n')
            rebuilt[n++] = *p++;
        p++;
    }
    rebuilt[n] = '\0';
    assert_string_equal(rebuilt, msg);
}

/* A result line that cannot fit is cut visibly, never split. */
static void test_long_result_truncated(void **state)
{
    char reason[2 * KTAP_LINE_MAX];
    const char *line;

    (void)state;
    memset(reason, 'r', sizeof(reason) - 1);
    reason[sizeof(reason) - 1] = '\0';
    ktap_result(&k, KTAP_SKIP, "long.one", "%s", reason);
    assert_int_equal(cap.lines, 2);
    line = strchr(cap.text, '\n') + 1;
    assert_int_equal(strlen(line), KTAP_LINE_MAX - 1);
    assert_memory_equal(line, "ok 1 long.one # SKIP rrr", 24);
    assert_memory_equal(line + KTAP_LINE_MAX - 2 - strlen(KTAP_TRUNCATED), KTAP_TRUNCATED,
                        strlen(KTAP_TRUNCATED));
    assert_int_equal(k.skipped, 1);
}

static void test_begin_resets(void **state)
{
    (void)state;
    ktap_plan(&k, 1);
    ktap_result(&k, KTAP_FAIL, "a", NULL);
    memset(&cap, 0, sizeof(cap));
    ktap_begin(&k, capture_put, &cap);
    assert_int_equal(ktap_count(&k), 0);
    assert_int_equal(k.failed, 0);
    assert_int_equal(ktap_plan(&k, 1), 0);
    ktap_result(&k, KTAP_PASS, "b", NULL);
    ktap_summary(&k);
    assert_string_equal(cap.text,
                        "KTAP version 1\n1..1\nok 1 b\n# 1 passed, 0 failed, 0 skipped\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_spec_example, setup),
        cmocka_unit_test_setup(test_all_statuses_and_counters, setup),
        cmocka_unit_test_setup(test_name_sanitised, setup),
        cmocka_unit_test_setup(test_multiline_diag, setup),
        cmocka_unit_test_setup(test_reason_line_breaks, setup),
        cmocka_unit_test_setup(test_misuse, setup),
        cmocka_unit_test_setup(test_header_after_result, setup),
        cmocka_unit_test_setup(test_long_diag_wraps, setup),
        cmocka_unit_test_setup(test_long_result_truncated, setup),
        cmocka_unit_test_setup(test_begin_resets, setup),
    };
    /* A runaway loop in the code under test must fail the run, not hang `make unit`. */
    alarm(UNIT_TIMEOUT_S);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
