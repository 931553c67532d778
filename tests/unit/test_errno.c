/* Host tests of kernel/errno.c: the table is consistent (negative, distinct, named after the
 * enum), lookups work, and unknown codes are reported with their value. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define UNIT_TIMEOUT_S 60

#include "kernel/cmdline.h"
#include "kernel/errno.h"

struct expect {
    int code;
    const char *name;
    const char *msg;
};

/* Built from the same X-macro, so every code added later is covered automatically. */
static const struct expect all[] = {
#define EXPECT_ENTRY(name, value, msg) {name, #name, msg},
    BTSX_ERRORS(EXPECT_ENTRY)
#undef EXPECT_ENTRY
};

#define NALL (sizeof(all) / sizeof(all[0]))

static void test_table_consistent(void **state)
{
    (void)state;
    for (size_t i = 0; i < NALL; i++) {
        assert_true(all[i].code < 0);
        assert_string_equal(err_name(all[i].code), all[i].name);
        assert_string_equal(err_str(all[i].code), all[i].msg);
        assert_true(strlen(all[i].msg) > 0);
        for (size_t j = 0; j < i; j++) {
            assert_int_not_equal(all[i].code, all[j].code);
            assert_string_not_equal(all[i].msg, all[j].msg);
        }
    }
}

static void test_known_names(void **state)
{
    (void)state;
    assert_int_equal(E_INVAL, -1);
    assert_string_equal(err_name(E_QUOTA), "E_QUOTA");
    assert_string_equal(err_str(E_QUOTA), "quota exceeded");
    assert_string_equal(err_name(E_OVERFLOW), "E_OVERFLOW");
    assert_string_equal(err_name(0), "E_OK");
    assert_string_equal(err_str(0), "success");
    /* The command line's codes are entries of this one table. */
    assert_string_equal(err_name(CMDLINE_EDUP), "E_EXIST");
    assert_string_equal(err_name(CMDLINE_ETOOLONG), "E_TOOLONG");
}

static void test_unknown(void **state)
{
    (void)state;
    assert_string_equal(err_name(-999), "E_UNKNOWN(-999)");
    assert_string_equal(err_name(7), "E_UNKNOWN(7)");
    assert_string_equal(err_name(INT_MIN), "E_UNKNOWN(-2147483648)");
    assert_string_equal(err_name(INT_MAX), "E_UNKNOWN(2147483647)");
    assert_string_equal(err_str(-999), "unknown error");
    assert_string_equal(err_str(1), "unknown error");
    /* A known name after an unknown one is unaffected by the static buffer. */
    assert_string_equal(err_name(E_NOMEM), "E_NOMEM");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_consistent),
        cmocka_unit_test(test_known_names),
        cmocka_unit_test(test_unknown),
    };
    /* A runaway loop in the code under test must fail the run, not hang `make unit`. */
    alarm(UNIT_TIMEOUT_S);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
