/* btsx-report/1 formatting (see report.h and docs/report.md). */
#include "tests/report.h"

#include "kernel/printf.h"
#include "kernel/string.h"

/* Room kept for "more=N\n" (N < 1000: there are at most 512 tests). */
#define MORE_LINE_MAX sizeof("more=999\n")

struct out {
    char *buf;
    size_t len, limit; /* limit: bytes of text allowed, the NUL not included */
};

static bool fits(const struct out *o, size_t n, size_t keep)
{
    return o->len + n + keep <= o->limit;
}

static void put(struct out *o, const char *s, size_t n)
{
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = '\0';
}

/* One byte as it appears in a value: itself, "\\\\" or "\\xHH". */
static size_t escape_byte(unsigned char c, char out[4])
{
    static const char hex[] = "0123456789abcdef";
    if (c == '\\') {
        out[0] = out[1] = '\\';
        return 2;
    }
    if (c >= 0x20 && c < 0x7f) {
        out[0] = (char)c;
        return 1;
    }
    out[0] = '\\';
    out[1] = 'x';
    out[2] = hex[c >> 4];
    out[3] = hex[c & 15];
    return 4;
}

/* Appends src escaped to val (len bytes so far, at most REPORT_VALUE_MAX): the whole of it
 * if it fits, else as much as fits with REPORT_CUT after it. An escape is never split. */
static size_t value_append(char *val, size_t len, const char *src)
{
    size_t cut = sizeof(REPORT_CUT) - 1;
    size_t mark = len;
    bool marked = false;
    for (const char *p = src; *p; p++) {
        char e[4];
        size_t n = escape_byte((unsigned char)*p, e);
        if (!marked && len + n > REPORT_VALUE_MAX - cut) {
            mark = len; /* where REPORT_CUT goes if the rest does not fit */
            marked = true;
        }
        if (len + n > REPORT_VALUE_MAX) {
            memcpy(val + mark, REPORT_CUT, cut);
            return mark + cut;
        }
        memcpy(val + len, e, n);
        len += n;
    }
    return len;
}

/* "key=" value "\n" into line; returns its length. */
static size_t make_line(char *line, const char *key, const char *a, const char *b)
{
    size_t k = strlen(key);
    memcpy(line, key, k);
    line[k++] = '=';
    size_t v = value_append(line + k, 0, a);
    if (b) {
        if (v < REPORT_VALUE_MAX)
            line[k + v++] = ':';
        v = value_append(line + k, v, b);
    }
    line[k + v] = '\n';
    return k + v + 1;
}

static bool same_skip(const struct report_test *t, const char *why)
{
    return t->status == REPORT_SKIP && strcmp(t->why ? t->why : "", why) == 0;
}

/* Whether a skip before index i had this reason: its group's line is written already. */
static bool skip_seen_before(const struct report_facts *f, unsigned i, const char *why)
{
    for (unsigned j = 0; j < i; j++)
        if (same_skip(&f->tests[j], why))
            return true;
    return false;
}

#define LINE_MAX_LEN (16 + REPORT_VALUE_MAX + 1)

/* One line of the list that more= ends: written if nothing was left out before it and it
 * fits with keep bytes to spare, else counted. */
static void put_item(struct out *o, const char *line, size_t n, size_t keep, unsigned *more)
{
    if (!*more && fits(o, n, keep))
        put(o, line, n);
    else
        (*more)++;
}

static void put_facts(struct out *o, const struct report_fact *facts, unsigned count, size_t keep,
                      unsigned *more)
{
    char line[LINE_MAX_LEN];
    for (unsigned i = 0; i < count; i++)
        if (facts[i].value && facts[i].value[0])
            put_item(o, line, make_line(line, facts[i].key, facts[i].value, NULL), keep, more);
}

size_t report_format(const struct report_facts *f, char *buf, size_t size)
{
    if (!size)
        return 0;
    struct out o = {buf, 0, size - 1 < REPORT_MAX ? size - 1 : REPORT_MAX};
    char line[LINE_MAX_LEN];
    char tail[LINE_MAX_LEN];
    size_t tail_len = make_line(tail, "r", f->verdict, NULL);
    buf[0] = '\0';

    /* The fixed lines: the version line, v= and n= (r= goes last). */
    char fixed[3][LINE_MAX_LEN];
    size_t flen[3];
    flen[0] = (size_t)ksnprintf(fixed[0], sizeof(fixed[0]), "%s\n", REPORT_VERSION);
    flen[1] = make_line(fixed[1], "v", f->version, NULL);
    flen[2] = (size_t)ksnprintf(fixed[2], sizeof(fixed[2]), "n=%u/%u/%u\n", f->passed, f->failed,
                                f->skipped);
    if (!fits(&o, flen[0] + flen[1] + flen[2], tail_len + MORE_LINE_MAX))
        goto too_small;
    put(&o, fixed[0], flen[0]);
    put(&o, fixed[1], flen[1]);
    /* Room kept for n=, r= and a possible more= line, whatever comes before them. */
    size_t keep = flen[2] + tail_len + MORE_LINE_MAX;
    size_t n;

    /* The facts, n=, the failures, the late facts, then one line per distinct skip reason,
     * while they fit; once one does not, the rest are counted instead, so "more" is always
     * the tail. */
    unsigned more = 0;
    put_facts(&o, f->facts, f->nfacts, keep, &more);
    put(&o, fixed[2], flen[2]);
    keep -= flen[2];
    for (unsigned i = 0; i < f->ntests; i++) {
        const struct report_test *t = &f->tests[i];
        if (t->status == REPORT_SKIP)
            continue;
        n = make_line(line, t->status == REPORT_TIMEOUT ? "t" : "f", t->name,
                      t->why && t->why[0] ? t->why : "-");
        put_item(&o, line, n, keep, &more);
    }
    put_facts(&o, f->late, f->nlate, keep, &more);
    for (unsigned i = 0; i < f->ntests; i++) {
        const struct report_test *t = &f->tests[i];
        if (t->status != REPORT_SKIP)
            continue;
        const char *why = t->why ? t->why : "";
        if (skip_seen_before(f, i, why))
            continue;
        unsigned count = 0;
        for (unsigned j = i; j < f->ntests; j++)
            count += same_skip(&f->tests[j], why);
        char num[12];
        ksnprintf(num, sizeof(num), "%u", count);
        n = make_line(line, "s", num, why[0] ? why : "-");
        put_item(&o, line, n, keep, &more);
    }
    if (more) {
        n = ksnprintf(line, sizeof(line), "more=%u\n", more);
        put(&o, line, n);
    }
    put(&o, tail, tail_len);
    return o.len;

too_small:
    buf[0] = '\0';
    return 0;
}
