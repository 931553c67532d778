/* Framebuffer text console: the screen under UEFI boot, where GRUB hands over a linear RGB
 * framebuffer (multiboot2 framebuffer tag type 1). Text is drawn with a PSF1 or PSF2 bitmap
 * font; the kernel links Lat15-Terminus16 (PSF1, 8x16) and passes it to fbcon_init().
 *
 * Same behaviour as the VGA text console (see vga.h): '\n' '\r' '\t' '\b', deferred wrap,
 * scrolling at the bottom. Bytes are Latin-1 code points: when the font has a unicode table,
 * a byte is drawn with the glyph the table gives that code point, and a byte the font has no
 * glyph for is drawn as '?'. Without a table, a byte is a glyph index.
 *
 * The console keeps a shadow copy of the text and never reads the framebuffer: scrolling
 * redraws only the cells whose character or colours change. Framebuffer memory is mapped
 * uncached or write-combining, where reads cost far more than writes, so moving pixel rows
 * with memmove would be the slow way on real hardware.
 */
#ifndef BTSX_KERNEL_FBCON_H
#define BTSX_KERNEL_FBCON_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/con_color.h"

/* A direct-colour linear framebuffer, as the multiboot2 framebuffer tag describes it. */
struct fb_info {
    uintptr_t base;            /* first pixel; identity-mapped */
    uint32_t pitch;            /* bytes from one pixel row to the next */
    uint32_t width, height;    /* pixels */
    uint8_t bpp;               /* 32, 24, 16 or 15 (15 is stored in 2 bytes) */
    uint8_t red_pos, red_size; /* bit position and width of each channel in a pixel */
    uint8_t green_pos, green_size;
    uint8_t blue_pos, blue_size;
};

/* The shadow text is a static array of this many cells (128 KiB): 3840x2160 with an 8x16
 * font (480x135) fits. On a larger screen the console uses only the top rows that fit;
 * fbcon_rows() tells how many. */
#define FBCON_MAX_CELLS        65536u
#define FBCON_TAB_WIDTH        8
/* Widest channel a pixel may have (fbcon_init() rejects wider ones). */
#define FBCON_MAX_CHANNEL_BITS 16

/* Starts the console: checks the framebuffer and the font (font_len bytes at font, which must
 * stay valid while the console is used), clears the screen and homes the cursor.
 * Returns 0, or, changing nothing (a console that was running keeps running as it was):
 *   E_INVAL   the font is not a well-formed PSF1/PSF2 font (bad magic, no glyphs, empty
 *             glyphs, shorter than its header says, unterminated unicode table), or the
 *             framebuffer is unusable (NULL, no base, zero size, pitch below width)
 *   E_NOTSUP  a PSF2 version/header this code does not know, an unsupported bpp, or a colour
 *             channel that is empty, wider than FBCON_MAX_CHANNEL_BITS or outside the pixel
 *   E_ALIGN   base or pitch not a multiple of the 2- or 4-byte pixel size
 *   E_RANGE   not even one glyph fits on the screen
 * fbcon_init_detail() then names the exact check that failed. */
int fbcon_init(const struct fb_info *fb, const uint8_t *font, size_t font_len);
#ifndef BTSX_HOST
/* fbcon_init() with the font linked into the kernel. */
int fbcon_init_builtin(const struct fb_info *fb);
#endif
/* Why the last fbcon_init() failed ("font: truncated glyph data", ...), "ok" if it did not. */
const char *fbcon_init_detail(void);

/* All of these are no-ops until fbcon_init() has succeeded once. */
void fbcon_putc(char c);
void fbcon_write(const char *s, size_t n);
/* Applies to characters written from now on and to the blank cells scrolling and clearing
 * make; what is already on screen keeps its colours. */
void fbcon_set_color(enum con_color fg, enum con_color bg);
/* Blanks the whole framebuffer with the current background and homes the cursor. */
void fbcon_clear(void);

/* Drawing at a place, for screens laid out whole (the summary screen): no control
 * characters, no cursor movement, no scrolling. */
/* Writes n bytes of s (Latin-1, as fbcon_putc() draws them) from (row, col) in fg on bg;
 * what would pass the end of the row, or lies outside the grid, is dropped. */
void fbcon_put_at(unsigned row, unsigned col, const char *s, size_t n, enum con_color fg,
                  enum con_color bg);
/* One cell in two colours: its top half (glyph height / 2 pixel rows) in top, the rest in
 * bottom. The same picture element as vga_put_halves(), drawn with pixels, not a glyph. */
void fbcon_put_halves(unsigned row, unsigned col, enum con_color top, enum con_color bottom);

/* A picture of whole pixels (the summary screen's QR code, whose modules must be square):
 * fills w x h pixels from pixel (x, y) in c, clipped to the screen. The text grid does not
 * track these pixels: text later written to a cell they cover draws over them, and
 * scrolling does not move them. */
void fbcon_fill(uint32_t x, uint32_t y, uint32_t w, uint32_t h, enum con_color c);
/* The screen in pixels and a text cell's size in pixels (all 0 before a successful
 * fbcon_init()). */
void fbcon_geometry(uint32_t *width, uint32_t *height, uint32_t *cell_w, uint32_t *cell_h);

/* The text grid in use (0 x 0 before a successful fbcon_init()). */
unsigned fbcon_cols(void);
unsigned fbcon_rows(void);

#endif /* BTSX_KERNEL_FBCON_H */
