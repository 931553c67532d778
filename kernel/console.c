#include "kernel/console.h"

#include <stdbool.h>

#include "kernel/cmdline.h"
#include "kernel/fbcon.h"
#include "kernel/printf.h"
#include "kernel/serial.h"
#include "kernel/string.h"
#include "kernel/vga.h"

enum screen { SCREEN_NONE, SCREEN_VGA, SCREEN_FB };
static enum screen screen;

static enum console_choice choice = CONSOLE_ALL;
OPTION_CHOICE("console", choice, {"all", CONSOLE_ALL}, {"serial", CONSOLE_SERIAL});

bool console_screen_wanted(void)
{
    return choice == CONSOLE_ALL;
}

void console_init(void)
{
    serial_init();
}

void console_attach_vga(uintptr_t base, unsigned cols, unsigned rows)
{
    vga_init(base, cols, rows);
    screen = SCREEN_VGA;
}

int console_attach_fb(const struct fb_info *fb)
{
    extern const uint8_t btsx_font_psf_start[], btsx_font_psf_end[];
    int err =
        fbcon_init(fb, btsx_font_psf_start, (size_t)(btsx_font_psf_end - btsx_font_psf_start));
    if (err == 0)
        screen = SCREEN_FB;
    return err;
}

const char *console_screen_name(void)
{
    static const char *const names[] = {"none", "vga", "framebuffer"};
    return names[screen];
}

static void con_putc(char c)
{
    if (c == '\n')
        serial_putc('\r');
    serial_putc(c);
    if (screen == SCREEN_VGA)
        vga_putc(c);
    else if (screen == SCREEN_FB)
        fbcon_putc(c);
}

void console_set_color(enum con_color fg, enum con_color bg)
{
    if (screen == SCREEN_VGA)
        vga_set_color(fg, bg);
    else if (screen == SCREEN_FB)
        fbcon_set_color(fg, bg);
}

bool console_screen_grid(unsigned *cols, unsigned *rows)
{
    *cols = screen == SCREEN_VGA ? vga_cols() : screen == SCREEN_FB ? fbcon_cols() : 0;
    *rows = screen == SCREEN_VGA ? vga_rows() : screen == SCREEN_FB ? fbcon_rows() : 0;
    return *cols && *rows;
}

void console_screen_clear(enum con_color bg)
{
    console_set_color(CON_DEFAULT_FG, bg);
    if (screen == SCREEN_VGA)
        vga_clear();
    else if (screen == SCREEN_FB)
        fbcon_clear();
}

void console_screen_put(unsigned row, unsigned col, const char *s, enum con_color fg,
                        enum con_color bg)
{
    if (screen == SCREEN_VGA)
        vga_put_at(row, col, s, strlen(s), fg, bg);
    else if (screen == SCREEN_FB)
        fbcon_put_at(row, col, s, strlen(s), fg, bg);
}

void console_screen_halves(unsigned row, unsigned col, enum con_color top, enum con_color bottom)
{
    if (screen == SCREEN_VGA)
        vga_put_halves(row, col, top, bottom);
    else if (screen == SCREEN_FB)
        fbcon_put_halves(row, col, top, bottom);
}

bool console_screen_pixels(unsigned *width, unsigned *height, unsigned *cell_w, unsigned *cell_h)
{
    uint32_t w = 0, h = 0, cw = 0, ch = 0;
    if (screen == SCREEN_FB)
        fbcon_geometry(&w, &h, &cw, &ch);
    *width = w;
    *height = h;
    *cell_w = cw;
    *cell_h = ch;
    return w && h && cw && ch;
}

void console_screen_fill(unsigned x, unsigned y, unsigned w, unsigned h, enum con_color c)
{
    if (screen == SCREEN_FB)
        fbcon_fill(x, y, w, h, c);
}

void kputs(const char *s)
{
    while (*s)
        con_putc(*s++);
}

static void put_plain(char c, void *ctx)
{
    (void)ctx;
    con_putc(c);
}

int kvprintf(const char *fmt, va_list ap)
{
    return fmt_vformat(put_plain, NULL, fmt, ap);
}

int kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = kvprintf(fmt, ap);
    va_end(ap);
    return n;
}

/* Diagnostic output starts every line with "# "; ctx tracks whether we are at a line start. */
static void put_diag(char c, void *ctx)
{
    bool *bol = ctx;
    if (*bol) {
        kputs("# ");
        *bol = false;
    }
    con_putc(c);
    if (c == '\n')
        *bol = true;
}

void kprintf_diag(const char *fmt, ...)
{
    bool bol = true;
    va_list ap;
    va_start(ap, fmt);
    fmt_vformat(put_diag, &bol, fmt, ap);
    va_end(ap);
    if (!bol)
        con_putc('\n');
}
