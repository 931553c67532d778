/* Framebuffer text console (see fbcon.h for the behaviour); the font is parsed by
 * kernel/psf.c. */
#include "kernel/fbcon.h"

#include <stdbool.h>

#include "kernel/errno.h"
#include "kernel/psf.h"
#include "kernel/textcursor.h"

#define FALLBACK_CHAR '?'

#define RGB_MAX 255

/* A shadow cell is the VGA cell layout: character in bits 0-7, fg in 8-11, bg in 12-15.
 * HALVES_CHAR marks a cell of fbcon_put_halves() (fg the top colour, bg the bottom): a NUL
 * byte written as text is drawn as a space instead, so no text cell has that value. */
#define HALVES_CHAR     0
#define CELL(ch, attr)  ((uint16_t)((uint16_t)(attr) << 8 | (uint8_t)(ch)))
#define CELL_CHAR(cell) ((cell)&0xFF)
#define CELL_FG(cell)   (((cell) >> 8) & CON_COLOR_MASK)
#define CELL_BG(cell)   (((cell) >> 12) & CON_COLOR_MASK)
#define ATTR(fg, bg)    ((uint8_t)(((bg)&CON_COLOR_MASK) << 4 | ((fg)&CON_COLOR_MASK)))

/* The canonical VGA palette, in con_color order. */
static const uint8_t con_rgb[CON_COLOR_COUNT][3] = {
    {0x00, 0x00, 0x00}, {0x00, 0x00, 0xAA}, {0x00, 0xAA, 0x00}, {0x00, 0xAA, 0xAA},
    {0xAA, 0x00, 0x00}, {0xAA, 0x00, 0xAA}, {0xAA, 0x55, 0x00}, {0xAA, 0xAA, 0xAA},
    {0x55, 0x55, 0x55}, {0x55, 0x55, 0xFF}, {0x55, 0xFF, 0x55}, {0x55, 0xFF, 0xFF},
    {0xFF, 0x55, 0x55}, {0xFF, 0x55, 0xFF}, {0xFF, 0xFF, 0x55}, {0xFF, 0xFF, 0xFF},
};

static struct {
    bool ready;
    uint8_t *base;
    uint32_t pitch, width, height;
    unsigned bytespp;
    struct psf_font font;
    uint32_t glyph_of[PSF_LATIN1_MAP_SIZE];
    uint32_t pixel[CON_COLOR_COUNT]; /* each colour packed in the framebuffer's format */
    struct text_cursor cur;
    uint8_t attr;
} con;

/* What is on screen, cell by cell: the framebuffer is only ever written. */
static uint16_t shadow[FBCON_MAX_CELLS];

static const char *init_detail = "ok";

static int reject(int err, const char *why)
{
    init_detail = why;
    return err;
}

static int fb_check(const struct fb_info *fb, unsigned *bytespp)
{
    const uint8_t chan[3][2] = {
        {fb->red_pos, fb->red_size},
        {fb->green_pos, fb->green_size},
        {fb->blue_pos, fb->blue_size},
    };

    if (!fb->base || !fb->width || !fb->height)
        return reject(E_INVAL, "framebuffer: no base or zero size");
    switch (fb->bpp) {
    case 15:
    case 16:
        *bytespp = 2;
        break;
    case 24:
        *bytespp = 3;
        break;
    case 32:
        *bytespp = 4;
        break;
    default:
        return reject(E_NOTSUP, "framebuffer: unsupported bits per pixel");
    }
    for (int i = 0; i < 3; i++)
        if (!chan[i][1] || chan[i][1] > FBCON_MAX_CHANNEL_BITS || chan[i][0] + chan[i][1] > fb->bpp)
            return reject(E_NOTSUP,
                          "framebuffer: colour channel empty, too wide or outside the pixel");
    if (fb->pitch < (uint64_t)fb->width * *bytespp)
        return reject(E_INVAL, "framebuffer: pitch below width");
    /* 2- and 4-byte pixels are stored as one access; 3-byte ones a byte at a time. */
    if (*bytespp != 3 && (fb->base % *bytespp || fb->pitch % *bytespp))
        return reject(E_ALIGN, "framebuffer: base or pitch not a multiple of the pixel size");
    return 0;
}

/* An 8-bit channel value scaled to size bits, rounded to nearest, at its position. */
static uint32_t channel(uint8_t v, uint8_t pos, uint8_t size)
{
    uint32_t max = (1u << size) - 1;

    return ((v * max + RGB_MAX / 2) / RGB_MAX) << pos;
}

static void palette_build(const struct fb_info *fb)
{
    for (int i = 0; i < CON_COLOR_COUNT; i++)
        con.pixel[i] = channel(con_rgb[i][0], fb->red_pos, fb->red_size) |
                       channel(con_rgb[i][1], fb->green_pos, fb->green_size) |
                       channel(con_rgb[i][2], fb->blue_pos, fb->blue_size);
}

static void glyph_map_build(void)
{
    const struct psf_font *f = &con.font;
    uint32_t fallback;

    psf_latin1_map(f, con.glyph_of);
    /* '?' by the table or by index; a font without one falls back to its first glyph. */
    fallback = con.glyph_of[FALLBACK_CHAR];
    if (fallback == PSF_GLYPH_NONE)
        fallback = 0;
    for (unsigned i = 0; i < PSF_LATIN1_MAP_SIZE; i++)
        if (con.glyph_of[i] == PSF_GLYPH_NONE)
            con.glyph_of[i] = fallback;
}

static void fill_span(uint8_t *dst, uint32_t n, uint32_t px)
{
    switch (con.bytespp) {
    case 4:
        for (uint32_t x = 0; x < n; x++)
            ((uint32_t *)dst)[x] = px;
        break;
    case 3:
        for (uint32_t x = 0; x < n; x++, dst += 3) {
            dst[0] = (uint8_t)px;
            dst[1] = (uint8_t)(px >> 8);
            dst[2] = (uint8_t)(px >> 16);
        }
        break;
    default:
        for (uint32_t x = 0; x < n; x++)
            ((uint16_t *)dst)[x] = (uint16_t)px;
        break;
    }
}

#define GLYPH_BIT(bits, x) ((bits)[(x) >> 3] & (0x80u >> ((x)&7)))

/* One pixel row of a glyph; the switch is outside the loops, this is the hot path. */
static void draw_span(uint8_t *dst, const uint8_t *bits, uint32_t n, uint32_t fg, uint32_t bg)
{
    switch (con.bytespp) {
    case 4:
        for (uint32_t x = 0; x < n; x++)
            ((uint32_t *)dst)[x] = GLYPH_BIT(bits, x) ? fg : bg;
        break;
    case 3:
        for (uint32_t x = 0; x < n; x++, dst += 3) {
            uint32_t px = GLYPH_BIT(bits, x) ? fg : bg;

            dst[0] = (uint8_t)px;
            dst[1] = (uint8_t)(px >> 8);
            dst[2] = (uint8_t)(px >> 16);
        }
        break;
    default:
        for (uint32_t x = 0; x < n; x++)
            ((uint16_t *)dst)[x] = (uint16_t)(GLYPH_BIT(bits, x) ? fg : bg);
        break;
    }
}

static void draw_cell(unsigned row, unsigned col, uint16_t cell)
{
    const struct psf_font *f = &con.font;
    if (CELL_CHAR(cell) == HALVES_CHAR) {
        uint8_t *px =
            con.base + (size_t)row * f->height * con.pitch + (size_t)col * f->width * con.bytespp;
        for (uint32_t y = 0; y < f->height; y++, px += con.pitch)
            fill_span(px, f->width, con.pixel[y < f->height / 2 ? CELL_FG(cell) : CELL_BG(cell)]);
        return;
    }
    const uint8_t *bits = f->glyphs + (size_t)con.glyph_of[CELL_CHAR(cell)] * f->glyph_bytes;
    uint32_t fg = con.pixel[CELL_FG(cell)], bg = con.pixel[CELL_BG(cell)];
    uint8_t *line =
        con.base + (size_t)row * f->height * con.pitch + (size_t)col * f->width * con.bytespp;

    for (uint32_t y = 0; y < f->height; y++, line += con.pitch, bits += f->row_bytes)
        draw_span(line, bits, f->width, fg, bg);
}

/* Sets a cell, drawing it only if it changes. */
static void cell_set(unsigned row, unsigned col, uint16_t cell)
{
    uint16_t *slot = &shadow[row * con.cur.cols + col];

    if (*slot != cell) {
        *slot = cell;
        draw_cell(row, col, cell);
    }
}

/* Each cell takes the one below it; a cell whose content does not change costs nothing,
 * which is most of them on a screen of mostly short lines. */
static void scroll_up(void)
{
    uint16_t blank = CELL(' ', con.attr);

    for (unsigned r = 0; r < con.cur.rows; r++)
        for (unsigned c = 0; c < con.cur.cols; c++)
            cell_set(r, c, r + 1 < con.cur.rows ? shadow[(r + 1) * con.cur.cols + c] : blank);
}

static void put_byte(char ch)
{
    unsigned r, c;
    if (text_cursor_put(&con.cur, ch, FBCON_TAB_WIDTH, scroll_up, &r, &c))
        cell_set(r, c, CELL(ch ? ch : ' ', con.attr));
}

int fbcon_init(const struct fb_info *fb, const uint8_t *font, size_t font_len)
{
    struct psf_font f;
    unsigned bytespp;
    uint32_t cols, rows;
    int err;

    if (!fb)
        return reject(E_INVAL, "framebuffer: no description");
    const char *why;
    err = psf_parse(font, font_len, &f, &why);
    if (err)
        return reject(err, why);
    err = fb_check(fb, &bytespp);
    if (err)
        return err;
    cols = fb->width / f.width;
    rows = fb->height / f.height;
    if (!cols || !rows)
        return reject(E_RANGE, "font: glyphs larger than the screen");
    if (cols > FBCON_MAX_CELLS)
        return reject(E_RANGE, "framebuffer: more columns than FBCON_MAX_CELLS");
    if ((uint64_t)cols * rows > FBCON_MAX_CELLS)
        rows = FBCON_MAX_CELLS / cols;

    /* Everything is valid: only now does the running console change. */
    init_detail = "ok";
    con.base = (uint8_t *)fb->base;
    con.pitch = fb->pitch;
    con.width = fb->width;
    con.height = fb->height;
    con.bytespp = bytespp;
    con.font = f;
    con.cur.cols = cols;
    con.cur.rows = rows;
    con.attr = ATTR(CON_DEFAULT_FG, CON_DEFAULT_BG);
    glyph_map_build();
    palette_build(fb);
    con.ready = true;
    fbcon_clear();
    return 0;
}

#ifndef BTSX_HOST
/* The build gunzips the console font and links it as a blob between these two symbols. */
extern const uint8_t btsx_font_psf_start[], btsx_font_psf_end[];

int fbcon_init_builtin(const struct fb_info *fb)
{
    return fbcon_init(fb, btsx_font_psf_start, (size_t)(btsx_font_psf_end - btsx_font_psf_start));
}
#endif

const char *fbcon_init_detail(void)
{
    return init_detail;
}

void fbcon_putc(char c)
{
    if (con.ready)
        put_byte(c);
}

void fbcon_write(const char *s, size_t n)
{
    if (!con.ready)
        return;
    for (size_t i = 0; i < n; i++)
        put_byte(s[i]);
}

void fbcon_set_color(enum con_color fg, enum con_color bg)
{
    con.attr = ATTR(fg, bg);
}

void fbcon_clear(void)
{
    uint16_t blank = CELL(' ', con.attr);
    uint32_t bg = con.pixel[CELL_BG(blank)];
    uint32_t text_w = con.cur.cols * con.font.width, text_h = con.cur.rows * con.font.height;

    if (!con.ready)
        return;
    for (unsigned r = 0; r < con.cur.rows; r++)
        for (unsigned c = 0; c < con.cur.cols; c++) {
            shadow[r * con.cur.cols + c] = blank;
            draw_cell(r, c, blank);
        }
    /* The strips right of and below the text grid, where no cell ever draws. */
    for (uint32_t y = 0; y < con.height; y++) {
        uint8_t *line = con.base + (size_t)y * con.pitch;

        if (y < text_h)
            fill_span(line + (size_t)text_w * con.bytespp, con.width - text_w, bg);
        else
            fill_span(line, con.width, bg);
    }
    con.cur.col = 0;
    con.cur.row = 0;
}

void fbcon_put_at(unsigned row, unsigned col, const char *s, size_t n, enum con_color fg,
                  enum con_color bg)
{
    if (!con.ready || row >= con.cur.rows)
        return;
    for (size_t i = 0; i < n && col + i < con.cur.cols; i++)
        cell_set(row, col + (unsigned)i, CELL(s[i] ? s[i] : ' ', ATTR(fg, bg)));
}

void fbcon_put_halves(unsigned row, unsigned col, enum con_color top, enum con_color bottom)
{
    if (!con.ready || row >= con.cur.rows || col >= con.cur.cols)
        return;
    cell_set(row, col, CELL(HALVES_CHAR, ATTR(top, bottom)));
}

void fbcon_fill(uint32_t x, uint32_t y, uint32_t w, uint32_t h, enum con_color c)
{
    if (!con.ready || x >= con.width || y >= con.height)
        return;
    if (w > con.width - x)
        w = con.width - x;
    if (h > con.height - y)
        h = con.height - y;
    uint8_t *line = con.base + (size_t)y * con.pitch + (size_t)x * con.bytespp;
    for (uint32_t i = 0; i < h; i++, line += con.pitch)
        fill_span(line, w, con.pixel[c & CON_COLOR_MASK]);
}

void fbcon_geometry(uint32_t *width, uint32_t *height, uint32_t *cell_w, uint32_t *cell_h)
{
    *width = con.ready ? con.width : 0;
    *height = con.ready ? con.height : 0;
    *cell_w = con.ready ? con.font.width : 0;
    *cell_h = con.ready ? con.font.height : 0;
}

unsigned fbcon_cols(void)
{
    return con.ready ? con.cur.cols : 0;
}

unsigned fbcon_rows(void)
{
    return con.ready ? con.cur.rows : 0;
}
