#include "kernel/console.h"

#include <stdbool.h>

#include "kernel/cmdline.h"
#include "kernel/fbcon.h"
#include "kernel/percpu.h"
#include "kernel/printf.h"
#include "kernel/serial.h"
#include "kernel/spinlock.h"
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

/*
 * Each print holds the console for its whole text, so that two CPUs printing at once do not
 * mix characters inside a line. The lock is recursive on the CPU that holds it: a handler that
 * prints over a print on the same CPU (a panic, an NMI's diagnostic) goes on rather than wait
 * for itself, and only another CPU waits. Until a second CPU comes up (kernel/smp.c calls
 * console_shared()) there is nothing to wait for, and before GS is set up no CPU number to
 * read.
 */
static struct spinlock con_lock;
static volatile int con_owner = -1;
static unsigned con_depth;
static volatile bool shared;

void console_shared(void)
{
    shared = true;
}

static void con_enter(void)
{
    if (!shared)
        return;
    int me = (int)this_cpu()->cpu;
    if (__atomic_load_n(&con_owner, __ATOMIC_RELAXED) != me) {
        spin_lock(&con_lock);
        con_owner = me;
    }
    con_depth++;
}

static void con_leave(void)
{
    if (!shared)
        return;
    if (--con_depth == 0) {
        con_owner = -1;
        spin_unlock(&con_lock);
    }
}

static void con_puts(const char *s)
{
    while (*s)
        con_putc(*s++);
}

void kputs(const char *s)
{
    con_enter();
    con_puts(s);
    con_leave();
}

static void put_plain(char c, void *ctx)
{
    (void)ctx;
    con_putc(c);
}

int kvprintf(const char *fmt, va_list ap)
{
    con_enter();
    int n = fmt_vformat(put_plain, NULL, fmt, ap);
    con_leave();
    return n;
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
        con_puts("# ");
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
    con_enter();
    fmt_vformat(put_diag, &bol, fmt, ap);
    if (!bol)
        con_putc('\n');
    con_leave();
    va_end(ap);
}
