/* Host tests of kernel/qr.c's internals: the mask penalty rules one at a time on hand-built
 * matrices, with the scores worked out from the rules' text (clause "Evaluation of data masking
 * results", as kernel/qr.c states them); the mask choice; the module count behind the codeword
 * capacity. test_qr checks the rules only through the mask qrencode picks, and rule 4 rarely
 * decides that (symbols are close to half dark), so this test reaches the file's static
 * functions by including it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define UNIT_TIMEOUT_S 60

#include "kernel/qr.c"

#define SIZE 21 /* version 1 */

static struct qr_code m;

static void matrix_clear(void)
{
    memset(&m, 0, sizeof(m));
    m.version = 1;
    m.size = SIZE;
}

/* Row y from a string of '1' (dark) and '0' (light), SIZE long. */
static void set_row(unsigned y, const char *row)
{
    assert_int_equal(strlen(row), SIZE);
    for (unsigned x = 0; x < SIZE; x++)
        bit_put(m.modules, y * SIZE + x, row[x] == '1');
}

struct line_case {
    const char *row;
    unsigned score;
    const char *why;
};

/* Rules 1 and 3 on one row: 3 + (run - 5) per run of five or more, 40 per 1:1:3:1:1 pattern
 * with 4 units of light on a side (the quiet zone beyond an edge is light). */
static const struct line_case line_cases[] = {
    {"000000000000000000000", 19, "one light run of 21: 3 + 16"},
    {"010101010101010101010", 0, "no run of five, no pattern"},
    {"000011111000000000000", 3 + 3 + 7, "runs of 5 and 12: 3 and 3 + 7"},
    {"101110100000000000000", 40 + 3 + 9, "pattern at the left edge, then 14 light: 40 + 12"},
    {"100010111010000111111", 40 + 3 + 1, "light 3 before, 4 after: 40; the run of 6: 4"},
    {"100010111010001111111", 3 + 2, "light 3 before and after: no pattern; the run of 7: 5"},
    {"111111111110001011101", 40 + 3 + 6, "pattern ends at the right edge: 40; run of 11: 9"},
    {"111111111100010111010", 40 + 3 + 5, "one light module, then the edge: 40; run of 10: 8"},
    {"110011111100110000000", 40 + 3 + 1 + 3 + 2, "scaled 2:2:6:2:2 then 7 light: 40 + 4 + 5"},
    {"101100111111001100001", 3 + 1, "scaled, but 1 and 4 light (< 8): the run of 6: 4"},
    {"000010111010000000000", 40 + 3 + 5, "light on both sides: counted once; run of 10: 8"},
    {"101110101110100000000", 40 + 40 + 3 + 3,
     "two patterns sharing a dark module: 80; run of 8: 6"},
    {"101100100000000000000", 3 + 9, "1:1:2:2:1 is no pattern; the run of 14: 12"},
    {"010001011101000100000", 3, "light 3 each side, dark beyond: none; run of 5: 3"},
};

static void test_rules_1_and_3(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(line_cases) / sizeof(line_cases[0]); i++) {
        const struct line_case *c = &line_cases[i];
        unsigned row, col;

        matrix_clear();
        set_row(0, c->row);
        row = penalty_line(&m, 0, false);
        if (row != c->score)
            fail_msg("row %s: %u, expected %u (%s)", c->row, row, c->score, c->why);
        /* The same line as a column: transpose it. */
        matrix_clear();
        for (unsigned y = 0; y < SIZE; y++)
            bit_put(m.modules, y * SIZE + 3, c->row[y] == '1');
        col = penalty_line(&m, 3, true);
        if (col != c->score)
            fail_msg("column %s: %u, expected %u (%s)", c->row, col, c->score, c->why);
    }
}

/* Rule 2: 3 per 2x2 block of one colour, overlapping blocks counted separately. */
static void test_rule_2(void **state)
{
    (void)state;
    matrix_clear();
    assert_int_equal(penalty_blocks(&m), 20 * 20 * 3); /* all light: every block */
    for (unsigned y = 0; y < SIZE; y++)
        for (unsigned x = 0; x < SIZE; x++)
            bit_put(m.modules, y * SIZE + x, (x + y) % 2);
    assert_int_equal(penalty_blocks(&m), 0); /* checkerboard: none */
    matrix_clear();
    bit_put(m.modules, 10 * SIZE + 10, true);
    assert_int_equal(penalty_blocks(&m), (400 - 4) * 3); /* one dark module breaks four */
    matrix_clear();
    bit_put(m.modules, SIZE * SIZE - 1, true);
    assert_int_equal(penalty_blocks(&m), (400 - 1) * 3); /* in the corner, one */
    matrix_clear();
    for (unsigned y = 0; y < 3; y++)
        for (unsigned x = 0; x < 3; x++)
            bit_put(m.modules, y * SIZE + x, true);
    /* A dark 3x3 in the corner: 4 dark blocks, and the light blocks lose the 5 it touches. */
    assert_int_equal(penalty_blocks(&m), (400 - 4 - 5 + 4) * 3);
}

/* Rule 4: the share rounded to a whole percent, 10 per full 5% away from 50%. */
static void test_rule_4(void **state)
{
    static const struct {
        unsigned darks, score;
    } cases[] = {
        {500, 0},  {544, 0},  {545, 10}, {549, 10}, /* 54.5% rounds to 55% */
        {550, 10}, {594, 10}, {595, 20}, {600, 20},
        {455, 0},  {454, 10}, {450, 10}, {449, 10}, /* 45.5% rounds to 46%, 45.4% to 45% */
        {404, 20}, {349, 30}, {344, 30}, {305, 30}, /* 30.5% rounds to 31% */
        {304, 40}, {300, 40}, {0, 100},  {1000, 100},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (penalty_balance(cases[i].darks, 1000) != cases[i].score)
            fail_msg("%u of 1000 dark: %u, expected %u", cases[i].darks,
                     penalty_balance(cases[i].darks, 1000), cases[i].score);
    assert_int_equal(penalty_balance(221, 441), 0);  /* 50.1% */
    assert_int_equal(penalty_balance(243, 441), 10); /* 55.1% */
}

/* qr_encode() keeps the first mask with the lowest penalty. Every one-byte input at every level
 * (version 1): the penalties of the eight masks, each forced in turn, against the choice.
 * Some of these inputs tie between masks, which the first-lowest rule must settle. */
static void test_mask_choice(void **state)
{
    unsigned ties = 0;

    (void)state;
    for (int l = QR_LEVEL_L; l < QR_LEVELS; l++)
        for (unsigned b = 0; b < 256; b++) {
            uint8_t byte = (uint8_t)b;
            unsigned score[QR_MASKS], best = 0, chosen;

            for (unsigned k = 0; k < QR_MASKS; k++) {
                assert_int_equal(qr_encode(&m, &byte, 1, (enum qr_level)l, 1, (int)k), 0);
                score[k] = penalty(&m);
                if (score[k] < score[best])
                    best = k;
            }
            for (unsigned k = best + 1; k < QR_MASKS; k++)
                ties += score[k] == score[best];
            assert_int_equal(qr_encode(&m, &byte, 1, (enum qr_level)l, 1, QR_MASK_AUTO), 0);
            chosen = m.mask;
            if (chosen != best)
                fail_msg("byte 0x%02x level %d: mask %u chosen (penalty %u), mask %u has %u", b, l,
                         chosen, score[chosen], best, score[best]);
        }
    assert_true(ties > 0);
}

/* raw_modules() derives the codeword modules from the pattern sizes; they must be exactly the
 * modules draw_function_patterns() leaves free, and the largest version must fill, not overrun,
 * struct qr_code's codeword buffer. */
static void test_raw_modules(void **state)
{
    (void)state;
    for (unsigned v = QR_VERSION_MIN; v <= QR_VERSION_MAX; v++) {
        unsigned free_modules = 0;

        matrix_clear();
        m.version = v;
        m.size = QR_SIZE(v);
        draw_function_patterns(&m);
        for (unsigned i = 0; i < m.size * m.size; i++)
            free_modules += !bit_get(m.function, i);
        if (free_modules != raw_modules(v))
            fail_msg("version %u: %u free modules, raw_modules() says %u", v, free_modules,
                     raw_modules(v));
    }
    assert_int_equal(raw_modules(QR_VERSION_MAX) / 8, QR_CODEWORDS_MAX);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules_1_and_3), cmocka_unit_test(test_rule_2),
        cmocka_unit_test(test_rule_4),        cmocka_unit_test(test_mask_choice),
        cmocka_unit_test(test_raw_modules),
    };

    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    alarm(UNIT_TIMEOUT_S);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
