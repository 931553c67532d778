/* Kernel command line parser: strict, and all-or-nothing (see cmdline.h). */
#include "kernel/cmdline.h"

#include "kernel/printf.h"
#include "kernel/string.h"

#define U64_HEX_PREFIX_LEN 2 /* "0x" */
#define HEX_DIGIT_BITS     4
#define DECIMAL_BASE       10u
#define U64_EXPECT         "decimal or 0x-hex u64"
#define EXPECT_MAX         128 /* a choice's "name|name|...", as messages show it */

/* The line is parsed twice: once to check every token, and only if all are good, once more to
 * store the values. So an error leaves every option as it was. */
struct parse {
    const char *line;
    bool store;
    char *err;
    size_t errlen;
};

static const struct cmdline_choice flag_choices[] = {
    {"0", 0},
    {"1", 1},
};

static int fail(struct parse *ps, int code, const char *fmt, ...) BTSX_PRINTF_LIKE(3, 4);
static int fail(struct parse *ps, int code, const char *fmt, ...)
{
    if (ps->err && ps->errlen) {
        va_list ap;
        va_start(ap, fmt);
        kvsnprintf(ps->err, ps->errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* What a good value looks like, shown in every value error: the choice names joined by '|'
 * (built into buf), or the kind's fixed form. */
static const char *expect_of(const struct cmdline_option *d, char *buf, size_t size)
{
    if (d->kind == CMDLINE_U64 && d->word) {
        ksnprintf(buf, size, "%s >= %lu, or %s", U64_EXPECT, d->min, d->word);
        return buf;
    }
    if (d->kind == CMDLINE_U64)
        return U64_EXPECT;
    if (d->kind == CMDLINE_LIST)
        return d->expect;
    const struct cmdline_choice *c = d->kind == CMDLINE_FLAG ? flag_choices : d->choices;
    size_t n =
        d->kind == CMDLINE_FLAG ? sizeof(flag_choices) / sizeof(flag_choices[0]) : d->nchoices;
    size_t pos = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && pos < size; i++)
        pos += (size_t)ksnprintf(buf + pos, size - pos, "%s%s", i ? "|" : "", c[i].name);
    return buf;
}

static int missing_value(struct parse *ps, const struct cmdline_option *d)
{
    char buf[EXPECT_MAX];
    return fail(ps, CMDLINE_EVALUE, "missing value for '%s' (%s)", d->name,
                expect_of(d, buf, sizeof(buf)));
}

/* why = NULL: the option's expected form. */
static int bad_value(struct parse *ps, const struct cmdline_option *d, const char *val, size_t vlen,
                     const char *why)
{
    char buf[EXPECT_MAX];
    return fail(ps, CMDLINE_EVALUE, "bad value '%.*s' for '%s' (%s)", (int)vlen, val, d->name,
                why ? why : expect_of(d, buf, sizeof(buf)));
}

/* Exact, length-bounded comparison of a token piece with a NUL-terminated word. */
static bool word_eq(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(s, word, len) == 0;
}

static bool lookup_choice(const struct cmdline_choice *c, size_t n, const char *val, size_t vlen,
                          int *out)
{
    for (size_t i = 0; i < n; i++) {
        if (word_eq(val, vlen, c[i].name)) {
            *out = c[i].value;
            return true;
        }
    }
    return false;
}

static int apply_choice(struct parse *ps, const struct cmdline_option *d, const char *val,
                        size_t vlen)
{
    int v;

    if (!val)
        return missing_value(ps, d);
    if (!lookup_choice(d->choices, d->nchoices, val, vlen, &v))
        return bad_value(ps, d, val, vlen, NULL);
    if (ps->store)
        *(int *)d->var = v;
    return 0;
}

/* A flag: bare means on, otherwise 0 or 1. */
static int apply_flag(struct parse *ps, const struct cmdline_option *d, const char *val,
                      size_t vlen)
{
    int v = 1;

    if (val &&
        !lookup_choice(flag_choices, sizeof(flag_choices) / sizeof(flag_choices[0]), val, vlen, &v))
        return bad_value(ps, d, val, vlen, NULL);
    if (ps->store)
        *(bool *)d->var = v != 0;
    return 0;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int apply_u64(struct parse *ps, const struct cmdline_option *d, const char *val, size_t vlen)
{
    uint64_t v = 0;

    if (!val)
        return missing_value(ps, d);
    if (d->word && word_eq(val, vlen, d->word)) {
        if (ps->store)
            *(uint64_t *)d->var = d->word_value;
        return 0;
    }
    if (vlen > U64_HEX_PREFIX_LEN && val[0] == '0' && (val[1] == 'x' || val[1] == 'X')) {
        for (size_t i = U64_HEX_PREFIX_LEN; i < vlen; i++) {
            int h = hex_digit(val[i]);
            if (h < 0)
                return bad_value(ps, d, val, vlen, NULL);
            if (v >> (64 - HEX_DIGIT_BITS))
                return bad_value(ps, d, val, vlen, "out of range for u64");
            v = (v << HEX_DIGIT_BITS) | (uint64_t)h;
        }
    } else {
        if (vlen == 0)
            return bad_value(ps, d, val, vlen, NULL);
        for (size_t i = 0; i < vlen; i++) {
            uint64_t digit;
            if (val[i] < '0' || val[i] > '9')
                return bad_value(ps, d, val, vlen, NULL);
            digit = (uint64_t)(val[i] - '0');
            if (v > (UINT64_MAX - digit) / DECIMAL_BASE)
                return bad_value(ps, d, val, vlen, "out of range for u64");
            v = v * DECIMAL_BASE + digit;
        }
    }
    if (v < d->min)
        return bad_value(ps, d, val, vlen, NULL);
    if (ps->store)
        *(uint64_t *)d->var = v;
    return 0;
}

static int apply_list(struct parse *ps, const struct cmdline_option *d, const char *val,
                      size_t vlen)
{
    char *items = d->var;
    unsigned n = 0;
    size_t pos = 0;

    if (!val)
        return missing_value(ps, d);
    for (;;) {
        size_t len = 0;

        while (pos + len < vlen && val[pos + len] != ',')
            len++;
        if (len == 0) {
            char why[EXPECT_MAX];
            ksnprintf(why, sizeof(why), "empty %s", d->noun);
            return bad_value(ps, d, val, vlen, why);
        }
        if (n == d->max_items)
            return fail(ps, CMDLINE_ETOOLONG, "too many %ss for '%s' (max %u)", d->noun, d->name,
                        (unsigned)d->max_items);
        if (len >= d->item_size)
            return fail(ps, CMDLINE_ETOOLONG, "%s '%.*s' too long for '%s' (max %u chars)", d->noun,
                        (int)len, val + pos, d->name, (unsigned)(d->item_size - 1));
        if (ps->store) {
            memcpy(items + n * d->item_size, val + pos, len);
            items[n * d->item_size + len] = '\0';
        }
        n++;
        pos += len;
        if (pos == vlen)
            break;
        pos++; /* the ',' */
    }
    /* The line's list replaces the stored one: a selection, not an addition. */
    if (ps->store)
        *d->count = n;
    return 0;
}

/* Space and tab separate options; CR/LF too, because some loaders leave a line ending. */
static bool is_sep(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Skips separators from *pos; returns the length of the token that starts there (0: none). */
static size_t next_token(const char *line, size_t *pos)
{
    size_t len = 0;

    while (line[*pos] && is_sep(line[*pos]))
        (*pos)++;
    while (line[*pos + len] && !is_sep(line[*pos + len]))
        len++;
    return len;
}

static size_t key_len(const char *tok, size_t len)
{
    size_t klen = 0;

    while (klen < len && tok[klen] != '=')
        klen++;
    return klen;
}

/* Whether a token is the image a loader names before the options: a path (GRUB: "/boot/...")
 * or a URI (iPXE: "tftp://host/btsx32.elf", a scheme of letters, digits, '+', '-' and '.'
 * after a letter, then "://"). No option name starts with '/' or holds a ':'. */
static bool loader_image(const char *tok, size_t len)
{
    if (tok[0] == '/')
        return true;
    size_t i = 0;
    if (!((tok[0] >= 'a' && tok[0] <= 'z') || (tok[0] >= 'A' && tok[0] <= 'Z')))
        return false;
    while (i < len &&
           ((tok[i] >= 'a' && tok[i] <= 'z') || (tok[i] >= 'A' && tok[i] <= 'Z') ||
            (tok[i] >= '0' && tok[i] <= '9') || tok[i] == '+' || tok[i] == '-' || tok[i] == '.'))
        i++;
    return i + 3 <= len && tok[i] == ':' && tok[i + 1] == '/' && tok[i + 2] == '/';
}

/* Whether a token before line[end] names the option (an ignored image never does: see
 * loader_image()). */
static bool given_before(const char *line, size_t end, const char *name)
{
    size_t len;

    for (size_t pos = 0; (len = next_token(line, &pos)) != 0 && pos < end; pos += len)
        if (word_eq(line + pos, key_len(line + pos, len), name))
            return true;
    return false;
}

static const struct cmdline_option *find_option(const char *key, size_t klen)
{
    for (const struct cmdline_option *d = __start_btsx_options; d < __stop_btsx_options; d++)
        if (word_eq(key, klen, d->name))
            return d;
    return NULL;
}

static int parse_token(struct parse *ps, size_t at, size_t len)
{
    const char *tok = ps->line + at;
    size_t klen = key_len(tok, len);
    const char *val = NULL;
    size_t vlen = 0;
    const struct cmdline_option *d;
    int rc;

    if (klen < len) {
        val = tok + klen + 1;
        vlen = len - klen - 1;
    }
    if (klen == 0)
        return fail(ps, CMDLINE_EUNKNOWN, "empty option name in '%.*s'", (int)len, tok);
    d = find_option(tok, klen);
    if (!d)
        return fail(ps, CMDLINE_EUNKNOWN, "unknown option '%.*s'", (int)klen, tok);
    if (given_before(ps->line, at, d->name))
        return fail(ps, CMDLINE_EDUP, "option '%s' given twice", d->name);

    if (d->kind == CMDLINE_CHOICE)
        rc = apply_choice(ps, d, val, vlen);
    else if (d->kind == CMDLINE_FLAG)
        rc = apply_flag(ps, d, val, vlen);
    else if (d->kind == CMDLINE_U64)
        rc = apply_u64(ps, d, val, vlen);
    else
        rc = apply_list(ps, d, val, vlen);
    if (rc == 0 && ps->store && d->given)
        *d->given = true;
    return rc;
}

static int parse_line(struct parse *ps)
{
    bool first = true;
    size_t len;

    for (size_t pos = 0; (len = next_token(ps->line, &pos)) != 0; pos += len, first = false) {
        /* Loaders pass the kernel's path (GRUB) or URI (iPXE) as the first word. */
        if (first && loader_image(ps->line + pos, len))
            continue;
        int rc = parse_token(ps, pos, len);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int cmdline_parse(const char *line, char *err, size_t errlen)
{
    struct parse ps = {.line = line, .store = false, .err = err, .errlen = errlen};
    int rc;

    if (err && errlen)
        err[0] = '\0';
    if (!line)
        return 0;
    if (strnlen(line, CMDLINE_MAX_LEN + 1) > CMDLINE_MAX_LEN)
        return fail(&ps, CMDLINE_ETOOLONG, "command line longer than %d characters",
                    CMDLINE_MAX_LEN);
    rc = parse_line(&ps);
    if (rc < 0)
        return rc;
    ps.store = true;
    return parse_line(&ps);
}
