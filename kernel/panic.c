#include "kernel/panic.h"

#include <stdarg.h>

#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/shutdown.h"
#include "kernel/symbols.h"

static int panicking;

static void panic_out(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kvprintf(fmt, ap);
    va_end(ap);
}

static __attribute__((noreturn)) void panic_end(void)
{
    console_set_color(CON_WHITE, CON_RED);
    kputs("btsx: PANIC - the run cannot continue\n");
    machine_exit(EXIT_CODE_FAILURE);
}

void panic(const char *fmt, ...)
{
    irq_disable();
    if (panicking++)
        machine_exit(EXIT_CODE_FAILURE); /* a panic while panicking: stop at once */
    kputs("\nPANIC: ");
    va_list ap;
    va_start(ap, fmt);
    kvprintf(fmt, ap);
    va_end(ap);
    kputs("\n");
    backtrace_from((uint64_t)__builtin_frame_address(0), panic_out);
    panic_end();
}

void panic_frame(const struct trap_frame *f, const char *why)
{
    irq_disable();
    if (panicking++)
        machine_exit(EXIT_CODE_FAILURE);
    kprintf("\nPANIC: %s\n", why);
    trap_report(f, panic_out);
    panic_end();
}
