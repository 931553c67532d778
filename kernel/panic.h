/* Fatal errors: print the cause, registers and a backtrace, then end the run with a failure. */
#ifndef BTSX_KERNEL_PANIC_H
#define BTSX_KERNEL_PANIC_H

#include "kernel/trap.h"

__attribute__((noreturn, format(printf, 1, 2))) void panic(const char *fmt, ...);
__attribute__((noreturn)) void panic_frame(const struct trap_frame *f, const char *why);

#define BUG_ON(cond)                                                                               \
    do {                                                                                           \
        if (cond)                                                                                  \
            panic("BUG: %s at %s:%d", #cond, __FILE__, __LINE__);                                  \
    } while (0)

#endif
