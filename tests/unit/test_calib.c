/* kernel/calib.c: which round of the boot calibration the kernel believes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kernel/calib.h"

#define PCT   2
#define TIMER 62500000ULL
#define TSC   2445000000ULL

static const struct calib_round good = {TIMER, TSC};
/* What the kernel met under QEMU TCG on an overcommitted host: the timer at 39 % of its rate,
 * and both rates a fifth fast. */
static const struct calib_round slow_timer = {24431200, 2429726300ULL};
static const struct calib_round fast_both = {75320400, 2947131900ULL};

static void test_median(void **state)
{
    (void)state;
    uint64_t one[] = {7};
    uint64_t odd[] = {9, 1, 5};
    uint64_t even[] = {4, 3, 2, 1};
    assert_int_equal(median_u64(one, 1), 7);
    assert_int_equal(median_u64(odd, 3), 5);
    assert_int_equal(median_u64(even, 4), 3); /* the upper middle */
    assert_int_equal(even[0], 1);             /* sorted in place */
}

static void test_agree(void **state)
{
    (void)state;
    struct calib_round near = {TIMER + TIMER / 100, TSC - TSC / 100}; /* 1 % */
    struct calib_round off_tsc = {TIMER, TSC + TSC * 3 / 100};        /* 3 % on the TSC */
    struct calib_round edge = {TIMER + TIMER * PCT / 100, TSC};       /* exactly 2 % */
    struct calib_round zero = {0, TSC};
    assert_true(calib_agree(&good, &good, PCT));
    assert_true(calib_agree(&good, &near, PCT));
    assert_true(calib_agree(&good, &edge, PCT));
    assert_false(calib_agree(&good, &off_tsc, PCT));
    assert_false(calib_agree(&good, &slow_timer, PCT)); /* the TSC agrees, the timer does not */
    assert_false(calib_agree(&good, &fast_both, PCT));
    assert_false(calib_agree(&good, &zero, PCT));
    assert_false(calib_agree(&zero, &zero, PCT));
}

static void test_choose_first_pair(void **state)
{
    (void)state;
    struct calib_round r[] = {good, {TIMER + 1000, TSC + 1000}};
    bool agreed = false;
    struct calib_round c = calib_choose(r, 2, PCT, &agreed);
    assert_true(agreed);
    assert_int_equal(c.timer_hz, TIMER + 1000); /* the later of the two */
    assert_int_equal(c.tsc_hz, TSC + 1000);
}

static void test_choose_after_bad_rounds(void **state)
{
    (void)state;
    /* A disturbed first round, another, then two good ones: the latest good one. */
    struct calib_round r[] = {slow_timer, fast_both, good, {TIMER - 500, TSC - 500}};
    bool agreed = false;
    struct calib_round c = calib_choose(r, 4, PCT, &agreed);
    assert_true(agreed);
    assert_int_equal(c.timer_hz, TIMER - 500);
    /* Two disturbed rounds that happen to agree with each other are believed too: what is
     * latest wins, so the kernel stops measuring at the first agreeing pair. */
    struct calib_round twice[] = {slow_timer, slow_timer};
    c = calib_choose(twice, 2, PCT, &agreed);
    assert_true(agreed);
    assert_int_equal(c.timer_hz, slow_timer.timer_hz);
}

static void test_choose_none_agree(void **state)
{
    (void)state;
    struct calib_round r[] = {slow_timer, good, fast_both};
    bool agreed = true;
    struct calib_round c = calib_choose(r, 3, PCT, &agreed);
    assert_false(agreed);
    assert_int_equal(c.timer_hz, TIMER); /* median of 24.4, 62.5, 75.3 MHz */
    assert_int_equal(c.tsc_hz, TSC);     /* median of 2.43, 2.445, 2.95 GHz */
    struct calib_round single[] = {fast_both};
    c = calib_choose(single, 1, PCT, &agreed);
    assert_false(agreed);
    assert_int_equal(c.timer_hz, fast_both.timer_hz);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median),
        cmocka_unit_test(test_agree),
        cmocka_unit_test(test_choose_first_pair),
        cmocka_unit_test(test_choose_after_bad_rounds),
        cmocka_unit_test(test_choose_none_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
