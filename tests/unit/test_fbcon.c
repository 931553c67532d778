/* Host tests of the framebuffer console (kernel/fbcon.c).
 *
 * The console draws into malloc'd framebuffers of 32, 24, 16 and 15 bpp, each followed by a
 * guard region and with unused bytes at the end of every pixel row, all pre-filled with
 * POISON. The tests prove that
 *   - a character's pixels are exactly its glyph's bits in the chosen colours, the glyph being
 *     the one the font's unicode table gives that code point ('A' is the glyph of U+0041);
 *   - '\n' '\r' '\t' '\b', deferred wrap and scrolling put characters where vga.h says;
 *   - malformed fonts and framebuffers are rejected with the documented code and detail, and a
 *     rejected fbcon_init() leaves the running console untouched;
 *   - nothing is written outside the visible pixels, even on a screen of a single cell.
 * The font is Lat15-Terminus16 (what the kernel links), read at run time from FBCON_TEST_FONT
 * and parsed here independently of fbcon.c. One screen is dumped to FBCON_TEST_PPM.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "kernel/errno.h"
#include "kernel/fbcon.h"

#ifndef FBCON_TEST_FONT
#error "build with -DFBCON_TEST_FONT='\"path/to/font.psf\"' (tests/unit/console.mk does)"
#endif
#ifndef FBCON_TEST_PPM
#define FBCON_TEST_PPM "build/unit/fbcon.ppm"
#endif

#define POISON      0xA5
#define GUARD_BYTES 4096

/* ------------------------------------------------------------------ fonts, parsed here */

struct tfont {
    const uint8_t *glyphs;
    uint32_t count, width, height, row_bytes, glyph_bytes;
};

struct bytes {
    uint8_t *p;
    size_t len;
};

static struct bytes lat15;      /* the file as read */
static struct tfont lat15_font; /* its glyphs */

static int glyph_bit(const struct tfont *f, uint32_t glyph, uint32_t x, uint32_t y)
{
    const uint8_t *row = f->glyphs + (size_t)glyph * f->glyph_bytes + (size_t)y * f->row_bytes;

    return (row[x / 8] >> (7 - x % 8)) & 1;
}

/* The glyph whose PSF1 unicode-table entry lists cp (before any sequence), or -1. */
static int lat15_glyph_of(uint32_t cp)
{
    const uint8_t *p = lat15.p + 4 + (size_t)lat15_font.count * lat15_font.glyph_bytes;
    const uint8_t *end = lat15.p + lat15.len;

    for (uint32_t g = 0; g < lat15_font.count; g++) {
        int in_seq = 0;

        for (; p + 1 < end; p += 2) {
            uint32_t v = p[0] | p[1] << 8;

            if (v == 0xFFFF)
                break;
            if (v == 0xFFFE)
                in_seq = 1;
            else if (!in_seq && v == cp)
                return (int)g;
        }
        p += 2;
    }
    return -1;
}

static int group_setup(void **state)
{
    FILE *fp = fopen(FBCON_TEST_FONT, "rb");
    long n;

    (void)state;
    if (!fp) {
        fprintf(stderr, "cannot open %s\n", FBCON_TEST_FONT);
        return -1;
    }
    fseek(fp, 0, SEEK_END);
    n = ftell(fp);
    rewind(fp);
    lat15.p = malloc((size_t)n);
    lat15.len = fread(lat15.p, 1, (size_t)n, fp);
    fclose(fp);
    /* The kernel's font is PSF1 (magic 36 04) with a unicode table, 256 glyphs of 8x16. */
    if (lat15.len < 4 || lat15.p[0] != 0x36 || lat15.p[1] != 0x04 || lat15.p[2] != 0x02) {
        fprintf(stderr, "%s is not the expected PSF1 font with a unicode table\n", FBCON_TEST_FONT);
        return -1;
    }
    lat15_font = (struct tfont){lat15.p + 4, 256, 8, lat15.p[3], 1, lat15.p[3]};
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    free(lat15.p);
    return 0;
}

/* ------------------------------------------------------------------ framebuffers */

enum layout { RGB888, BGR888, RGB565, RGB555 };

struct fbuf {
    uint8_t *mem;
    size_t size; /* pitch * height; the guard follows */
    unsigned bytespp;
    struct fb_info info;
};

/* Expected packed pixels, worked out by hand from the VGA palette: a channel of 0x55/0xAA/0xFF
 * is 10/21/31 in 5 bits and 21/42/63 in 6 bits (rounded to nearest). */
static const uint32_t px_rgb888[CON_COLOR_COUNT] = {
    0x000000, 0x0000AA, 0x00AA00, 0x00AAAA, 0xAA0000, 0xAA00AA, 0xAA5500, 0xAAAAAA,
    0x555555, 0x5555FF, 0x55FF55, 0x55FFFF, 0xFF5555, 0xFF55FF, 0xFFFF55, 0xFFFFFF,
};
#define PX565_BLACK      0x0000
#define PX565_BLUE       0x0015 /* 0,0,21 */
#define PX565_LIGHT_GREY 0xAD55 /* 21,42,21 */
#define PX565_LIGHT_RED  0xFAAA /* 31,21,10 */
#define PX565_YELLOW     0xFFEA /* 31,63,10 */
#define PX555_LIGHT_RED  0x7D4A /* 31,10,10 */
#define PX555_BLUE       0x0015
#define PXBGR_LIGHT_RED  0x5555FF
#define PXBGR_BLUE       0xAA0000

static void fb_alloc(struct fbuf *b, uint32_t w, uint32_t h, enum layout l, uint32_t pad)
{
    static const struct {
        uint8_t bpp, rp, rs, gp, gs, bp, bs;
    } lay[] = {
        [RGB888] = {32, 16, 8, 8, 8, 0, 8},
        [BGR888] = {32, 0, 8, 8, 8, 16, 8},
        [RGB565] = {16, 11, 5, 5, 6, 0, 5},
        [RGB555] = {15, 10, 5, 5, 5, 0, 5},
    };

    memset(b, 0, sizeof(*b));
    b->info.bpp = lay[l].bpp;
    b->info.red_pos = lay[l].rp;
    b->info.red_size = lay[l].rs;
    b->info.green_pos = lay[l].gp;
    b->info.green_size = lay[l].gs;
    b->info.blue_pos = lay[l].bp;
    b->info.blue_size = lay[l].bs;
    b->bytespp = (b->info.bpp + 7) / 8;
    b->info.width = w;
    b->info.height = h;
    b->info.pitch = w * b->bytespp + pad;
    b->size = (size_t)b->info.pitch * h;
    b->mem = malloc(b->size + GUARD_BYTES);
    assert_non_null(b->mem);
    memset(b->mem, POISON, b->size + GUARD_BYTES);
    b->info.base = (uintptr_t)b->mem;
}

/* 24 bpp: the same channel positions as RGB888, three bytes a pixel. */
static void fb_alloc24(struct fbuf *b, uint32_t w, uint32_t h, uint32_t pad)
{
    fb_alloc(b, w, h, RGB888, 0);
    free(b->mem);
    b->info.bpp = 24;
    b->bytespp = 3;
    b->info.pitch = w * 3 + pad;
    b->size = (size_t)b->info.pitch * h;
    b->mem = malloc(b->size + GUARD_BYTES);
    assert_non_null(b->mem);
    memset(b->mem, POISON, b->size + GUARD_BYTES);
    b->info.base = (uintptr_t)b->mem;
}

static uint32_t px_at(const struct fbuf *b, uint32_t x, uint32_t y)
{
    const uint8_t *p = b->mem + (size_t)y * b->info.pitch + (size_t)x * b->bytespp;
    uint32_t v = 0;

    for (unsigned i = 0; i < b->bytespp; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

/* Nothing past the visible pixels of each row, and nothing in the guard, was written. */
static void expect_untouched_outside(const struct fbuf *b)
{
    size_t row_used = (size_t)b->info.width * b->bytespp;

    for (uint32_t y = 0; y < b->info.height; y++)
        for (size_t i = row_used; i < b->info.pitch; i++)
            if (b->mem[(size_t)y * b->info.pitch + i] != POISON)
                fail_msg("row padding written: row %u byte %zu", y, i);
    for (size_t i = 0; i < GUARD_BYTES; i++)
        if (b->mem[b->size + i] != POISON)
            fail_msg("guard written at +%zu past the framebuffer", i);
}

/* The cell at (row, col) shows glyph in fg on bg, pixel for pixel. */
static void expect_cell(const struct fbuf *b, const struct tfont *f, uint32_t glyph, unsigned row,
                        unsigned col, uint32_t fg, uint32_t bg)
{
    for (uint32_t y = 0; y < f->height; y++)
        for (uint32_t x = 0; x < f->width; x++) {
            uint32_t want = glyph_bit(f, glyph, x, y) ? fg : bg;
            uint32_t got = px_at(b, col * f->width + x, row * f->height + y);

            if (got != want)
                fail_msg("cell %u,%u glyph %u pixel %u,%u: got %#x want %#x", row, col, glyph, x, y,
                         got, want);
        }
}

/* Lat15 cell with the glyph the unicode table gives code point cp. */
static void expect_char(const struct fbuf *b, unsigned row, unsigned col, uint32_t cp, uint32_t fg,
                        uint32_t bg)
{
    int g = lat15_glyph_of(cp);

    if (g < 0)
        fail_msg("U+%04X not in the font", cp);
    expect_cell(b, &lat15_font, (uint32_t)g, row, col, fg, bg);
}

#define GREY  px_rgb888[CON_LIGHT_GREY]
#define BLACK px_rgb888[CON_BLACK]

static void puts_fb(const char *s)
{
    fbcon_write(s, strlen(s));
}

static void init_lat15(struct fbuf *b)
{
    assert_int_equal(fbcon_init(&b->info, lat15.p, lat15.len), 0);
    assert_string_equal(fbcon_init_detail(), "ok");
}

/* ------------------------------------------------------------------ tests */

/* Runs first: until an fbcon_init() succeeds everything is a no-op, and a failing first
 * init does not touch the screen. */
static void test_noop_before_init(void **state)
{
    struct fbuf b;
    uint8_t bad[64] = {0x36, 0x04, 0x00, 0x10}; /* PSF1 header, glyphs missing */
    uint32_t w = 1, h = 1, cw = 1, ch = 1;

    (void)state;
    assert_int_equal(fbcon_cols(), 0);
    assert_int_equal(fbcon_rows(), 0);
    fbcon_geometry(&w, &h, &cw, &ch);
    assert_int_equal(w | h | cw | ch, 0);
    fbcon_putc('x');
    fbcon_write("abc\n", 4);
    fbcon_clear();
    fb_alloc(&b, 64, 32, RGB888, 0);
    assert_int_equal(fbcon_init(&b.info, bad, sizeof(bad)), E_INVAL);
    fbcon_putc('x');
    fbcon_write("abc\n", 4);
    fbcon_clear();
    fbcon_fill(0, 0, 64, 32, CON_WHITE);
    assert_int_equal(fbcon_cols(), 0);
    for (size_t i = 0; i < b.size; i++)
        if (b.mem[i] != POISON)
            fail_msg("byte %zu of the framebuffer written", i);
    free(b.mem);
}

/* The file really is identity-mapped for ASCII; fbcon does not rely on it (see the PSF2
 * permutation test), but a kernel without a table walk would draw the same. */
static void test_lat15_ascii_is_identity(void **state)
{
    (void)state;
    for (uint32_t cp = 0x20; cp < 0x7F; cp++)
        assert_int_equal(lat15_glyph_of(cp), cp);
    assert_int_equal(lat15_glyph_of(0x01), -1);
}

static void test_glyph_32bpp(void **state)
{
    struct fbuf b;

    (void)state;
    fb_alloc(&b, 640, 480, RGB888, 64);
    init_lat15(&b);
    assert_int_equal(fbcon_cols(), 80);
    assert_int_equal(fbcon_rows(), 30);
    fbcon_set_color(CON_WHITE, CON_BLUE);
    fbcon_putc('A');
    expect_char(&b, 0, 0, 'A', px_rgb888[CON_WHITE], px_rgb888[CON_BLUE]);
    expect_char(&b, 0, 1, ' ', GREY, BLACK);
    /* Every colour as a background, in a space's pixels. */
    for (int c = 0; c < CON_COLOR_COUNT; c++) {
        fbcon_set_color(CON_BLACK, (enum con_color)c);
        fbcon_putc(' ');
        assert_int_equal(px_at(&b, (1 + c) * 8, 0), px_rgb888[c]);
    }
    fbcon_set_color(CON_LIGHT_GREEN, CON_BLACK);
    fbcon_putc('R'); /* 'A' is mirror-symmetric: 'R' catches reversed bit order */
    expect_char(&b, 0, 17, 'R', px_rgb888[CON_LIGHT_GREEN], BLACK);
    expect_untouched_outside(&b);
    free(b.mem);
}

static void test_glyph_32bpp_bgr(void **state)
{
    struct fbuf b;

    (void)state;
    fb_alloc(&b, 320, 200, BGR888, 0);
    init_lat15(&b);
    fbcon_set_color(CON_LIGHT_RED, CON_BLUE);
    fbcon_putc('Q');
    expect_char(&b, 0, 0, 'Q', PXBGR_LIGHT_RED, PXBGR_BLUE);
    expect_untouched_outside(&b);
    free(b.mem);
}

/* 24 bpp with a width that leaves a 5-pixel strip right of the text and an odd pitch. */
static void test_glyph_24bpp(void **state)
{
    struct fbuf b;

    (void)state;
    fb_alloc24(&b, 637, 200, 3);
    init_lat15(&b);
    assert_int_equal(fbcon_cols(), 79);
    assert_int_equal(fbcon_rows(), 12);
    fbcon_set_color(CON_YELLOW, CON_BLUE);
    puts_fb("Ag");
    expect_char(&b, 0, 0, 'A', px_rgb888[CON_YELLOW], px_rgb888[CON_BLUE]);
    expect_char(&b, 0, 1, 'g', px_rgb888[CON_YELLOW], px_rgb888[CON_BLUE]);
    for (uint32_t y = 0; y < 200; y++)
        for (uint32_t x = 632; x < 637; x++)
            assert_int_equal(px_at(&b, x, y), BLACK);
    expect_untouched_outside(&b);
    free(b.mem);
}

static void test_glyph_16bpp_and_15bpp(void **state)
{
    struct fbuf b;

    (void)state;
    fb_alloc(&b, 200, 100, RGB565, 8);
    init_lat15(&b);
    fbcon_set_color(CON_LIGHT_RED, CON_BLUE);
    fbcon_putc('A');
    fbcon_set_color(CON_YELLOW, CON_BLACK);
    fbcon_putc('z');
    expect_char(&b, 0, 0, 'A', PX565_LIGHT_RED, PX565_BLUE);
    expect_char(&b, 0, 1, 'z', PX565_YELLOW, PX565_BLACK);
    expect_char(&b, 0, 2, ' ', PX565_LIGHT_GREY, PX565_BLACK);
    expect_untouched_outside(&b);
    free(b.mem);

    fb_alloc(&b, 200, 100, RGB555, 0);
    init_lat15(&b);
    fbcon_set_color(CON_LIGHT_RED, CON_BLUE);
    fbcon_putc('A');
    expect_char(&b, 0, 0, 'A', PX555_LIGHT_RED, PX555_BLUE);
    expect_untouched_outside(&b);
    free(b.mem);
}

/* After init every visible pixel, margins included, is background; a string lands in order. */
static void test_string_and_margins(void **state)
{
    static const char msg[] = "Hello, world: 0123456789 ~{}|";
    struct fbuf b;

    (void)state;
    fb_alloc(&b, 100, 40, RGB888, 16); /* 12x2 cells, 4 px right, 8 px below */
    init_lat15(&b);
    for (uint32_t y = 0; y < 40; y++)
        for (uint32_t x = 0; x < 100; x++)
            assert_int_equal(px_at(&b, x, y), BLACK);
    puts_fb(msg); /* 29 characters: wraps twice, scrolls once */
    for (unsigned i = 12; i < 29; i++)
        expect_char(&b, (i - 12) / 12, (i - 12) % 12, (uint8_t)msg[i], GREY, BLACK);
    expect_untouched_outside(&b);
    free(b.mem);
}

static void test_newline_and_cr(void **state)
{
    struct fbuf b;

    (void)state;
    fb_alloc(&b, 160, 64, RGB888, 0);
    init_lat15(&b);
    puts_fb("ab\ncd\rX");
    expect_char(&b, 0, 0, 'a', GREY, BLACK);
    expect_char(&b, 0, 1, 'b', GREY, BLACK);
    expect_char(&b, 1, 0, 'X', GREY, BLACK);
    expect_char(&b, 1, 1, 'd', GREY, BLACK);
    expect_char(&b, 1, 2, ' ', GREY, BLACK);
    free(b.mem);
}

static void test_tab(void **state)
{
    struct fbuf b;

    (void)state;
    fb_alloc(&b, 160, 64, RGB888, 0); /* 20 columns: stops at 8 and 16, then the wrap */
    init_lat15(&b);
    puts_fb("a\tb\n1234567\tc\n12345678\td\n");
    expect_char(&b, 0, 8, 'b', GREY, BLACK);
    expect_char(&b, 0, 1, ' ', GREY, BLACK);
    expect_char(&b, 1, 8, 'c', GREY, BLACK);
    expect_char(&b, 2, 16, 'd', GREY, BLACK);
    /* From column 17 the next stop is past the edge: the next character starts a new line. */
    puts_fb("12345678901234567\t");
    expect_char(&b, 3, 16, '7', GREY, BLACK);
    /* Row 3 was the last: "e" scrolls the screen and sits at the start of the new row. */
    puts_fb("e");
    expect_char(&b, 2, 16, '7', GREY, BLACK);
    expect_char(&b, 3, 0, 'e', GREY, BLACK);
    expect_char(&b, 3, 1, ' ', GREY, BLACK);
    free(b.mem);
}

static void test_backspace(void **state)
{
    struct fbuf b;

    (void)state;
    fb_alloc(&b, 160, 64, RGB888, 0);
    init_lat15(&b);
    puts_fb("\bY"); /* at column 0 it stays there */
    expect_char(&b, 0, 0, 'Y', GREY, BLACK);
    puts_fb("\nab\bX\ncd\b"); /* not erasing: 'd' stays */
    expect_char(&b, 1, 0, 'a', GREY, BLACK);
    expect_char(&b, 1, 1, 'X', GREY, BLACK);
    expect_char(&b, 2, 1, 'd', GREY, BLACK);
    free(b.mem);
}

static void test_deferred_wrap(void **state)
{
    struct fbuf b;

    (void)state;
    fb_alloc(&b, 80, 64, RGB888, 0); /* 10 columns */
    init_lat15(&b);
    puts_fb("0123456789\nx"); /* a full line then '\n': no empty line */
    expect_char(&b, 0, 9, '9', GREY, BLACK);
    expect_char(&b, 1, 0, 'x', GREY, BLACK);
    puts_fb("\n0123456789y"); /* a full line then a character: it wraps */
    expect_char(&b, 3, 0, 'y', GREY, BLACK);
    puts_fb("\r\n0123456789\bZ"); /* backspace from the pending wrap hits column 9 */
    expect_char(&b, 3, 9, 'Z', GREY, BLACK);
    free(b.mem);
}

/* Scrolling moves every text row up by exactly one row of glyph pixels. */
static void test_scroll_moves_rows(void **state)
{
    struct fbuf b;
    uint8_t *before;
    size_t band;

    (void)state;
    fb_alloc(&b, 84, 70, RGB888, 8); /* 10x4 cells plus margins */
    init_lat15(&b);
    band = (size_t)16 * b.info.pitch;
    puts_fb("row 0 AAA\nrow 1 BBB\nrow 2 CCC\nrow 3 DDD");
    before = malloc(b.size);
    memcpy(before, b.mem, b.size);
    fbcon_set_color(CON_WHITE, CON_BLUE);
    puts_fb("\nE");
    for (unsigned r = 0; r < 3; r++)
        assert_memory_equal(b.mem + r * band, before + (r + 1) * band, band);
    expect_char(&b, 3, 0, 'E', px_rgb888[CON_WHITE], px_rgb888[CON_BLUE]);
    /* The new row is blank in the colours current when it scrolled in. */
    for (unsigned c = 1; c < 10; c++)
        expect_char(&b, 3, c, ' ', px_rgb888[CON_WHITE], px_rgb888[CON_BLUE]);
    /* The margin below the text grid is not part of the scroll. */
    assert_memory_equal(b.mem + 4 * band, before + 4 * band, b.size - 4 * band);
    expect_untouched_outside(&b);
    free(before);
    free(b.mem);
}

/* Drawing at a place: glyphs in the given colours, clipped at the row end; a halves cell is
 * its top half in one colour and the rest in the other, and scrolling keeps it a halves
 * cell; the cursor does not move. */
static void test_put_at_and_halves(void **state)
{
    struct fbuf b;

    (void)state;
    fb_alloc(&b, 84, 70, RGB888, 8); /* 10x4 cells plus margins */
    init_lat15(&b);
    fbcon_put_at(1, 8, "xyz", 3, CON_YELLOW, CON_BLUE);
    expect_char(&b, 1, 8, 'x', px_rgb888[CON_YELLOW], px_rgb888[CON_BLUE]);
    expect_char(&b, 1, 9, 'y', px_rgb888[CON_YELLOW], px_rgb888[CON_BLUE]);
    expect_char(&b, 2, 0, ' ', GREY, BLACK); /* 'z' dropped, not wrapped */
    fbcon_put_halves(3, 9, CON_WHITE, CON_RED);
    fbcon_put_halves(4, 0, CON_WHITE, CON_RED); /* below the grid */
    for (uint32_t y = 0; y < 16; y++)
        for (uint32_t x = 0; x < 8; x++)
            assert_int_equal(px_at(&b, 9 * 8 + x, 3 * 16 + y),
                             px_rgb888[y < 8 ? CON_WHITE : CON_RED]);
    puts_fb("A");
    expect_char(&b, 0, 0, 'A', GREY, BLACK); /* the cursor was still home */
    puts_fb("\n\n\n\n");                     /* one scroll: the halves cell moves up a row */
    for (uint32_t y = 0; y < 16; y++)
        assert_int_equal(px_at(&b, 9 * 8, 2 * 16 + y), px_rgb888[y < 8 ? CON_WHITE : CON_RED]);
    expect_untouched_outside(&b);
    free(b.mem);
}

/* A picture of pixels: exactly the rectangle, clipped at the screen's right and bottom
 * edges (the margins beyond the text grid included), and the geometry it is placed by. */
static void test_fill_and_geometry(void **state)
{
    struct fbuf b;
    uint32_t w, h, cw, ch;

    (void)state;
    fb_alloc(&b, 84, 70, RGB888, 8); /* 10x4 cells plus margins */
    init_lat15(&b);
    fbcon_geometry(&w, &h, &cw, &ch);
    assert_int_equal(w, 84);
    assert_int_equal(h, 70);
    assert_int_equal(cw, 8);
    assert_int_equal(ch, 16);
    fbcon_fill(3, 5, 4, 2, CON_WHITE);
    fbcon_fill(80, 66, 10, 10, CON_RED); /* runs off the right and bottom edges */
    fbcon_fill(84, 0, 1, 1, CON_RED);    /* right of the screen */
    for (uint32_t y = 0; y < 70; y++)
        for (uint32_t x = 0; x < 84; x++)
            assert_int_equal(px_at(&b, x, y), x >= 3 && x < 7 && y >= 5 && y < 7
                                                  ? px_rgb888[CON_WHITE]
                                              : x >= 80 && y >= 66 ? px_rgb888[CON_RED]
                                                                   : BLACK);
    expect_untouched_outside(&b);
    free(b.mem);
}

/* After many scrolls the screen shows exactly the last rows lines, each drawn right. */
static void test_scroll_many_lines(void **state)
{
    enum { LINES = 500, COLS = 30, ROWS = 8 };
    struct fbuf b;
    char line[COLS + 2];

    (void)state;
    fb_alloc(&b, COLS * 8, ROWS * 16, RGB565, 0);
    init_lat15(&b);
    for (unsigned i = 0; i < LINES; i++) {
        int n = snprintf(line, sizeof(line), "line %u %.*s", i, (int)(i % 20),
                         "abcdefghijklmnopqrstuvwxyz");

        fbcon_set_color((enum con_color)(i % 15 + 1), CON_BLACK);
        fbcon_write(line, (size_t)n);
        if (i + 1 < LINES)
            fbcon_putc('\n');
    }
    for (unsigned r = 0; r < ROWS; r++) {
        unsigned i = LINES - ROWS + r;
        int n = snprintf(line, sizeof(line), "line %u %.*s", i, (int)(i % 20),
                         "abcdefghijklmnopqrstuvwxyz");
        static const uint32_t px565[CON_COLOR_COUNT] = {
            0x0000, 0x0015, 0x0540, 0x0555, 0xA800, 0xA815, 0xAAA0, 0xAD55,
            0x52AA, 0x52BF, 0x57EA, 0x57FF, 0xFAAA, 0xFABF, 0xFFEA, 0xFFFF,
        };

        for (unsigned c = 0; c < COLS; c++) {
            uint32_t ch = c < (unsigned)n ? (uint8_t)line[c] : ' ';
            /* Cells past the text are blanks made by a scroll, in that line's colours;
             * the blank's foreground does not show. */
            expect_char(&b, r, c, ch, px565[i % 15 + 1], 0x0000);
        }
    }
    expect_untouched_outside(&b);
    free(b.mem);
}

/* A screen of one cell and no spare byte anywhere: nothing outside it is ever written. */
static void test_tiny_framebuffer(void **state)
{
    static const char noise[] = "xyz\n\t\b\rq\t\t\n\b\bw";
    struct fbuf b;

    (void)state;
    fb_alloc(&b, 8, 16, RGB888, 0);
    init_lat15(&b);
    assert_int_equal(fbcon_cols(), 1);
    assert_int_equal(fbcon_rows(), 1);
    for (int i = 0; i < 50; i++)
        puts_fb(noise);
    expect_char(&b, 0, 0, 'w', GREY, BLACK);
    expect_untouched_outside(&b);
    free(b.mem);

    fb_alloc24(&b, 9, 17, 0); /* 1x1 cells and 1-pixel margins, 27-byte pitch */
    init_lat15(&b);
    for (int i = 0; i < 50; i++)
        puts_fb(noise);
    fbcon_clear();
    expect_untouched_outside(&b);
    free(b.mem);

    fb_alloc(&b, 7, 16, RGB565, 0); /* narrower than one glyph */
    assert_int_equal(fbcon_init(&b.info, lat15.p, lat15.len), E_RANGE);
    expect_untouched_outside(&b);
    for (size_t i = 0; i < b.size; i++)
        assert_int_equal(b.mem[i], POISON);
    free(b.mem);
}

/* ---- malformed fonts */

static void le32_put(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A PSF2 font: header, count glyphs of w x h from glyphs (or zeros), then table if any. */
static struct bytes psf2_make(uint32_t count, uint32_t w, uint32_t h, const uint8_t *glyphs,
                              const uint8_t *table, size_t table_len)
{
    uint32_t gbytes = (w + 7) / 8 * h;
    size_t len = 32 + (size_t)count * gbytes + table_len;
    struct bytes f = {calloc(1, len), len};

    le32_put(f.p, 0x864AB572);
    le32_put(f.p + 4, 0);
    le32_put(f.p + 8, 32);
    le32_put(f.p + 12, table ? 1 : 0);
    le32_put(f.p + 16, count);
    le32_put(f.p + 20, gbytes);
    le32_put(f.p + 24, h);
    le32_put(f.p + 28, w);
    if (glyphs)
        memcpy(f.p + 32, glyphs, (size_t)count * gbytes);
    if (table)
        memcpy(f.p + 32 + (size_t)count * gbytes, table, table_len);
    return f;
}

static struct bytes copy_of(const struct bytes *src, size_t len)
{
    struct bytes f = {malloc(len ? len : 1), len};

    memcpy(f.p, src->p, len < src->len ? len : src->len);
    return f;
}

/* A rejected init returns err with a detail containing why, and changes nothing: the console
 * set up before keeps its font, position and screen. */
static void expect_rejected(struct bytes font, int err, const char *why)
{
    struct fbuf b;
    uint8_t *before;

    fb_alloc(&b, 160, 64, RGB888, 0);
    init_lat15(&b);
    puts_fb("ok");
    before = malloc(b.size);
    memcpy(before, b.mem, b.size);
    if (fbcon_init(&b.info, font.p, font.len) != err)
        fail_msg("font \"%s\": want %s, detail \"%s\"", why, err_name(err), fbcon_init_detail());
    if (!strstr(fbcon_init_detail(), why))
        fail_msg("detail \"%s\" does not say \"%s\"", fbcon_init_detail(), why);
    assert_memory_equal(b.mem, before, b.size);
    fbcon_putc('!');
    expect_char(&b, 0, 2, '!', GREY, BLACK);
    assert_int_equal(fbcon_cols(), 20);
    free(before);
    free(b.mem);
    free(font.p);
}

static void test_bad_fonts(void **state)
{
    size_t glyph_end = 4 + 256 * 16;
    struct bytes f;

    (void)state;
    f = copy_of(&lat15, lat15.len);
    f.p[0] ^= 0xFF;
    expect_rejected(f, E_INVAL, "bad magic");
    expect_rejected(copy_of(&lat15, 0), E_INVAL, "bad magic");
    expect_rejected(copy_of(&lat15, 3), E_INVAL, "truncated header");
    expect_rejected(copy_of(&lat15, glyph_end - 1), E_INVAL, "truncated glyph data");
    /* Cut inside the unicode table: the last glyphs' entries have no terminator. */
    expect_rejected(copy_of(&lat15, lat15.len - 1), E_INVAL, "unterminated unicode table");
    expect_rejected(copy_of(&lat15, glyph_end), E_INVAL, "unterminated unicode table");
    f = copy_of(&lat15, lat15.len);
    f.p[3] = 0;
    expect_rejected(f, E_INVAL, "zero-height");

    expect_rejected(psf2_make(0, 8, 16, NULL, NULL, 0), E_INVAL, "no glyphs");
    expect_rejected(psf2_make(4, 0, 16, NULL, NULL, 0), E_INVAL, "zero-sized");
    expect_rejected(psf2_make(4, 8, 0, NULL, NULL, 0), E_INVAL, "zero-sized");
    f = psf2_make(4, 8, 16, NULL, NULL, 0);
    le32_put(f.p + 4, 1);
    expect_rejected(f, E_NOTSUP, "version");
    f = psf2_make(4, 8, 16, NULL, NULL, 0);
    le32_put(f.p + 8, 16);
    expect_rejected(f, E_INVAL, "header size too small");
    f = psf2_make(4, 8, 16, NULL, NULL, 0);
    le32_put(f.p + 8, 4096);
    expect_rejected(f, E_INVAL, "truncated header");
    f = psf2_make(4, 8, 16, NULL, NULL, 0);
    le32_put(f.p + 20, 17);
    expect_rejected(f, E_INVAL, "glyph size");
    f = psf2_make(4, 8, 16, NULL, NULL, 0);
    f.len--;
    expect_rejected(f, E_INVAL, "truncated glyph data");
    /* A count whose byte size would overflow 32 bits must not wrap around the check. */
    f = psf2_make(4, 8, 16, NULL, NULL, 0);
    le32_put(f.p + 16, 0x80000000u);
    expect_rejected(f, E_INVAL, "truncated glyph data");
    f = psf2_make(2, 8, 16, NULL,
                  (const uint8_t *)"A\xff"
                                   "B",
                  3);
    expect_rejected(f, E_INVAL, "unterminated unicode table");
    /* Well-formed, but a glyph does not fit on the 160x64 screen. */
    expect_rejected(psf2_make(4, 161, 16, NULL, NULL, 0), E_RANGE, "larger than the screen");
    expect_rejected(psf2_make(4, 8, 65, NULL, NULL, 0), E_RANGE, "larger than the screen");
}

static void test_bad_framebuffers(void **state)
{
    struct fbuf b;
    struct fb_info fi;

    (void)state;
    fb_alloc(&b, 64, 32, RGB888, 0);
    init_lat15(&b);
    puts_fb("ok");
#define EXPECT_FB(field_change, err, why)                                                          \
    do {                                                                                           \
        fi = b.info;                                                                               \
        field_change;                                                                              \
        assert_int_equal(fbcon_init(&fi, lat15.p, lat15.len), err);                                \
        if (!strstr(fbcon_init_detail(), why))                                                     \
            fail_msg("detail \"%s\" lacks \"%s\"", fbcon_init_detail(), why);                      \
    } while (0)
    assert_int_equal(fbcon_init(NULL, lat15.p, lat15.len), E_INVAL);
    EXPECT_FB(fi.base = 0, E_INVAL, "no base");
    EXPECT_FB(fi.width = 0, E_INVAL, "zero size");
    EXPECT_FB(fi.height = 0, E_INVAL, "zero size");
    EXPECT_FB(fi.bpp = 8, E_NOTSUP, "bits per pixel");
    EXPECT_FB(fi.bpp = 0, E_NOTSUP, "bits per pixel");
    EXPECT_FB(fi.green_size = 0, E_NOTSUP, "channel");
    EXPECT_FB(fi.red_size = 17, E_NOTSUP, "channel");
    EXPECT_FB((fi.bpp = 16, fi.red_pos = 11, fi.red_size = 8), E_NOTSUP, "channel");
    EXPECT_FB(fi.blue_pos = 30, E_NOTSUP, "channel");
    EXPECT_FB(fi.pitch = 64 * 4 - 1, E_INVAL, "pitch");
    EXPECT_FB(fi.pitch = 64 * 4 + 2, E_ALIGN, "multiple");
    EXPECT_FB(fi.base += 2, E_ALIGN, "multiple");
#undef EXPECT_FB
    fbcon_putc('!');
    expect_char(&b, 0, 2, '!', GREY, BLACK);
    expect_untouched_outside(&b);
    free(b.mem);
}

/* ---- glyph lookup */

/* Four 8x8 glyphs, each row byte the glyph number repeated in a distinct pattern. */
static const uint8_t four_glyphs[4 * 8] = {
    0x81, 0x42, 0x24, 0x18, 0x18, 0x24, 0x42, 0x81, /* 0: X, claims '?' */
    0xF0, 0xF0, 0xF0, 0xF0, 0x0F, 0x0F, 0x0F, 0x0F, /* 1: U+00E9 */
    0xFF, 0x80, 0x80, 0xFF, 0x01, 0x01, 0x01, 0xFF, /* 2: 'A' */
    0xAA, 0x55, 0xAA, 0x55, 0xAA, 0x55, 0xAA, 0x55, /* 3: 'Z', and 'A' again */
};

/* The map comes from the table, not from byte == index: 'A' is glyph 2 here. */
static void test_psf2_unicode_table_maps_glyphs(void **state)
{
    static const uint8_t table[] = "?\xff" /* glyph 0 */
                                   "\xc3\xa9\xfe"
                                   "B\xcc\x81\xff" /* glyph 1: U+00E9; then a sequence with 'B' */
                                   "\xe2\x96\x91"
                                   "A\xff"   /* glyph 2: U+2591 (skipped), 'A' */
                                   "ZA\xff"; /* glyph 3: 'Z'; 'A' is already glyph 2's */
    const struct tfont tf = {four_glyphs, 4, 8, 8, 1, 8};
    struct bytes f = psf2_make(4, 8, 8, four_glyphs, table, sizeof(table) - 1);
    uint32_t W = px_rgb888[CON_WHITE];
    struct fbuf b;

    (void)state;
    fb_alloc(&b, 64, 16, RGB888, 0);
    assert_int_equal(fbcon_init(&b.info, f.p, f.len), 0);
    fbcon_set_color(CON_WHITE, CON_BLACK);
    puts_fb("AZ\xe9"
            "BC\x01");
    expect_cell(&b, &tf, 2, 0, 0, W, BLACK);
    expect_cell(&b, &tf, 3, 0, 1, W, BLACK);
    expect_cell(&b, &tf, 1, 0, 2, W, BLACK);
    expect_cell(&b, &tf, 0, 0, 3, W, BLACK); /* 'B' only appears in a sequence */
    expect_cell(&b, &tf, 0, 0, 4, W, BLACK); /* 'C' has no glyph: '?' */
    expect_cell(&b, &tf, 0, 0, 5, W, BLACK);
    free(f.p);

    /* A table without '?': anything unmapped is glyph 0. */
    f = psf2_make(4, 8, 8, four_glyphs,
                  (const uint8_t *)"A\xff"
                                   "B\xff"
                                   "C\xff"
                                   "D\xff",
                  8);
    assert_int_equal(fbcon_init(&b.info, f.p, f.len), 0);
    fbcon_set_color(CON_WHITE, CON_BLACK);
    puts_fb("DE?");
    expect_cell(&b, &tf, 3, 0, 0, W, BLACK);
    expect_cell(&b, &tf, 0, 0, 1, W, BLACK);
    expect_cell(&b, &tf, 0, 0, 2, W, BLACK);
    free(f.p);
    free(b.mem);
}

/* Without a table a byte is a glyph index; past the last glyph it is '?' or, if the font is
 * too small to have one, glyph 0. */
static void test_no_table_fallback(void **state)
{
    enum { N = 66 };
    uint8_t glyphs[N * 8];
    const struct tfont tf = {glyphs, N, 8, 8, 1, 8};
    const struct tfont tf4 = {four_glyphs, 4, 8, 8, 1, 8};
    struct bytes f;
    struct fbuf b;

    (void)state;
    for (unsigned i = 0; i < sizeof(glyphs); i++)
        glyphs[i] = (uint8_t)(i * 37 + i / 8);
    f = psf2_make(N, 8, 8, glyphs, NULL, 0);
    fb_alloc(&b, 64, 16, RGB888, 0);
    assert_int_equal(fbcon_init(&b.info, f.p, f.len), 0);
    puts_fb("AB\x01");
    expect_cell(&b, &tf, 'A', 0, 0, GREY, BLACK);
    expect_cell(&b, &tf, '?', 0, 1, GREY, BLACK);
    expect_cell(&b, &tf, 1, 0, 2, GREY, BLACK);
    free(f.p);

    f = psf2_make(4, 8, 8, four_glyphs, NULL, 0);
    assert_int_equal(fbcon_init(&b.info, f.p, f.len), 0);
    puts_fb("\x03"
            "A");
    expect_cell(&b, &tf4, 3, 0, 0, GREY, BLACK);
    expect_cell(&b, &tf4, 0, 0, 1, GREY, BLACK);
    free(f.p);
    free(b.mem);
}

/* Lat15 bytes outside its table become '?'; Latin-1 bytes it has are drawn. */
static void test_lat15_outside_font(void **state)
{
    struct fbuf b;

    (void)state;
    fb_alloc(&b, 160, 32, RGB888, 0);
    init_lat15(&b);
    puts_fb("\x01\x7f\x80\x9f\xe9\xff");
    for (unsigned c = 0; c < 4; c++)
        expect_char(&b, 0, c, '?', GREY, BLACK);
    expect_char(&b, 0, 4, 0xE9, GREY, BLACK);
    expect_char(&b, 0, 5, 0xFF, GREY, BLACK);
    free(b.mem);
}

/* Glyphs wider than 8 pixels span several bytes per row, padded at the right. */
static void test_psf2_wide_glyphs(void **state)
{
    enum { N = 128, W = 10, H = 12, RB = 2 };
    static uint8_t glyphs[N * RB * H];
    const struct tfont tf = {glyphs, N, W, H, RB, RB * H};
    struct bytes f;
    struct fbuf b;

    (void)state;
    srand(7);
    for (unsigned i = 0; i < sizeof(glyphs); i++)
        glyphs[i] = (uint8_t)rand(); /* padding bits too: they must not show */
    f = psf2_make(N, W, H, glyphs, NULL, 0);
    fb_alloc24(&b, 45, 25, 1); /* 4x2 cells */
    assert_int_equal(fbcon_init(&b.info, f.p, f.len), 0);
    assert_int_equal(fbcon_cols(), 4);
    assert_int_equal(fbcon_rows(), 2);
    puts_fb("Wm#\n@~");
    expect_cell(&b, &tf, 'W', 0, 0, GREY, BLACK);
    expect_cell(&b, &tf, 'm', 0, 1, GREY, BLACK);
    expect_cell(&b, &tf, '#', 0, 2, GREY, BLACK);
    expect_cell(&b, &tf, '@', 1, 0, GREY, BLACK);
    expect_cell(&b, &tf, '~', 1, 1, GREY, BLACK);
    expect_untouched_outside(&b);
    free(f.p);
    free(b.mem);
}

/* Lat15 rewritten as PSF2 (UTF-8 table) draws the same pixels as the PSF1 original. */
static void test_psf2_lat15_matches_psf1(void **state)
{
    static const char text[] = "PSF2 vs PSF1: The quick brown fox \xe9\xe8\xfc\t|\n\x01!";
    const uint8_t *src = lat15.p + 4 + 256 * 16, *end = lat15.p + lat15.len;
    uint8_t *table = malloc((size_t)(end - src) * 2), *t = table;
    struct bytes f;
    struct fbuf b1, b2;

    (void)state;
    for (; src + 1 < end; src += 2) {
        uint32_t v = src[0] | src[1] << 8;

        if (v == 0xFFFF || v == 0xFFFE) {
            *t++ = v == 0xFFFF ? 0xFF : 0xFE;
        } else if (v < 0x80) {
            *t++ = (uint8_t)v;
        } else if (v < 0x800) {
            *t++ = (uint8_t)(0xC0 | v >> 6);
            *t++ = (uint8_t)(0x80 | (v & 0x3F));
        } else {
            *t++ = (uint8_t)(0xE0 | v >> 12);
            *t++ = (uint8_t)(0x80 | ((v >> 6) & 0x3F));
            *t++ = (uint8_t)(0x80 | (v & 0x3F));
        }
    }
    f = psf2_make(256, 8, 16, lat15.p + 4, table, (size_t)(t - table));
    fb_alloc(&b1, 400, 48, RGB888, 0);
    fb_alloc(&b2, 400, 48, RGB888, 0);
    init_lat15(&b1);
    puts_fb(text);
    assert_int_equal(fbcon_init(&b2.info, f.p, f.len), 0);
    puts_fb(text);
    assert_memory_equal(b1.mem, b2.mem, b1.size);
    free(table);
    free(f.p);
    free(b1.mem);
    free(b2.mem);
}

/* A UEFI-sized screen for eyeballing (build/unit/fbcon.ppm), and a timing of the scroll. */
static void test_dump_screen(void **state)
{
    static const char *names[CON_COLOR_COUNT] = {
        "black",     "blue",          "green",     "cyan",       "red",         "magenta",
        "brown",     "light grey",    "dark grey", "light blue", "light green", "light cyan",
        "light red", "light magenta", "yellow",    "white",
    };
    struct fbuf b;
    FILE *fp;
    clock_t t0;
    char line[160];

    (void)state;
    fb_alloc(&b, 1024, 768, RGB888, 0);
    init_lat15(&b);
    /* Lines shifted against each other: nearly every cell changes at every scroll, the
     * worst case for redrawing only what changed. */
    t0 = clock();
    for (int i = 0; i < 2000; i++) {
        int n =
            snprintf(line, sizeof(line), "%*sok %d scroll timing %.*s\n", i % 7, "", i, 90 - i % 7,
                     "=-+*#%@=-+*#%@=-+*#%@=-+*#%@=-+*#%@=-+*#%@=-+*#%@=-+*#%@=-+*#%@=-+*#%@=-+*#%@"
                     "=-+*#%@=-+*#%@");

        fbcon_write(line, (size_t)n);
    }
    print_message("2000 lines scrolled at 1024x768x32 in %.0f ms\n",
                  (double)(clock() - t0) * 1000.0 / CLOCKS_PER_SEC);
    /* No clear: the top of the dump shows the timing lines scrolled up. */
    fbcon_set_color(CON_WHITE, CON_BLUE);
    puts_fb(" btsx fbcon: Lat15-Terminus16, 1024x768x32 ");
    fbcon_set_color(CON_LIGHT_GREY, CON_BLACK);
    puts_fb("\n\nKTAP version 1\n1..3\nok 1 bts_basic\nnot ok 2 bts_overflow\n"
            "ok 3 bts_model # SKIP no BTS\n# 1 passed, 1 failed, 1 skipped\n\n");
    for (int c = 0; c < CON_COLOR_COUNT; c++) {
        fbcon_set_color((enum con_color)c, c == CON_BLACK ? CON_LIGHT_GREY : CON_BLACK);
        fbcon_write(names[c], strlen(names[c]));
        fbcon_set_color(CON_LIGHT_GREY, CON_BLACK);
        puts_fb(strlen(names[c]) < 8 ? "\t\t" : "\t");
        fbcon_set_color(c == CON_WHITE ? CON_BLACK : CON_WHITE, (enum con_color)c);
        puts_fb(" background ");
        /* Back to the default before '\n': a scroll blanks the new row in the current
         * colours, as a terminal does. */
        fbcon_set_color(CON_LIGHT_GREY, CON_BLACK);
        puts_fb("\n");
    }
    fbcon_set_color(CON_LIGHT_GREY, CON_BLACK);
    puts_fb(
        "\ntabs:\ta\tbb\tccc\tdddd|\nbackspace: abc\b\bX (aXc)\n"
        "Latin-1: \xe9\xe8\xea \xfc\xf6\xe4 \xc5\xd8\xdf \xa9\xb0\xb1  not in font: \x01\x02\x7f\n"
        "!\"#$%&'()*+,-./"
        "0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~\n");
    fp = fopen(FBCON_TEST_PPM, "wb");
    assert_non_null(fp);
    fprintf(fp, "P6\n%u %u\n255\n", b.info.width, b.info.height);
    for (uint32_t y = 0; y < b.info.height; y++)
        for (uint32_t x = 0; x < b.info.width; x++) {
            uint32_t px = px_at(&b, x, y);
            uint8_t rgb[3] = {(uint8_t)(px >> 16), (uint8_t)(px >> 8), (uint8_t)px};

            fwrite(rgb, 1, 3, fp);
        }
    assert_int_equal(fclose(fp), 0);
    expect_untouched_outside(&b);
    free(b.mem);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_noop_before_init),
        cmocka_unit_test(test_lat15_ascii_is_identity),
        cmocka_unit_test(test_glyph_32bpp),
        cmocka_unit_test(test_glyph_32bpp_bgr),
        cmocka_unit_test(test_glyph_24bpp),
        cmocka_unit_test(test_glyph_16bpp_and_15bpp),
        cmocka_unit_test(test_string_and_margins),
        cmocka_unit_test(test_newline_and_cr),
        cmocka_unit_test(test_tab),
        cmocka_unit_test(test_backspace),
        cmocka_unit_test(test_deferred_wrap),
        cmocka_unit_test(test_scroll_moves_rows),
        cmocka_unit_test(test_scroll_many_lines),
        cmocka_unit_test(test_tiny_framebuffer),
        cmocka_unit_test(test_put_at_and_halves),
        cmocka_unit_test(test_fill_and_geometry),
        cmocka_unit_test(test_bad_fonts),
        cmocka_unit_test(test_bad_framebuffers),
        cmocka_unit_test(test_psf2_unicode_table_maps_glyphs),
        cmocka_unit_test(test_no_table_fallback),
        cmocka_unit_test(test_lat15_outside_font),
        cmocka_unit_test(test_psf2_wide_glyphs),
        cmocka_unit_test(test_psf2_lat15_matches_psf1),
        cmocka_unit_test(test_dump_screen),
    };

    return cmocka_run_group_tests_name("fbcon", tests, group_setup, group_teardown);
}
