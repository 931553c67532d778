/* KTAP version 1 emitter: assembles each line in the struct's buffer, then hands it to put(). */
#include "tests/ktap.h"

#include <stdarg.h>

#include "kernel/string.h"

/* Room left for text: the buffer also holds '\n' and the NUL. */
#define KTAP_CONTENT_MAX     (KTAP_LINE_MAX - 2)
#define KTAP_DIAG_PREFIX     "# "
#define KTAP_DIAG_PREFIX_LEN 2
#define KTAP_TRUNCATED_LEN   (sizeof(KTAP_TRUNCATED) - 1)

_Static_assert(KTAP_CONTENT_MAX > KTAP_DIAG_PREFIX_LEN + KTAP_TRUNCATED_LEN,
               "KTAP_LINE_MAX too small to hold anything");

static void line_append(struct ktap *k, char c)
{
    if (k->len == KTAP_CONTENT_MAX) {
        k->truncated = true;
        return;
    }
    k->line[k->len++] = c;
}

static void line_append_str(struct ktap *k, const char *s)
{
    while (*s)
        line_append(k, *s++);
}

static void line_emit(struct ktap *k)
{
    if (k->truncated)
        memcpy(k->line + k->len - KTAP_TRUNCATED_LEN, KTAP_TRUNCATED, KTAP_TRUNCATED_LEN);
    k->line[k->len++] = '\n';
    k->line[k->len] = '\0';
    k->put(k->line, k->ctx);
    k->len = 0;
    k->truncated = false;
}

/* ------------------------------------------------------------------ diagnostics */

static void diag_start(struct ktap *k)
{
    k->len = 0;
    k->truncated = false;
    line_append_str(k, KTAP_DIAG_PREFIX);
}

/* An empty diagnostic line is a bare "#": no trailing blank for the log checkers to trip on. */
static void diag_emit(struct ktap *k)
{
    if (k->len == KTAP_DIAG_PREFIX_LEN)
        k->len--;
    line_emit(k);
}

static void diag_put(char c, void *ctx)
{
    struct ktap *k = ctx;

    /* A carriage return would let a terminal, or a reader that also splits lines on it
     * (Python's str.splitlines), see a line this emitter never made: it becomes a space. */
    if (c == '\r')
        c = ' ';
    if (c == '\n') {
        diag_emit(k);
        diag_start(k);
        k->diag_pending = false; /* nothing on the fresh line yet */
        return;
    }
    /* A long diagnostic wraps rather than being cut: all of it is evidence. */
    if (k->len == KTAP_CONTENT_MAX) {
        diag_emit(k);
        diag_start(k);
    }
    k->diag_pending = true;
    line_append(k, c);
}

static void diag_vformat(struct ktap *k, const char *fmt, va_list ap)
{
    diag_start(k);
    k->diag_pending = true;
    (void)fmt_vformat(diag_put, k, fmt, ap);
    /* A message ending in '\n' has already emitted its last line. */
    if (k->diag_pending)
        diag_emit(k);
    k->diag_pending = false;
    k->len = 0;
}

void ktap_begin(struct ktap *k, ktap_put_fn put, void *ctx)
{
    k->put = put;
    k->ctx = ctx;
    k->next = 1;
    k->planned = 0;
    k->plan_done = false;
    k->passed = 0;
    k->failed = 0;
    k->skipped = 0;
    k->len = 0;
    k->diag_pending = false;
    k->truncated = false;
    line_append_str(k, KTAP_VERSION_LINE);
    line_emit(k);
}

int ktap_header_line(struct ktap *k, const char *fmt, ...)
{
    va_list ap;

    /* KTAP puts header lines before the plan; later they would read as test diagnostics. */
    if (k->plan_done || k->next != 1)
        return E_STATE;
    va_start(ap, fmt);
    diag_vformat(k, fmt, ap);
    va_end(ap);
    return 0;
}

int ktap_diag(struct ktap *k, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    diag_vformat(k, fmt, ap);
    va_end(ap);
    return 0;
}

/* ------------------------------------------------------------------ plan and results */

static void result_put(char c, void *ctx)
{
    /* A reason must not break the result onto a second line. */
    line_append(ctx, c == '\n' || c == '\r' ? ' ' : c);
}

static void line_printf(struct ktap *k, const char *fmt, ...) BTSX_PRINTF_LIKE(2, 3);
static void line_printf(struct ktap *k, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    (void)fmt_vformat(result_put, k, fmt, ap);
    va_end(ap);
}

int ktap_plan(struct ktap *k, unsigned n)
{
    if (k->plan_done)
        return E_STATE;
    k->plan_done = true;
    k->planned = n;
    k->len = 0;
    line_printf(k, "1..%u", n);
    line_emit(k);
    return 0;
}

static const char *directive(enum ktap_status st)
{
    switch (st) {
    case KTAP_SKIP:
        return "SKIP";
    case KTAP_TIMEOUT:
        return "TIMEOUT";
    case KTAP_ERROR:
        return "ERROR";
    case KTAP_PASS:
    case KTAP_FAIL:
        break;
    }
    return NULL;
}

int ktap_result(struct ktap *k, enum ktap_status st, const char *name, const char *reason_fmt, ...)
{
    bool has_reason = reason_fmt && reason_fmt[0];
    const char *dir;
    va_list ap;

    if (st != KTAP_PASS && st != KTAP_FAIL && st != KTAP_SKIP && st != KTAP_TIMEOUT &&
        st != KTAP_ERROR)
        return E_INVAL;
    if (!name || !name[0])
        return E_INVAL;
    dir = directive(st);
    /* A skip (or timeout, or error) without its reason tells the reader nothing. */
    if (dir && !has_reason)
        return E_INVAL;

    if (!dir && has_reason) {
        va_start(ap, reason_fmt);
        diag_vformat(k, reason_fmt, ap);
        va_end(ap);
    }

    k->len = 0;
    k->truncated = false;
    line_printf(k, "%s %u ", st == KTAP_PASS || st == KTAP_SKIP ? "ok" : "not ok", k->next);
    for (const char *p = name; *p; p++)
        line_append(k, *p == '#' || *p == '\n' || *p == '\r' ? KTAP_NAME_BAD_CHAR : *p);
    if (dir) {
        line_printf(k, " # %s ", dir);
        va_start(ap, reason_fmt);
        (void)fmt_vformat(result_put, k, reason_fmt, ap);
        va_end(ap);
        /* A reason that formatted to nothing (or to blanks) leaves no trailing space. */
        while (!k->truncated && k->line[k->len - 1] == ' ')
            k->len--;
    }
    line_emit(k);

    k->next++;
    if (st == KTAP_PASS)
        k->passed++;
    else if (st == KTAP_SKIP)
        k->skipped++;
    else
        k->failed++;
    return 0;
}

void ktap_summary(const struct ktap *k)
{
    char buf[KTAP_LINE_MAX];

    ksnprintf(buf, sizeof(buf), "# %u passed, %u failed, %u skipped\n", k->passed, k->failed,
              k->skipped);
    k->put(buf, k->ctx);
}
