/* UndefinedBehaviorSanitizer's in-kernel runtime, in the kernel built with UBSAN=1 only (the
 * Makefile leaves kernel/ubsan*.c out of the ordinary kernel, which calls none of this).
 *
 * The compiler puts a check before every operation of the sanitized kinds and, when it fails,
 * calls one of the __ubsan_handle_* entry points of kernel/ubsan.c with a description of the
 * site (file, line, column, the types involved) and the values. Every instrumented file calls
 * them, so kernel/ubsan.c calls no other C file (tools/check-loops.sh): it writes the report
 * into a buffer of its own and hands it to ubsan_report_hook, which kernel/ubsan_report.c
 * installs once the console can print. Reports made before that are kept (the first one, and
 * a count) and made when the hook is installed. */
#ifndef BTSX_KERNEL_UBSAN_H
#define BTSX_KERNEL_UBSAN_H

#include <stdbool.h>

/* The longest report, including the NUL: it must fit one KTAP line with the "# FAIL: " and a
 * test's result line's room for its reason. */
#define UBSAN_REPORT_MAX 200

/* report: "ubsan: FILE:LINE:COL: CHECK: details". fatal: the code cannot go on after it
 * (__builtin_unreachable() was reached), so the hook must not return; if it does, or there is
 * none, the handler ends in an invalid-opcode exception. */
extern void (*ubsan_report_hook)(const char *report, bool fatal);

/* Reports made before the hook was installed: how many, and the first one's text (NULL if
 * none). kernel/ubsan_report.c makes them when it is installed. */
unsigned ubsan_early_reports(const char **first);

#endif /* BTSX_KERNEL_UBSAN_H */
