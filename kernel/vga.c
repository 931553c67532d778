/* VGA text-mode console (see vga.h for the behaviour).
 *
 * Register facts are from the IBM VGA Technical Reference as summarised by FreeVGA
 * ("CRT Controller Registers", "Attribute Controller Registers"). The colour I/O addresses
 * (0x3Dx) are used because GRUB's text mode is a colour mode (Miscellaneous Output bit 0 set).
 */
#include "kernel/vga.h"

#include "kernel/errno.h"
#include "kernel/textcursor.h"

#ifdef BTSX_HOST
/* Host unit tests link port stubs that emulate and record the registers. */
void outb(uint16_t port, uint8_t v);
uint8_t inb(uint16_t port);
#else
#include "kernel/io.h"
#endif

/* CRT controller: an index port selects the register the data port reads and writes. */
#define VGA_CRTC_INDEX           0x3D4
#define VGA_CRTC_DATA            0x3D5
#define VGA_CRTC_MAX_SCAN_LINE   0x09 /* bits 0-4: character cell height - 1 */
#define VGA_CRTC_CURSOR_START    0x0A /* bits 0-4: first scan line, bit 5: disable */
#define VGA_CRTC_CURSOR_END      0x0B /* bits 0-4: last scan line, bits 5-6: skew */
#define VGA_CRTC_CURSOR_LOC_HIGH 0x0E /* cursor cell index, bits 8-15 */
#define VGA_CRTC_CURSOR_LOC_LOW  0x0F /* cursor cell index, bits 0-7 */
#define VGA_SCAN_LINE_MASK       0x1F
#define VGA_CURSOR_DISABLE       0x20

/* Attribute controller: one port for both index and data, selected by a flip-flop that a
 * read of Input Status #1 resets to "index". */
#define VGA_INPUT_STATUS_1    0x3DA
#define VGA_ATTR_ADDR_DATA    0x3C0
#define VGA_ATTR_DATA_READ    0x3C1
#define VGA_ATTR_PAS          0x20 /* index bit 5: keep the palette (the display) on */
#define VGA_ATTR_MODE_CONTROL 0x10
#define VGA_ATTR_MODE_BLINK   0x08 /* attribute bit 7 blinks instead of brightening */
#define VGA_ATTR_MODE_LGE     0x04 /* line graphics: 9-dot cells repeat dot 8 of 0xC0-0xDF */

#define VGA_ATTR(fg, bg)   ((uint8_t)(((bg)&CON_COLOR_MASK) << 4 | ((fg)&CON_COLOR_MASK)))
#define VGA_CELL(ch, attr) ((uint16_t)((uint16_t)(attr) << 8 | (uint8_t)(ch)))

static struct {
    /* volatile: this is the adapter's memory, every store must reach it. */
    volatile uint16_t *cells; /* NULL while the console is disabled */
    struct text_cursor cur;
    uint8_t attr;
} vga;

static uint8_t crtc_read(uint8_t reg)
{
    outb(VGA_CRTC_INDEX, reg);
    return inb(VGA_CRTC_DATA);
}

static void crtc_write(uint8_t reg, uint8_t v)
{
    outb(VGA_CRTC_INDEX, reg);
    outb(VGA_CRTC_DATA, v);
}

/* GRUB may leave the cursor disabled. Shape it as the bottom two scan lines of whatever cell
 * height the mode has, keeping the skew bits the mode set. */
static void cursor_enable(void)
{
    uint8_t last = crtc_read(VGA_CRTC_MAX_SCAN_LINE) & VGA_SCAN_LINE_MASK;
    uint8_t first = last ? last - 1 : 0;
    uint8_t end = crtc_read(VGA_CRTC_CURSOR_END);

    crtc_write(VGA_CRTC_CURSOR_START, first); /* also clears VGA_CURSOR_DISABLE */
    crtc_write(VGA_CRTC_CURSOR_END, (uint8_t)((end & ~VGA_SCAN_LINE_MASK) | last));
}

/* With blinking on, attribute bit 7 blinks and only 8 background colours exist. Without
 * line graphics, a 9-dot-wide cell's ninth column is background even for the block
 * characters 0xDB/0xDC/0xDF, which then leave a gap between cells (the summary screen's QR
 * code is drawn with them); modes differ, so both are set here rather than trusted. */
static void attr_mode_setup(void)
{
    uint8_t mode;

    (void)inb(VGA_INPUT_STATUS_1);
    outb(VGA_ATTR_ADDR_DATA, VGA_ATTR_MODE_CONTROL | VGA_ATTR_PAS);
    mode = inb(VGA_ATTR_DATA_READ);
    outb(VGA_ATTR_ADDR_DATA, (uint8_t)((mode & ~VGA_ATTR_MODE_BLINK) | VGA_ATTR_MODE_LGE));
}

static void cursor_update(void)
{
    unsigned col = vga.cur.col < vga.cur.cols ? vga.cur.col : vga.cur.cols - 1;
    unsigned pos = vga.cur.row * vga.cur.cols + col;

    crtc_write(VGA_CRTC_CURSOR_LOC_HIGH, (uint8_t)(pos >> 8));
    crtc_write(VGA_CRTC_CURSOR_LOC_LOW, (uint8_t)pos);
}

static void scroll_up(void)
{
    unsigned keep = (vga.cur.rows - 1) * vga.cur.cols;
    uint16_t blank = VGA_CELL(' ', vga.attr);

    for (unsigned i = 0; i < keep; i++)
        vga.cells[i] = vga.cells[i + vga.cur.cols];
    for (unsigned i = keep; i < keep + vga.cur.cols; i++)
        vga.cells[i] = blank;
}

/* Everything but the hardware cursor, so vga_write() can move it once. */
static void put_byte(char ch)
{
    unsigned r, c;
    if (text_cursor_put(&vga.cur, ch, VGA_TAB_WIDTH, scroll_up, &r, &c))
        vga.cells[r * vga.cur.cols + c] = VGA_CELL(ch, vga.attr);
}

int vga_init(uintptr_t base, unsigned cols, unsigned rows)
{
    vga.cells = NULL;
    if (!base || !cols || !rows || (uint64_t)cols * rows * sizeof(uint16_t) > VGA_TEXT_WINDOW)
        return E_INVAL;

    vga.cells = (volatile uint16_t *)base;
    vga.cur.cols = cols;
    vga.cur.rows = rows;
    vga.attr = VGA_ATTR(CON_DEFAULT_FG, CON_DEFAULT_BG);
    cursor_enable();
    attr_mode_setup();
    vga_clear();
    return 0;
}

void vga_putc(char c)
{
    if (!vga.cells)
        return;
    put_byte(c);
    cursor_update();
}

void vga_write(const char *s, size_t n)
{
    if (!vga.cells)
        return;
    for (size_t i = 0; i < n; i++)
        put_byte(s[i]);
    cursor_update();
}

void vga_set_color(enum con_color fg, enum con_color bg)
{
    vga.attr = VGA_ATTR(fg, bg);
}

void vga_clear(void)
{
    uint16_t blank = VGA_CELL(' ', vga.attr);

    if (!vga.cells)
        return;
    for (unsigned i = 0; i < vga.cur.cols * vga.cur.rows; i++)
        vga.cells[i] = blank;
    vga.cur.col = 0;
    vga.cur.row = 0;
    cursor_update();
}

void vga_put_at(unsigned row, unsigned col, const char *s, size_t n, enum con_color fg,
                enum con_color bg)
{
    if (!vga.cells || row >= vga.cur.rows)
        return;
    for (size_t i = 0; i < n && col + i < vga.cur.cols; i++)
        vga.cells[row * vga.cur.cols + col + i] = VGA_CELL(s[i], VGA_ATTR(fg, bg));
}

void vga_put_halves(unsigned row, unsigned col, enum con_color top, enum con_color bottom)
{
    if (!vga.cells || row >= vga.cur.rows || col >= vga.cur.cols)
        return;
    /* The background takes a colour without the intensity bit whenever one of the two has
     * none, so the cell looks right even on an adapter that kept attribute bit 7 as blink. */
    uint16_t cell;
    if (top == bottom)
        cell = top & CON_BRIGHT ? VGA_CELL(VGA_FULL_BLOCK, VGA_ATTR(top, CON_BLACK))
                                : VGA_CELL(' ', VGA_ATTR(CON_BLACK, top));
    else if (bottom & CON_BRIGHT && !(top & CON_BRIGHT))
        cell = VGA_CELL(VGA_LOWER_HALF_BLOCK, VGA_ATTR(bottom, top));
    else
        cell = VGA_CELL(VGA_UPPER_HALF_BLOCK, VGA_ATTR(top, bottom));
    vga.cells[row * vga.cur.cols + col] = cell;
}

unsigned vga_cols(void)
{
    return vga.cells ? vga.cur.cols : 0;
}

unsigned vga_rows(void)
{
    return vga.cells ? vga.cur.rows : 0;
}
