/* KTAP version 1 emitter (the Linux kernel's test output format), pure: it only formats.
 *
 * Every line goes to put() as one NUL-terminated string that ends in '\n', so a sink can
 * write it to serial and screen atomically. A run looks like:
 *
 *   KTAP version 1
 *   # btsx 0.1.0                              ktap_header_line()
 *   1..3                                      ktap_plan()
 *   ok 1 boot.memmap                          ktap_result(KTAP_PASS)
 *   # expected 5, got 4                       (reason of a KTAP_FAIL, as a diagnostic)
 *   not ok 2 paging.write_text                ktap_result(KTAP_FAIL)
 *   ok 3 apic.timer # SKIP no LAPIC timer     ktap_result(KTAP_SKIP)
 *   # 1 passed, 1 failed, 1 skipped           ktap_summary()
 *
 * Lines are limited to KTAP_LINE_MAX: a longer diagnostic continues on a new "# " line, and a
 * longer result line is cut and ends in KTAP_TRUNCATED so the cut is visible.
 */
#ifndef BTSX_TESTS_KTAP_H
#define BTSX_TESTS_KTAP_H

#include <stdbool.h>
#include <stddef.h>

#include "kernel/errno.h"
#include "kernel/printf.h"

#define KTAP_VERSION_LINE  "KTAP version 1"
#define KTAP_LINE_MAX      256   /* buffer for one line, including '\n' and the NUL */
#define KTAP_TRUNCATED     "..." /* ends a result line that did not fit */
#define KTAP_NAME_BAD_CHAR '_'   /* replaces '#' and line breaks in test names */

enum ktap_status {
    KTAP_PASS,    /* ok N name */
    KTAP_FAIL,    /* not ok N name */
    KTAP_SKIP,    /* ok N name # SKIP reason */
    KTAP_TIMEOUT, /* not ok N name # TIMEOUT reason (counted as failed) */
    KTAP_ERROR,   /* not ok N name # ERROR reason (counted as failed) */
};

typedef void (*ktap_put_fn)(const char *line, void *ctx);

/* One KTAP document. The counters are public and read-only for callers. */
struct ktap {
    ktap_put_fn put;
    void *ctx;
    unsigned next;    /* number the next result gets: results so far + 1 */
    unsigned planned; /* from ktap_plan(), valid when plan_done */
    bool plan_done;
    unsigned passed;
    unsigned failed; /* KTAP_FAIL, KTAP_TIMEOUT and KTAP_ERROR */
    unsigned skipped;
    /* Line assembly; private. */
    char line[KTAP_LINE_MAX];
    size_t len;
    bool diag_pending; /* the current "# " line must be emitted even if empty */
    bool truncated;    /* formatting a result line that no longer fits */
};

/* Starts a document: resets the counters and emits "KTAP version 1". */
void ktap_begin(struct ktap *k, ktap_put_fn put, void *ctx);

/* A "# ..." header line (backend, CPU, seed). Only before the plan and the first result:
 * E_STATE otherwise, with nothing emitted. */
int ktap_header_line(struct ktap *k, const char *fmt, ...) BTSX_PRINTF_LIKE(2, 3);

/* "1..n". Once per document: E_STATE on a second call. */
int ktap_plan(struct ktap *k, unsigned n);

/* "# ..." diagnostic; each line of a multi-line message becomes its own "# " line. */
int ktap_diag(struct ktap *k, const char *fmt, ...) BTSX_PRINTF_LIKE(2, 3);

/* One numbered result. name is sanitised (KTAP_NAME_BAD_CHAR for '#', '\r', '\n').
 * SKIP/TIMEOUT/ERROR require a non-empty reason (E_INVAL otherwise); it follows the directive,
 * with line breaks turned into spaces. For PASS/FAIL a reason is optional (NULL for none) and
 * is emitted as a diagnostic just before the result line.
 * E_INVAL (nothing emitted, nothing counted) for a NULL/empty name or an unknown status. */
int ktap_result(struct ktap *k, enum ktap_status st, const char *name, const char *reason_fmt, ...)
    BTSX_PRINTF_LIKE(4, 5);

/* "# P passed, F failed, S skipped" from the counters: the last line of the document. */
void ktap_summary(const struct ktap *k);

/* Results emitted so far. */
static inline unsigned ktap_count(const struct ktap *k)
{
    return k->next - 1;
}

/* True when a plan was given and exactly that many results were emitted: the runner's proof
 * that every planned test actually reported. */
static inline bool ktap_plan_met(const struct ktap *k)
{
    return k->plan_done && ktap_count(k) == k->planned;
}

#endif /* BTSX_TESTS_KTAP_H */
