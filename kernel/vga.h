/* VGA text-mode console: the screen under BIOS boot, where GRUB leaves the adapter in text mode
 * (multiboot2 framebuffer tag type 2, "EGA text", normally 80x25 cells at 0xB8000).
 *
 * Each cell is a 16-bit word: the character (code page 437, as the adapter's font has it) in
 * the low byte and the attribute (foreground in bits 0-3, background in bits 4-7) in the high
 * byte. The console is byte-oriented and has the same control characters as fbcon:
 *   '\n'  start of the next line (scrolls at the bottom)   '\r'  start of the current line
 *   '\t'  next column that is a multiple of VGA_TAB_WIDTH  '\b'  one column left, not erasing
 * Wrapping is deferred: after a character lands in the last column the cursor waits there and
 * only the next printable character starts a new line, so a full-width line followed by '\n'
 * does not leave an empty line.
 */
#ifndef BTSX_KERNEL_VGA_H
#define BTSX_KERNEL_VGA_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/con_color.h"

/* Physical address of the colour text buffer GRUB reports in the usual case. */
#define VGA_TEXT_BASE   0xB8000
/* The text buffer window is 0xB8000-0xBFFFF: a mode cannot have more cells than fit in it. */
#define VGA_TEXT_WINDOW 0x8000
#define VGA_TAB_WIDTH   8

/* Starts the console on the text buffer at base (identity-mapped) of cols x rows cells:
 * clears it, homes and shows the hardware cursor, and turns attribute blinking off so that
 * all 16 background colours are usable. Returns 0, or E_INVAL (console left disabled, every
 * other call a no-op) if the geometry is empty or does not fit the text window. */
int vga_init(uintptr_t base, unsigned cols, unsigned rows);

void vga_putc(char c);
/* vga_putc() for n bytes, moving the hardware cursor once at the end. */
void vga_write(const char *s, size_t n);
/* Applies to characters written from now on and to the blank cells scrolling and clearing
 * make; what is already on screen keeps its colours. */
void vga_set_color(enum con_color fg, enum con_color bg);
/* Blanks every cell with the current colours and homes the cursor. */
void vga_clear(void);

/* Drawing at a place, for screens laid out whole (the summary screen): no control
 * characters, no cursor movement, no scrolling. */
/* Writes n bytes of s as code page 437 characters from (row, col) in fg on bg; what would
 * pass the end of the row, or lies outside the screen, is dropped. */
void vga_put_at(unsigned row, unsigned col, const char *s, size_t n, enum con_color fg,
                enum con_color bg);
/* One cell in two colours, the top half and the bottom half: two pixels of a text-mode
 * picture (the summary screen's QR code), each 9 dots wide and about half the cell high in
 * the usual 720x400 mode 3 (the font decides where its half blocks split). Drawn
 * with CP437 block characters: the full block or a space in one colour, else the upper half
 * block in top on bottom, or the lower half block in bottom on top when only bottom is
 * bright (the background then never needs the intensity bit). */
void vga_put_halves(unsigned row, unsigned col, enum con_color top, enum con_color bottom);
#define VGA_UPPER_HALF_BLOCK 0xDF
#define VGA_LOWER_HALF_BLOCK 0xDC
#define VGA_FULL_BLOCK       0xDB
/* The grid in use (0 x 0 while the console is disabled). */
unsigned vga_cols(void);
unsigned vga_rows(void);

#endif /* BTSX_KERNEL_VGA_H */
