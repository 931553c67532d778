/* Kernel command line parser: table-driven, strict, and all-or-nothing (see cmdline.h). */
#include "kernel/cmdline.h"

#include "kernel/printf.h"
#include "kernel/string.h"

#define SEED_HEX_PREFIX_LEN 2 /* "0x" */
#define HEX_DIGIT_BITS      4
#define DECIMAL_BASE        10u

/* Parser state: options are built in a private copy so an error leaves the caller's intact. */
struct parse {
    struct btsx_options opt;
    unsigned seen; /* bit per option_desc entry: each option may appear once */
    char *err;
    size_t errlen;
};

struct choice {
    const char *name;
    int value;
};

struct option_desc;
/* val is NULL for a bare "key", otherwise the (not NUL-terminated) text after '='. */
typedef int (*apply_fn)(struct parse *ps, const struct option_desc *d, const char *val,
                        size_t vlen);

struct option_desc {
    const char *name;
    const char *expect; /* what a good value looks like, shown in every value error */
    apply_fn apply;
    const struct choice *choices; /* for apply_choice / apply_flag */
    size_t nchoices;
    void (*set)(struct btsx_options *o, int value); /* stores a looked-up choice */
};

#define NCHOICES(a) (sizeof(a) / sizeof((a)[0]))

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

static int bad_value(struct parse *ps, const struct option_desc *d, const char *val, size_t vlen,
                     const char *why)
{
    return fail(ps, CMDLINE_EVALUE, "bad value '%.*s' for '%s' (%s)", (int)vlen, val, d->name, why);
}

/* Exact, length-bounded comparison of a token piece with a NUL-terminated word. */
static bool word_eq(const char *s, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(s, word, len) == 0;
}

static bool lookup_choice(const struct option_desc *d, const char *val, size_t vlen, int *out)
{
    for (size_t i = 0; i < d->nchoices; i++) {
        if (word_eq(val, vlen, d->choices[i].name)) {
            *out = d->choices[i].value;
            return true;
        }
    }
    return false;
}

static int apply_choice(struct parse *ps, const struct option_desc *d, const char *val, size_t vlen)
{
    int v;

    if (!val)
        return fail(ps, CMDLINE_EVALUE, "missing value for '%s' (%s)", d->name, d->expect);
    if (!lookup_choice(d, val, vlen, &v))
        return bad_value(ps, d, val, vlen, d->expect);
    d->set(&ps->opt, v);
    return 0;
}

/* A flag: bare means on, otherwise only the values in its choice table (0|1). */
static int apply_flag(struct parse *ps, const struct option_desc *d, const char *val, size_t vlen)
{
    int v;

    if (!val) {
        d->set(&ps->opt, 1);
        return 0;
    }
    if (!lookup_choice(d, val, vlen, &v))
        return bad_value(ps, d, val, vlen, d->expect);
    d->set(&ps->opt, v);
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

static int apply_seed(struct parse *ps, const struct option_desc *d, const char *val, size_t vlen)
{
    uint64_t v = 0;

    if (!val)
        return fail(ps, CMDLINE_EVALUE, "missing value for '%s' (%s)", d->name, d->expect);
    if (vlen > SEED_HEX_PREFIX_LEN && val[0] == '0' && (val[1] == 'x' || val[1] == 'X')) {
        for (size_t i = SEED_HEX_PREFIX_LEN; i < vlen; i++) {
            int h = hex_digit(val[i]);
            if (h < 0)
                return bad_value(ps, d, val, vlen, d->expect);
            if (v >> (64 - HEX_DIGIT_BITS))
                return bad_value(ps, d, val, vlen, "out of range for u64");
            v = (v << HEX_DIGIT_BITS) | (uint64_t)h;
        }
    } else {
        if (vlen == 0)
            return bad_value(ps, d, val, vlen, d->expect);
        for (size_t i = 0; i < vlen; i++) {
            uint64_t digit;
            if (val[i] < '0' || val[i] > '9')
                return bad_value(ps, d, val, vlen, d->expect);
            digit = (uint64_t)(val[i] - '0');
            if (v > (UINT64_MAX - digit) / DECIMAL_BASE)
                return bad_value(ps, d, val, vlen, "out of range for u64");
            v = v * DECIMAL_BASE + digit;
        }
    }
    ps->opt.seed = v;
    ps->opt.seed_set = true;
    return 0;
}

static int apply_tests(struct parse *ps, const struct option_desc *d, const char *val, size_t vlen)
{
    size_t pos = 0;

    if (!val)
        return fail(ps, CMDLINE_EVALUE, "missing value for '%s' (%s)", d->name, d->expect);
    /* The line replaces any globs the caller had: tests= is a selection, not an addition. */
    ps->opt.nglobs = 0;
    for (;;) {
        size_t len = 0;

        while (pos + len < vlen && val[pos + len] != ',')
            len++;
        if (len == 0)
            return bad_value(ps, d, val, vlen, "empty glob");
        if (ps->opt.nglobs == CMDLINE_MAX_GLOBS)
            return fail(ps, CMDLINE_ETOOLONG, "too many globs for '%s' (max %d)", d->name,
                        CMDLINE_MAX_GLOBS);
        if (len >= CMDLINE_GLOB_LEN)
            return fail(ps, CMDLINE_ETOOLONG, "glob '%.*s' too long for '%s' (max %d chars)",
                        (int)len, val + pos, d->name, CMDLINE_GLOB_LEN - 1);
        memcpy(ps->opt.globs[ps->opt.nglobs], val + pos, len);
        ps->opt.globs[ps->opt.nglobs][len] = '\0';
        ps->opt.nglobs++;
        pos += len;
        if (pos == vlen)
            return 0;
        pos++; /* the ',' */
    }
}

static void set_backend(struct btsx_options *o, int v)
{
    o->backend = (enum backend_choice)v;
}
static void set_exit(struct btsx_options *o, int v)
{
    o->exit = (enum exit_method)v;
}
static void set_pmi(struct btsx_options *o, int v)
{
    o->pmi = (enum pmi_delivery)v;
}
static void set_apic(struct btsx_options *o, int v)
{
    o->apic = (enum apic_mode)v;
}
static void set_console(struct btsx_options *o, int v)
{
    o->console = (enum console_choice)v;
}
static void set_verbose(struct btsx_options *o, int v)
{
    o->verbose = v != 0;
}
static void set_selftest(struct btsx_options *o, int v)
{
    o->selftest = v != 0;
}

static void set_dump(struct btsx_options *o, int v)
{
    o->dump = v != 0;
}
static void set_model_layout(struct btsx_options *o, int v)
{
    o->model_layout = (enum model_layout_choice)v;
}

static const struct choice backend_choices[] = {
    {"auto", BACKEND_AUTO},
    {"hw", BACKEND_HW},
    {"model", BACKEND_MODEL},
};
static const struct choice exit_choices[] = {
    {"debugexit", EXIT_DEBUGEXIT},
    {"halt", EXIT_HALT},
    {"reboot", EXIT_REBOOT},
};
static const struct choice pmi_choices[] = {
    {"fixed", PMI_FIXED},
    {"nmi", PMI_NMI},
};
static const struct choice apic_choices[] = {
    {"auto", APIC_MODE_AUTO},
    {"xapic", APIC_MODE_XAPIC},
    {"x2apic", APIC_MODE_X2APIC},
};
static const struct choice console_choices[] = {
    {"all", CONSOLE_ALL},
    {"serial", CONSOLE_SERIAL},
};
static const struct choice model_layout_choices[] = {
    {"auto", MODEL_LAYOUT_AUTO},
    {"core", MODEL_LAYOUT_CORE},
    {"netburst", MODEL_LAYOUT_NETBURST},
};
static const struct choice flag_choices[] = {
    {"0", 0},
    {"1", 1},
};

#define CHOICE_OPT(n, e, tbl, setter)                                                              \
    {                                                                                              \
        n, e, apply_choice, tbl, NCHOICES(tbl), setter                                             \
    }
#define FLAG_OPT(n, setter)                                                                        \
    {                                                                                              \
        n, "0|1", apply_flag, flag_choices, NCHOICES(flag_choices), setter                         \
    }

static const struct option_desc options[] = {
    {"tests", "GLOB[,GLOB...]", apply_tests, NULL, 0, NULL},
    CHOICE_OPT("backend", "auto|hw|model", backend_choices, set_backend),
    {"seed", "decimal or 0x-hex u64", apply_seed, NULL, 0, NULL},
    FLAG_OPT("verbose", set_verbose),
    CHOICE_OPT("exit", "debugexit|halt|reboot", exit_choices, set_exit),
    FLAG_OPT("selftest", set_selftest),
    CHOICE_OPT("pmi", "fixed|nmi", pmi_choices, set_pmi),
    CHOICE_OPT("apic", "auto|xapic|x2apic", apic_choices, set_apic),
    CHOICE_OPT("console", "all|serial", console_choices, set_console),
    FLAG_OPT("dump", set_dump),
    CHOICE_OPT("model.layout", "auto|core|netburst", model_layout_choices, set_model_layout),
};

#define NOPTIONS NCHOICES(options)
_Static_assert(NOPTIONS <= sizeof(unsigned) * 8, "struct parse.seen has a bit per option");

/* Space and tab separate options; CR/LF too, because some loaders leave a line ending. */
static bool is_sep(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int parse_token(struct parse *ps, const char *tok, size_t len)
{
    size_t klen = 0;
    const char *val = NULL;
    size_t vlen = 0;

    while (klen < len && tok[klen] != '=')
        klen++;
    if (klen < len) {
        val = tok + klen + 1;
        vlen = len - klen - 1;
    }
    if (klen == 0)
        return fail(ps, CMDLINE_EUNKNOWN, "empty option name in '%.*s'", (int)len, tok);

    for (size_t i = 0; i < NOPTIONS; i++) {
        const struct option_desc *d = &options[i];

        if (!word_eq(tok, klen, d->name))
            continue;
        if (ps->seen & (1u << i))
            return fail(ps, CMDLINE_EDUP, "option '%s' given twice", d->name);
        ps->seen |= 1u << i;
        return d->apply(ps, d, val, vlen);
    }
    return fail(ps, CMDLINE_EUNKNOWN, "unknown option '%.*s'", (int)klen, tok);
}

void cmdline_defaults(struct btsx_options *o)
{
    *o = (struct btsx_options){
        .nglobs = 0,
        .backend = BACKEND_AUTO,
        .seed = 0,
        .seed_set = false,
        .verbose = false,
        .exit = EXIT_AUTO,
        .selftest = false,
        .pmi = PMI_FIXED,
        .apic = APIC_MODE_AUTO,
        .console = CONSOLE_ALL,
        .dump = false,
        .model_layout = MODEL_LAYOUT_AUTO,
    };
}

int cmdline_parse(const char *line, struct btsx_options *o, char *err, size_t errlen)
{
    struct parse ps;
    bool first = true;
    size_t pos = 0;

    ps.seen = 0;
    ps.err = err;
    ps.errlen = errlen;
    if (err && errlen)
        err[0] = '\0';
    if (!o)
        return fail(&ps, CMDLINE_EVALUE, "no options structure");
    if (!line)
        return 0;
    if (strnlen(line, CMDLINE_MAX_LEN + 1) > CMDLINE_MAX_LEN)
        return fail(&ps, CMDLINE_ETOOLONG, "command line longer than %d characters",
                    CMDLINE_MAX_LEN);

    ps.opt = *o;
    for (;;) {
        size_t len = 0;
        int rc;

        while (line[pos] && is_sep(line[pos]))
            pos++;
        if (!line[pos])
            break;
        while (line[pos + len] && !is_sep(line[pos + len]))
            len++;
        /* Loaders such as GRUB pass the kernel's path as the first word. */
        if (!(first && line[pos] == '/')) {
            rc = parse_token(&ps, line + pos, len);
            if (rc < 0)
                return rc;
        }
        first = false;
        pos += len;
    }
    *o = ps.opt;
    return 0;
}

bool glob_match(const char *pattern, const char *name)
{
    /* Where to resume after the most recent '*': only the latest star ever needs revisiting,
     * because an earlier star can absorb anything a later one could. */
    const char *star_p = NULL, *star_n = NULL;
    const char *p = pattern, *n = name;

    if (!pattern || !name)
        return false;
    while (*n) {
        if (*p == '*') {
            star_p = ++p; /* first try matching the empty run */
            star_n = n;
        } else if (*p == '?' || *p == *n) {
            p++;
            n++;
        } else if (star_p) {
            p = star_p; /* let the star swallow one more character */
            n = ++star_n;
        } else {
            return false;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}

bool cmdline_selects(const struct btsx_options *o, const char *testname)
{
    if (!testname)
        return false;
    if (o->nglobs == 0)
        return true;
    for (unsigned i = 0; i < o->nglobs; i++)
        if (glob_match(o->globs[i], testname))
            return true;
    return false;
}
