/* Host tests of the VGA text console (kernel/vga.c).
 *
 * The text buffer is an array with a poisoned guard after it; the I/O ports are stubs that
 * emulate the CRT controller (index/data pair) and the attribute controller (flip-flop port)
 * and record every access. The tests prove that
 *   - cells get the character and the attribute of the colours set, in the right place for
 *     '\n' '\r' '\t' '\b', deferred wrap and scrolling;
 *   - the hardware cursor registers always hold the cursor cell, and vga_write() moves the
 *     cursor once;
 *   - init shows the cursor (shaped from the mode's cell height, skew kept), turns blinking off
 *     without blanking the display, and rejects geometry that does not fit;
 *   - nothing outside the cols x rows cells is written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/errno.h"
#include "kernel/vga.h"

#define GUARD_CELLS 256
#define POISON      0xDEAD
#define BLANK       0x0720 /* ' ' light grey on black */
#define MAX_CELLS   (VGA_TEXT_WINDOW / 2)

static uint16_t text[MAX_CELLS + GUARD_CELLS];

/* ------------------------------------------------------------------ emulated ports */

#define CRTC_INDEX   0x3D4
#define CRTC_DATA    0x3D5
#define INPUT_STATUS 0x3DA
#define ATTR_ADDR    0x3C0
#define ATTR_READ    0x3C1
#define ATTR_PAS     0x20
#define LOG_MAX      4096

static uint8_t crtc[0x19], crtc_index;
static uint8_t attr[0x15], attr_index;
static bool attr_data_next; /* the flip-flop: next 0x3C0 write is data */
static bool attr_pas;       /* PAS as last written with an index */

static struct io {
    bool out;
    uint16_t port;
    uint8_t v;
} io_log[LOG_MAX];
static unsigned io_count;

static void io_record(bool out, uint16_t port, uint8_t v)
{
    if (io_count < LOG_MAX)
        io_log[io_count++] = (struct io){out, port, v};
}

void outb(uint16_t port, uint8_t v)
{
    io_record(true, port, v);
    switch (port) {
    case CRTC_INDEX:
        crtc_index = v;
        break;
    case CRTC_DATA:
        if (crtc_index >= sizeof(crtc))
            fail_msg("CRTC register %#x does not exist", crtc_index);
        crtc[crtc_index] = v;
        break;
    case ATTR_ADDR:
        if (attr_data_next) {
            attr[attr_index] = v;
        } else {
            attr_index = v & 0x1F;
            attr_pas = v & ATTR_PAS;
            if (attr_index >= sizeof(attr))
                fail_msg("attribute register %#x does not exist", attr_index);
        }
        attr_data_next = !attr_data_next;
        break;
    default:
        fail_msg("outb to unexpected port %#x", port);
    }
}

uint8_t inb(uint16_t port)
{
    io_record(false, port, 0);
    switch (port) {
    case CRTC_DATA:
        return crtc[crtc_index];
    case INPUT_STATUS:
        attr_data_next = false;
        return 0;
    case ATTR_READ:
        return attr[attr_index];
    default:
        fail_msg("inb from unexpected port %#x", port);
        return 0;
    }
}

/* The state GRUB could leave: 16-line cells, cursor disabled with skew 1, blinking on, and the
 * attribute flip-flop in an unknown state (data). */
static int setup(void **state)
{
    (void)state;
    for (size_t i = 0; i < MAX_CELLS + GUARD_CELLS; i++)
        text[i] = POISON;
    memset(crtc, 0, sizeof(crtc));
    memset(attr, 0, sizeof(attr));
    crtc[0x09] = 0x4F; /* line compare bit 9 set, max scan line 15 */
    crtc[0x0A] = 0x2D; /* disabled */
    crtc[0x0B] = 0x2E; /* skew 1, end 14 */
    attr[0x10] = 0x0C; /* blink + line graphics */
    attr_data_next = true;
    attr_pas = false;
    io_count = 0;
    return 0;
}

static unsigned cursor(void)
{
    return (unsigned)crtc[0x0E] << 8 | crtc[0x0F];
}

static void init_80x25(void)
{
    assert_int_equal(vga_init((uintptr_t)text, 80, 25), 0);
}

static void puts_vga(const char *s)
{
    vga_write(s, strlen(s));
}

static void expect_guard(size_t cells)
{
    for (size_t i = cells; i < MAX_CELLS + GUARD_CELLS; i++)
        if (text[i] != POISON)
            fail_msg("cell %zu past the screen written: %#x", i, text[i]);
}

#define AT(row, col) text[(row)*80 + (col)]

/* ------------------------------------------------------------------ tests */

static void test_init(void **state)
{
    (void)state;
    init_80x25();
    for (int i = 0; i < 80 * 25; i++)
        assert_int_equal(text[i], BLANK);
    expect_guard(80 * 25);
    assert_int_equal(crtc[0x0A], 14);   /* enabled, bottom two of 16 lines */
    assert_int_equal(crtc[0x0B], 0x2F); /* skew kept */
    assert_int_equal(crtc[0x09], 0x4F); /* only read */
    assert_int_equal(attr[0x10], 0x04); /* blink off, the rest kept */
    assert_true(attr_pas);              /* the display was not blanked */
    /* A mode without line graphics gets it: block characters join across 9-dot cells. */
    setup(NULL);
    attr[0x10] = 0x08;
    init_80x25();
    assert_int_equal(attr[0x10], 0x04);
    assert_true(attr_pas);        /* the display was not blanked */
    assert_false(attr_data_next); /* flip-flop left at "index" */
    assert_int_equal(cursor(), 0);
}

/* An 8-line cell mode (80x50) gets a cursor on lines 6-7. */
static void test_init_cursor_follows_cell_height(void **state)
{
    (void)state;
    crtc[0x09] = 0x07;
    crtc[0x0B] = 0x00;
    assert_int_equal(vga_init((uintptr_t)text, 80, 50), 0);
    assert_int_equal(crtc[0x0A], 6);
    assert_int_equal(crtc[0x0B], 7);
    expect_guard(80 * 50);
}

static void test_init_rejects_bad_geometry(void **state)
{
    (void)state;
    assert_int_equal(vga_init(0, 80, 25), E_INVAL);
    assert_int_equal(vga_init((uintptr_t)text, 0, 25), E_INVAL);
    assert_int_equal(vga_init((uintptr_t)text, 80, 0), E_INVAL);
    assert_int_equal(vga_init((uintptr_t)text, 200, 100), E_INVAL); /* 40000 bytes */
    /* The console is now off: nothing reaches memory or ports. */
    vga_putc('x');
    puts_vga("abc\n");
    vga_clear();
    assert_int_equal(io_count, 0);
    expect_guard(0);
    /* The largest geometry that fits the window is accepted. */
    assert_int_equal(vga_init((uintptr_t)text, 128, 128), 0);
    expect_guard(128 * 128);
}

static void test_putc_and_colors(void **state)
{
    (void)state;
    init_80x25();
    vga_putc('A');
    assert_int_equal(AT(0, 0), 0x0741);
    assert_int_equal(cursor(), 1);
    vga_set_color(CON_YELLOW, CON_BLUE);
    vga_putc('B');
    vga_set_color(CON_WHITE, CON_LIGHT_RED); /* a bright background: blink is off */
    vga_putc('\xe9');
    assert_int_equal(AT(0, 1), 0x1E42);
    assert_int_equal(AT(0, 2), 0xCFE9);
    assert_int_equal(AT(0, 3), BLANK);
    assert_int_equal(cursor(), 3);
    /* Clear uses the current colours and homes the cursor. */
    vga_clear();
    for (int i = 0; i < 80 * 25; i++)
        assert_int_equal(text[i], 0xCF20);
    assert_int_equal(cursor(), 0);
    expect_guard(80 * 25);
}

static void test_newline_cr_backspace(void **state)
{
    (void)state;
    init_80x25();
    puts_vga("ab\ncd\rX");
    assert_int_equal(AT(0, 0) & 0xFF, 'a');
    assert_int_equal(AT(1, 0) & 0xFF, 'X');
    assert_int_equal(AT(1, 1) & 0xFF, 'd');
    assert_int_equal(cursor(), 80 + 1);
    puts_vga("\n\bY\nab\bZ\ncd\b"); /* \b at column 0 stays; \b does not erase */
    assert_int_equal(AT(2, 0) & 0xFF, 'Y');
    assert_int_equal(AT(3, 0) & 0xFF, 'a');
    assert_int_equal(AT(3, 1) & 0xFF, 'Z');
    assert_int_equal(AT(4, 1) & 0xFF, 'd');
    assert_int_equal(cursor(), 4 * 80 + 1);
}

static void test_tab(void **state)
{
    (void)state;
    init_80x25();
    puts_vga("a\tb\n1234567\tc\n12345678\td\n");
    assert_int_equal(AT(0, 8) & 0xFF, 'b');
    assert_int_equal(AT(0, 1), BLANK); /* moved over, not written */
    assert_int_equal(AT(1, 8) & 0xFF, 'c');
    assert_int_equal(AT(2, 16) & 0xFF, 'd');
    /* From column 73 the next stop is the edge: the cursor waits in the last column and the
     * next character starts a new line. */
    for (int i = 0; i < 73; i++)
        vga_putc('-');
    vga_putc('\t');
    assert_int_equal(cursor(), 3 * 80 + 79);
    vga_putc('e');
    assert_int_equal(AT(4, 0) & 0xFF, 'e');
    assert_int_equal(AT(3, 79), BLANK);
}

static void test_deferred_wrap(void **state)
{
    (void)state;
    init_80x25();
    for (int i = 0; i < 80; i++)
        vga_putc((char)('0' + i % 10));
    assert_int_equal(cursor(), 79); /* pending wrap shows on the last column */
    puts_vga("\nx");                /* a full line then '\n': no empty line */
    assert_int_equal(AT(1, 0) & 0xFF, 'x');
    puts_vga("\r");
    for (int i = 0; i < 80; i++)
        vga_putc('=');
    vga_putc('y'); /* a full line then a character: it wraps */
    assert_int_equal(AT(2, 0) & 0xFF, 'y');
    assert_int_equal(cursor(), 2 * 80 + 1);
    puts_vga("\r");
    for (int i = 0; i < 80; i++)
        vga_putc('+');
    puts_vga("\bZ"); /* backspace from the pending wrap hits column 79 */
    assert_int_equal(AT(2, 79) & 0xFF, 'Z');
}

static void test_scroll(void **state)
{
    uint16_t before[80 * 25];

    (void)state;
    init_80x25();
    for (int r = 0; r < 25; r++) {
        for (int c = 0; c < 10; c++)
            vga_putc((char)('A' + r));
        if (r < 24)
            vga_putc('\n');
    }
    memcpy(before, text, sizeof(before));
    vga_set_color(CON_WHITE, CON_BLUE);
    puts_vga("\n!");
    assert_memory_equal(text, before + 80, 24 * 80 * sizeof(uint16_t));
    assert_int_equal(AT(24, 0), 0x1F21);
    for (int c = 1; c < 80; c++)
        assert_int_equal(AT(24, c), 0x1F20); /* blank in the colours of the scroll */
    assert_int_equal(cursor(), 24 * 80 + 1);
    for (int i = 0; i < 1000; i++)
        puts_vga("scrolling\n");
    assert_int_equal(AT(23, 0) & 0xFF, 's');
    assert_int_equal(AT(24, 0), 0x1F20);
    expect_guard(80 * 25);
}

/* vga_write() leaves the cursor registers alone until its last byte. */
static void test_write_moves_cursor_once(void **state)
{
    unsigned selects = 0;

    (void)state;
    init_80x25();
    io_count = 0;
    puts_vga("hello\nworld\tand more");
    for (unsigned i = 0; i < io_count; i++)
        if (io_log[i].out && io_log[i].port == CRTC_INDEX &&
            (io_log[i].v == 0x0E || io_log[i].v == 0x0F))
            selects++;
    assert_int_equal(selects, 2);
    assert_int_equal(cursor(), 80 + 16);
    io_count = 0;
    vga_putc('!');
    assert_int_equal(io_count, 4); /* index, high, index, low */
}

/* A 4x2 screen: wrapping and scrolling stay inside its 8 cells. */
static void test_tiny_screen(void **state)
{
    (void)state;
    assert_int_equal(vga_init((uintptr_t)text, 4, 2), 0);
    for (int i = 0; i < 100; i++)
        puts_vga("abcdefg\t\b\r\nhi\t\t\t");
    expect_guard(4 * 2);
    puts_vga("\n\nhi"); /* from anywhere, two newlines end on the last row */
    assert_int_equal(text[4] & 0xFF, 'h');
    assert_int_equal(text[5] & 0xFF, 'i');
    assert_int_equal(cursor(), 4 + 2);
    expect_guard(4 * 2);
}

/* Drawing at a place: cells in the given colours, clipped at the row end and the screen,
 * cursor and the colours of later text untouched; halves are block characters whose
 * background never needs the intensity bit when one colour lacks it. */
static void test_put_at_and_halves(void **state)
{
    (void)state;
    init_80x25();
    vga_putc('a');
    unsigned before = cursor();
    vga_put_at(2, 77, "xyz!", 4, CON_YELLOW, CON_BLUE);
    assert_int_equal(text[2 * 80 + 77], 0x1E00 | 'x');
    assert_int_equal(text[2 * 80 + 79], 0x1E00 | 'z');
    assert_int_equal(text[3 * 80], BLANK);          /* '!' dropped, not wrapped */
    vga_put_at(25, 0, "no", 2, CON_WHITE, CON_RED); /* below the screen */
    vga_put_halves(24, 79, CON_BLACK, CON_WHITE);
    assert_int_equal(text[24 * 80 + 79], 0x0F00 | VGA_LOWER_HALF_BLOCK);
    vga_put_halves(24, 78, CON_WHITE, CON_BLACK);
    assert_int_equal(text[24 * 80 + 78], 0x0F00 | VGA_UPPER_HALF_BLOCK);
    vga_put_halves(24, 77, CON_WHITE, CON_WHITE);
    assert_int_equal(text[24 * 80 + 77], 0x0F00 | VGA_FULL_BLOCK);
    vga_put_halves(24, 76, CON_BLUE, CON_BLUE);
    assert_int_equal(text[24 * 80 + 76], 0x1000 | ' ');
    vga_put_halves(24, 75, CON_YELLOW, CON_LIGHT_RED); /* both bright: blink is off */
    assert_int_equal(text[24 * 80 + 75], 0xCE00 | VGA_UPPER_HALF_BLOCK);
    vga_put_halves(0, 80, CON_BLACK, CON_WHITE); /* right of the screen */
    expect_guard(80 * 25);
    assert_int_equal(cursor(), before);
    vga_putc('b');
    assert_int_equal(text[1], 0x0700 | 'b');
    assert_int_equal(vga_cols(), 80);
    assert_int_equal(vga_rows(), 25);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_init, setup),
        cmocka_unit_test_setup(test_init_cursor_follows_cell_height, setup),
        cmocka_unit_test_setup(test_init_rejects_bad_geometry, setup),
        cmocka_unit_test_setup(test_putc_and_colors, setup),
        cmocka_unit_test_setup(test_newline_cr_backspace, setup),
        cmocka_unit_test_setup(test_tab, setup),
        cmocka_unit_test_setup(test_deferred_wrap, setup),
        cmocka_unit_test_setup(test_scroll, setup),
        cmocka_unit_test_setup(test_write_moves_cursor_once, setup),
        cmocka_unit_test_setup(test_tiny_screen, setup),
        cmocka_unit_test_setup(test_put_at_and_halves, setup),
    };

    return cmocka_run_group_tests_name("vga", tests, NULL, NULL);
}
