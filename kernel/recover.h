/*
 * Recovery points: run a function so that a fault (or a watchdog) inside it returns control to
 * the caller instead of stopping the machine. The test framework runs every test inside one,
 * and tests that expect a fault use one to see it happen.
 */
#ifndef BTSX_KERNEL_RECOVER_H
#define BTSX_KERNEL_RECOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/trap.h"

enum recover_reason {
    RECOVER_NONE = 0, /* the function returned */
    RECOVER_FAULT,    /* an exception that no fixup absorbed */
    RECOVER_TIMEOUT,  /* the watchdog fired */
    RECOVER_ABORT,    /* recover_abort_here(): the code gave up, saying why */
};

struct fault_info {
    unsigned vector;
    uint64_t error_code, rip, cr2, rsp;
    bool user; /* taken at CPL 3 */
};

#define KJMP_WORDS 8
struct recovery {
    uint64_t jb[KJMP_WORDS];
    enum recover_reason reason;
    struct fault_info fault;
    const char *why;     /* RECOVER_ABORT: the reason recover_abort_here() was given */
    bool report;         /* print the exception report when a fault ends the function */
    unsigned trap_depth; /* restored on recovery: abandoned handlers never return */
    struct recovery *prev;
};

/* What a trap frame says about a fault (CR2 read for a #PF). */
struct fault_info fault_info_from(const struct trap_frame *f);

/* Runs fn(arg); returns RECOVER_NONE, or why it was cut short (details in r->fault). */
enum recover_reason recover_run(struct recovery *r, void (*fn)(void *), void *arg);
/* From a trap handler: abandon the innermost recovery point's function. Returns false when
 * there is none (the caller must then panic). */
bool recover_from_trap(struct trap_frame *f, enum recover_reason why);
bool recover_active(void);
/* From ordinary code: end the innermost recovery point's function too, with this reason. */
__attribute__((noreturn)) void recover_propagate(enum recover_reason why);
struct recovery *recover_current(void);
/* From ordinary code that found its own state broken (the stack protector): end the innermost
 * recovery point's function with RECOVER_ABORT and why (kept, not copied). There must be one:
 * check recover_active() first. */
__attribute__((noreturn)) void recover_abort_here(const char *why);

/* Save/restore of callee-saved state (kernel/kjmp.S). */
int kjmp_set(uint64_t jb[KJMP_WORDS]) __attribute__((returns_twice));
__attribute__((noreturn)) void kjmp_long(uint64_t jb[KJMP_WORDS], int val);

#endif
