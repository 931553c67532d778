/* The console: every character goes to COM1 and to the screen (VGA text or framebuffer). */
#ifndef BTSX_KERNEL_CONSOLE_H
#define BTSX_KERNEL_CONSOLE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "kernel/con_color.h"

struct fb_info;

void console_init(void); /* serial; the screen comes with the boot info */
void console_attach_vga(uintptr_t base, unsigned cols, unsigned rows);
int console_attach_fb(const struct fb_info *fb);
const char *console_screen_name(void); /* "vga", "framebuffer" or "none" */
/* console=: all (COM1 and the screen) or serial (COM1 only: the screen is left alone). */
enum console_choice { CONSOLE_ALL, CONSOLE_SERIAL };
/* False with console=serial: then the screen is not to be attached or touched. */
bool console_screen_wanted(void);

void kputs(const char *s);
int kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int kvprintf(const char *fmt, va_list ap);
/* KTAP diagnostics: like kprintf, but every line starts with "# ". */
void kprintf_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Screen colour (serial output is plain text). */
void console_set_color(enum con_color fg, enum con_color bg);

/* The screen alone, laid out whole (the summary screen); serial gets none of it. Characters
 * are ASCII (the two screens differ above it: code page 437 and Latin-1). */
/* The text grid: false, and 0 x 0, without a screen (none, or console=serial). */
bool console_screen_grid(unsigned *cols, unsigned *rows);
/* Blanks the screen in bg; text written afterwards through kputs() starts at the top. */
void console_screen_clear(enum con_color bg);
/* s from (row, col), cut at the end of the row. */
void console_screen_put(unsigned row, unsigned col, const char *s, enum con_color fg,
                        enum con_color bg);
/* A cell of two picture elements, the top half in top and the bottom half in bottom. */
void console_screen_halves(unsigned row, unsigned col, enum con_color top, enum con_color bottom);
/* On a framebuffer: true, its size in pixels and a text cell's; false on VGA text (cells
 * only, the halves above) and without a screen. */
bool console_screen_pixels(unsigned *width, unsigned *height, unsigned *cell_w, unsigned *cell_h);
/* w x h pixels from pixel (x, y) in c, on a framebuffer (fbcon_fill()); nothing elsewhere. */
void console_screen_fill(unsigned x, unsigned y, unsigned w, unsigned h, enum con_color c);

/* From now on several CPUs may print: each print holds the console (kernel/smp.c, before it
 * starts the first application processor). */
void console_shared(void);

#endif
