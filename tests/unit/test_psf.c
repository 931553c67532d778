/* Host tests of the PSF font parser (kernel/psf.c), on hand-made fonts whose every byte is
 * known here, and on the font the kernel links (PSF_TEST_FONT): what psf_parse() accepts and
 * rejects, and the Latin-1 map psf_latin1_map() builds from a unicode table or without one.
 * The drawing side is tests/unit/test_fbcon.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/errno.h"
#include "kernel/psf.h"

#ifndef PSF_TEST_FONT
#error "build with -DPSF_TEST_FONT='\"path/to/font.psf\"' (tests/unit/console.mk does)"
#endif

/* PSF1 of 256 one-row glyphs: magic 36 04, mode, charsize 1, 256 glyph bytes, then the table. */
#define T_GLYPHS    256
#define T_HEADER    4
#define T_TABLE_AT  (T_HEADER + T_GLYPHS)
#define T_MODE_TAB  0x02
#define T_SEPARATOR 0xFFFF

static size_t psf1_make(uint8_t *buf, uint8_t mode)
{
    buf[0] = 0x36;
    buf[1] = 0x04;
    buf[2] = mode;
    buf[3] = 1;
    for (unsigned g = 0; g < T_GLYPHS; g++)
        buf[T_HEADER + g] = (uint8_t)g;
    return T_TABLE_AT;
}

static size_t put16(uint8_t *buf, size_t at, uint16_t v)
{
    buf[at] = (uint8_t)v;
    buf[at + 1] = (uint8_t)(v >> 8);
    return at + 2;
}

static void test_psf1_without_table_maps_by_index(void **state)
{
    (void)state;
    uint8_t font[T_TABLE_AT];
    size_t len = psf1_make(font, 0);
    struct psf_font f;
    const char *why = "unset";
    assert_int_equal(psf_parse(font, len, &f, &why), 0);
    assert_int_equal(f.count, T_GLYPHS);
    assert_int_equal(f.width, 8);
    assert_int_equal(f.height, 1);
    assert_null(f.table);
    assert_ptr_equal(f.glyphs, font + T_HEADER);
    uint32_t map[PSF_LATIN1_MAP_SIZE];
    psf_latin1_map(&f, map);
    for (unsigned i = 0; i < PSF_LATIN1_MAP_SIZE; i++)
        assert_int_equal(map[i], i);
}

/* Glyph 0 claims U+0041 and, after a sequence marker, U+0042 (a sequence: not a claim);
 * glyph 1 claims U+0041 again (the first claim wins) and U+00E9; the rest claim nothing. */
static void test_psf1_table_first_claim_wins(void **state)
{
    (void)state;
    uint8_t font[T_TABLE_AT + 2 * 8 + 2 * T_GLYPHS];
    size_t at = psf1_make(font, T_MODE_TAB);
    at = put16(font, at, 0x41);
    at = put16(font, at, 0xFFFE);
    at = put16(font, at, 0x42);
    at = put16(font, at, T_SEPARATOR);
    at = put16(font, at, 0x41);
    at = put16(font, at, 0xE9);
    at = put16(font, at, T_SEPARATOR);
    for (unsigned g = 2; g < T_GLYPHS; g++)
        at = put16(font, at, T_SEPARATOR);
    struct psf_font f;
    const char *why;
    assert_int_equal(psf_parse(font, at, &f, &why), 0);
    assert_non_null(f.table);
    uint32_t map[PSF_LATIN1_MAP_SIZE];
    psf_latin1_map(&f, map);
    assert_int_equal(map[0x41], 0);
    assert_int_equal(map[0xE9], 1);
    assert_int_equal(map[0x42], PSF_GLYPH_NONE);
    assert_int_equal(map['?'], PSF_GLYPH_NONE);

    /* The same table one separator short: unterminated. */
    assert_int_equal(psf_parse(font, at - 2, &f, &why), E_INVAL);
    assert_string_equal(why, "font: unterminated unicode table");
}

static void test_rejects(void **state)
{
    (void)state;
    uint8_t font[T_TABLE_AT];
    size_t len = psf1_make(font, 0);
    struct psf_font f;
    const char *why;
    assert_int_equal(psf_parse(font, 3, &f, &why), E_INVAL);
    assert_string_equal(why, "font: truncated header");
    assert_int_equal(psf_parse(font, len - 1, &f, &why), E_INVAL);
    assert_string_equal(why, "font: truncated glyph data");
    font[3] = 0;
    assert_int_equal(psf_parse(font, len, &f, &why), E_INVAL);
    assert_string_equal(why, "font: zero-height glyphs");
    font[0] = 0;
    assert_int_equal(psf_parse(font, len, &f, &why), E_INVAL);
    assert_string_equal(why, "font: not PSF1 or PSF2 (bad magic)");
    assert_int_equal(psf_parse(NULL, 0, &f, &why), E_INVAL);
}

/* The kernel's font: Lat15 maps printable ASCII to the glyph of the same index (its table
 * says so; test_fbcon checks the pixels). */
static void test_kernel_font(void **state)
{
    (void)state;
    FILE *fp = fopen(PSF_TEST_FONT, "rb");
    assert_non_null(fp);
    static uint8_t buf[1 << 16];
    size_t len = fread(buf, 1, sizeof(buf), fp);
    fclose(fp);
    struct psf_font f;
    const char *why = "unset";
    assert_int_equal(psf_parse(buf, len, &f, &why), 0);
    assert_int_equal(f.width, 8);
    assert_int_equal(f.height, 16);
    assert_non_null(f.table);
    uint32_t map[PSF_LATIN1_MAP_SIZE];
    psf_latin1_map(&f, map);
    for (unsigned c = ' '; c <= '~'; c++)
        assert_int_equal(map[c], c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_psf1_without_table_maps_by_index),
        cmocka_unit_test(test_psf1_table_first_claim_wins),
        cmocka_unit_test(test_rejects),
        cmocka_unit_test(test_kernel_font),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
