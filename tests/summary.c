/* The report block and the summary screen (see summary.h). */
#include "tests/summary.h"

#include "kernel/apic.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/printf.h"
#include "kernel/qr.h"
#include "kernel/string.h"
#include "tests/test.h"

#define BTSX_VERSION_MAX 16
#define MAX_HEADERS      32
#define MAX_NOT_PASSED   512 /* the framework runs at most this many tests */
#define WHY_MAX          96  /* first diagnostic line kept per test: more than a screen row */

/* The header facts the summary shows, in screen order. report: the report key, NULL for the
 * screen only ("cpu" goes into the report as cpu=, fms= and uc= from CPUID and the microcode
 * revision itself (the screen shows the header line, which ends with it), "apic" as the
 * mode and the timer's clock source); word: the report takes the value's first word only
 * (the rest explains it, and the report must stay small); late: the report puts it after
 * the failures, which matter more. Facts other layers add later (the envelope's "char"
 * lines) get a line here and appear when printed. */
static const struct fact_source {
    const char *header;
    const char *report;
    bool word, late;
    const char *label;
} fact_sources[] = {
    {"cpu", NULL, false, false, "CPU"},         {"hypervisor", "hv", false, true, "Hypervisor"},
    {"boot", "boot", false, true, "Boot"},      {"backend", "be", false, false, "Backend"},
    {"debugctl", "dc", true, true, "DEBUGCTL"}, {"errata", "er", true, false, "Errata"},
    {"apic", NULL, false, true, "APIC"},        {"char", NULL, false, false, "Envelope"},
};
#define NSOURCES (sizeof(fact_sources) / sizeof(fact_sources[0]))

static char headers[MAX_HEADERS][KTAP_LINE_MAX];
static unsigned nheaders;
static char whys[MAX_NOT_PASSED][WHY_MAX];
static struct report_test not_passed[MAX_NOT_PASSED];
static unsigned nnot_passed;

void summary_header(const char *line)
{
    if (nheaders < MAX_HEADERS)
        strlcpy(headers[nheaders++], line, KTAP_LINE_MAX);
}

void summary_result(const char *name, enum ktap_status st, const char *why)
{
    if (nnot_passed >= MAX_NOT_PASSED || (st != KTAP_FAIL && st != KTAP_TIMEOUT && st != KTAP_SKIP))
        return;
    unsigned i = nnot_passed++;
    /* The first line only. */
    size_t n = 0;
    while (why && why[n] && why[n] != '\n' && n < WHY_MAX - 1)
        n++;
    memcpy(whys[i], why ? why : "", n);
    whys[i][n] = '\0';
    not_passed[i] = (struct report_test){
        name,
        st == KTAP_SKIP      ? REPORT_SKIP
        : st == KTAP_TIMEOUT ? REPORT_TIMEOUT
                             : REPORT_FAIL,
        whys[i],
    };
}

/* The value of header key's nth line ("key: value"), NULL if there is none. */
static const char *header_value(const char *key, unsigned nth)
{
    size_t k = strlen(key);
    for (unsigned i = 0; i < nheaders; i++)
        if (strncmp(headers[i], key, k) == 0 && headers[i][k] == ':' && nth-- == 0)
            return headers[i][k + 1] == ' ' ? headers[i] + k + 2 : headers[i] + k + 1;
    return NULL;
}

/* The first header line is "btsx VERSION". */
static const char *btsx_version(void)
{
    return nheaders && strncmp(headers[0], "btsx ", 5) == 0 ? headers[0] + 5 : "?";
}

static const char *report_verdict(const char *verdict)
{
    return strcmp(verdict, "PASS") == 0 || strcmp(verdict, "FAIL") == 0 ? verdict : "NONE";
}

/* The CPU brand without the padding some CPUs put before it. */
static const char *brand(void)
{
    const char *b = cpu_caps.brand;
    while (*b == ' ')
        b++;
    return *b ? b : cpu_caps.vendor;
}

static size_t build_report(const struct ktap *k, const char *verdict, char *buf, size_t size)
{
    static char fms[32], uc[16], apic[32], words[NSOURCES][REPORT_VALUE_MAX + 1];
    static struct report_fact facts[NSOURCES + 3], late[NSOURCES + 1];
    unsigned n = 0, nlate = 0;
    ksnprintf(fms, sizeof(fms), "%x.%x.%x", cpu_caps.family, cpu_caps.model, cpu_caps.stepping);
    ksnprintf(apic, sizeof(apic), "%s/%s", apic_is_x2apic() ? "x2apic" : "xapic",
              apic_timer_source());
    facts[n++] = (struct report_fact){"cpu", brand()};
    facts[n++] = (struct report_fact){"fms", fms};
    uint32_t rev;
    if (cpu_microcode_rev(&rev) == 0) {
        ksnprintf(uc, sizeof(uc), "%#x", rev);
        facts[n++] = (struct report_fact){"uc", uc};
    }
    for (unsigned i = 0; i < NSOURCES; i++) {
        const struct fact_source *src = &fact_sources[i];
        const char *v = header_value(src->header, 0);
        if (!src->report)
            continue;
        if (v && strcmp(v, "none") == 0)
            v = NULL; /* "hypervisor: none": the report leaves out what is not there */
        if (v && src->word) {
            size_t len = 0;
            while (v[len] && v[len] != ' ' && len < REPORT_VALUE_MAX)
                len++;
            memcpy(words[i], v, len);
            words[i][len] = '\0';
            v = words[i];
        }
        if (src->late)
            late[nlate++] = (struct report_fact){src->report, v};
        else
            facts[n++] = (struct report_fact){src->report, v};
    }
    late[nlate++] = (struct report_fact){"apic", apic};
    struct report_facts f = {
        .version = btsx_version(),
        .facts = facts,
        .nfacts = n,
        .late = late,
        .nlate = nlate,
        .passed = k->passed,
        .failed = k->failed,
        .skipped = k->skipped,
        .tests = not_passed,
        .ntests = nnot_passed,
        .verdict = report_verdict(verdict),
    };
    return report_format(&f, buf, size);
}

/* ------------------------------------------------------------------ the QR code */

/* The report's QR code (docs/report.md "The QR code"): the report_format() text itself, in
 * byte mode, drawn in the SUMMARY_QR_COLS columns at the right of the screen. */
#define QR_QUIET          4 /* modules of quiet zone the standard asks for */
#define QR_QUIET_TEXT_MIN 2 /* what 25 text rows leave around version 7 (45 + 4 = 49 < 50) */
/* Framebuffer: pixels a module has at least. The symbol takes the most robust level whose
 * version still gets modules this large; without a floor a large area would buy level H
 * with modules too small for a photo of the screen. */
#define QR_FB_MODULE_MIN  4
#define QR_LIGHT          CON_WHITE
#define QR_DARK           CON_BLACK

static struct qr_code qr; /* 11 KiB: static, never on the stack */
static struct {
    bool ok;         /* qr holds the report */
    const char *why; /* else why there is none (NULL without a screen: nothing to say) */
    unsigned quiet;  /* modules of light quiet zone around the symbol */
} qr_plan;

/* The QR area: the columns right of the text, in modules (text: one a column, two a row) or
 * in pixels (framebuffer). False if the screen has none. */
static bool qr_area(unsigned *x, unsigned *w, unsigned *h, bool *pixels)
{
    unsigned cols, rows, width, height, cell_w, cell_h;
    if (!console_screen_grid(&cols, &rows) || cols < SUMMARY_QR_COLS + SUMMARY_MIN_TEXT_COLS)
        return false;
    *pixels = console_screen_pixels(&width, &height, &cell_w, &cell_h);
    if (*pixels) {
        *x = (cols - SUMMARY_QR_COLS) * cell_w;
        *w = width - *x;
        *h = height;
    } else {
        *x = cols - SUMMARY_QR_COLS;
        *w = SUMMARY_QR_COLS;
        *h = 2 * rows;
    }
    return true;
}

/* Encodes text into qr at the most robust level whose symbol, with quiet modules of quiet
 * zone around it, fits side modules. */
static int qr_fit(const char *text, size_t len, unsigned side, unsigned quiet)
{
    unsigned v = 0;
    while (v < QR_VERSION_MAX && QR_SIZE(v + 1) + 2 * quiet <= side)
        v++;
    if (v == 0)
        return E_TOOLONG;
    int level = qr_fit_level(len, v);
    if (level < 0)
        return level;
    return qr_encode(&qr, text, len, (enum qr_level)level, QR_VERSION_AUTO, QR_MASK_AUTO);
}

/* Encodes the report for the screen, or says on the log why there is no QR code. */
static void qr_prepare(const char *text, size_t len)
{
    unsigned x, w, h;
    bool pixels;
    unsigned cols, rows;
    qr_plan.ok = false;
    qr_plan.why = NULL;
    if (!console_screen_grid(&cols, &rows))
        return;
    int err = E_TOOLONG;
    if (!qr_area(&x, &w, &h, &pixels)) {
        qr_plan.why = "the screen is too narrow";
    } else if (pixels) {
        qr_plan.quiet = QR_QUIET;
        err = qr_fit(text, len, (w < h ? w : h) / QR_FB_MODULE_MIN, QR_QUIET);
    } else {
        /* The standard's zone if the report fits a symbol that leaves room for it (version
         * 6, 41 + 8 = 49), else version 7's narrower one, which zbarimg reads too. */
        for (qr_plan.quiet = QR_QUIET; qr_plan.quiet >= QR_QUIET_TEXT_MIN; qr_plan.quiet -= 2)
            if ((err = qr_fit(text, len, w < h ? w : h, qr_plan.quiet)) == 0)
                break;
    }
    if (!qr_plan.why && err)
        qr_plan.why = "the report does not fit";
    qr_plan.ok = !qr_plan.why;
    if (qr_plan.ok)
        kprintf("# report qr: version %u, level %c, mask %u, quiet zone %u\n", qr.version,
                "LMQH"[qr.level], qr.mask, qr_plan.quiet);
    else
        kprintf("# report qr: none: %s (%zu bytes, %ux%u screen)\n", qr_plan.why, len, cols, rows);
}

/* Text screen: two modules a cell, the whole area light, the symbol in its middle. */
static void qr_draw_cells(unsigned col0, unsigned w, unsigned h)
{
    int ox = (int)(w - qr.size) / 2, oy = (int)(h - qr.size) / 2;
    for (unsigned r = 0; 2 * r < h; r++)
        for (unsigned c = 0; c < w; c++) {
            int x = (int)c - ox, y = 2 * (int)r - oy;
            console_screen_halves(r, col0 + c, qr_module(&qr, x, y) ? QR_DARK : QR_LIGHT,
                                  qr_module(&qr, x, y + 1) ? QR_DARK : QR_LIGHT);
        }
}

/* Framebuffer: square modules as large as the area allows, the quiet zone light, the rest
 * of the area left as it is. */
static void qr_draw_pixels(unsigned x0, unsigned w, unsigned h)
{
    unsigned side = qr.size + 2 * qr_plan.quiet;
    unsigned m = (w < h ? w : h) / side;
    unsigned left = x0 + (w - side * m) / 2, top = (h - side * m) / 2;
    console_screen_fill(left, top, side * m, side * m, QR_LIGHT);
    left += qr_plan.quiet * m;
    top += qr_plan.quiet * m;
    for (unsigned y = 0; y < qr.size; y++)
        for (unsigned x = 0; x < qr.size;) {
            unsigned run = 0;
            while (x + run < qr.size && qr_module(&qr, (int)(x + run), (int)y))
                run++;
            if (run)
                console_screen_fill(left + x * m, top + y * m, run * m, m, QR_DARK);
            x += run ? run : 1;
        }
}

/* The QR code, or in its place why there is none (the header says it on a screen without a
 * QR area). */
static void qr_draw(void)
{
    unsigned x, w, h, cols, rows;
    bool pixels;
    if (!qr_area(&x, &w, &h, &pixels) || !console_screen_grid(&cols, &rows))
        return;
    if (!qr_plan.ok) {
        console_screen_put(1, cols - SUMMARY_QR_COLS + 1, "No QR code of the report:", CON_YELLOW,
                           CON_BLACK);
        console_screen_put(2, cols - SUMMARY_QR_COLS + 1, qr_plan.why ? qr_plan.why : "?",
                           CON_YELLOW, CON_BLACK);
        console_screen_put(3, cols - SUMMARY_QR_COLS + 1, "(the serial log has the report)",
                           CON_YELLOW, CON_BLACK);
        return;
    }
    if (pixels)
        qr_draw_pixels(x, w, h);
    else
        qr_draw_cells(x, w, h);
}

void summary_report(const struct ktap *k, const char *verdict)
{
    char text[REPORT_MAX + 1];
    size_t len = build_report(k, verdict, text, sizeof(text));
    kputs(SUMMARY_REPORT_BEGIN "\n");
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        kprintf("# %.*s\n", (int)(nl - p), p);
        p = nl + 1;
    }
    kputs(SUMMARY_REPORT_END "\n");
    qr_prepare(text, len);
}

/* ------------------------------------------------------------------ the screen */

#define ROW_MAX 256 /* widest text area drawn (FBCON_MAX_CELLS allows wider: cut there) */

struct pane {
    unsigned width; /* columns of text, from column 0 */
    unsigned row;   /* next row to draw */
    unsigned end;   /* first row not for the body: the verdict band's */
};

/* Draws text from the pane's next row, wrapped at its width (continuation lines indented by
 * two), on at most max_rows rows and never past end; the last row ends in '~' if the text was
 * cut. Bytes outside printable ASCII show as '?'. */
static void put_wrapped(struct pane *p, unsigned end, unsigned max_rows, const char *text,
                        enum con_color fg)
{
    char buf[ROW_MAX + 1];
    size_t len = strlen(text), at = 0;
    unsigned width = p->width < ROW_MAX ? p->width : ROW_MAX;
    for (unsigned r = 0; r < max_rows && p->row < end && at < len; r++) {
        unsigned indent = r && width > 4 ? 2 : 0;
        size_t n = len - at < width - indent ? len - at : width - indent;
        bool cut = at + n < len && (r + 1 == max_rows || p->row + 1 == end);
        /* Wrap at the last space of the row if there is one in its second half. */
        if (at + n < len && !cut)
            for (size_t i = n; i > (width - indent) / 2; i--)
                if (text[at + i] == ' ') {
                    n = i + 1;
                    break;
                }
        memset(buf, ' ', indent);
        for (size_t i = 0; i < n; i++) {
            char c = text[at + i];
            buf[indent + i] = c >= 0x20 && c < 0x7f ? c : '?';
        }
        if (cut)
            buf[indent + n - 1] = '~';
        buf[indent + n] = '\0';
        console_screen_put(p->row++, 0, buf, fg, CON_BLACK);
        at += n;
    }
}

static void put_fact(struct pane *p, unsigned end, const char *label, const char *value,
                     unsigned max_rows)
{
    char line[KTAP_LINE_MAX + 16];
    ksnprintf(line, sizeof(line), "%s: %s", label, value);
    put_wrapped(p, end, max_rows, line, CON_LIGHT_GREY);
}

/* One entry of the list: a failure (two rows: the test, then its first diagnostic line) or a
 * skip reason (two rows: the reason with how many, then the tests). */
struct entry {
    const struct report_test *t; /* the failure, or the first test of the skip group */
};

static unsigned skip_group(unsigned first, char *names, size_t size)
{
    unsigned count = 0;
    size_t len = 0;
    names[0] = '\0';
    for (unsigned j = first; j < nnot_passed; j++) {
        const struct report_test *u = &not_passed[j];
        if (u->status != REPORT_SKIP || strcmp(u->why, not_passed[first].why) != 0)
            continue;
        count++;
        len += (size_t)ksnprintf(names + len, size - len, "%s%s", len ? ", " : "", u->name);
        if (len >= size)
            len = size - 1;
    }
    return count;
}

static bool skip_group_first(unsigned i)
{
    for (unsigned j = 0; j < i; j++)
        if (not_passed[j].status == REPORT_SKIP &&
            strcmp(not_passed[j].why, not_passed[i].why) == 0)
            return false;
    return true;
}

/* Draws the failures, then the skip groups, two rows each, while they fit above the row kept
 * for "N more"; returns how many entries did not fit. */
static unsigned put_entries(struct pane *p)
{
    char line[KTAP_LINE_MAX + 32];
    unsigned more = 0;
    for (int pass = 0; pass < 2; pass++)
        for (unsigned i = 0; i < nnot_passed; i++) {
            const struct report_test *t = &not_passed[i];
            bool skip = t->status == REPORT_SKIP;
            if (skip != (pass == 1) || (skip && !skip_group_first(i)))
                continue;
            /* Two rows, and one more for the "N more" line if this is not the last entry. */
            if (more || p->row + 2 + 1 > p->end) {
                more++;
                continue;
            }
            if (!skip) {
                ksnprintf(line, sizeof(line), "%s %s",
                          t->status == REPORT_TIMEOUT ? "TIMEOUT" : "FAIL", t->name);
                put_wrapped(p, p->end, 1, line, CON_LIGHT_RED);
                ksnprintf(line, sizeof(line), "  %s", t->why[0] ? t->why : "(no diagnostic)");
                put_wrapped(p, p->end, 1, line, CON_LIGHT_GREY);
            } else {
                char names[KTAP_LINE_MAX];
                unsigned n = skip_group(i, names, sizeof(names));
                ksnprintf(line, sizeof(line), "SKIP %u: %s", n, t->why);
                put_wrapped(p, p->end, 1, line, CON_YELLOW);
                ksnprintf(line, sizeof(line), "  %s", names);
                put_wrapped(p, p->end, 1, line, CON_LIGHT_GREY);
            }
        }
    return more;
}

void summary_screen(const struct ktap *k, const char *verdict, enum con_color verdict_bg)
{
    unsigned cols, rows;
    if (!console_screen_grid(&cols, &rows))
        return;
    console_screen_clear(CON_BLACK);
    struct pane p = {cols, 0, rows > 1 ? rows - 1 : rows};
    if (cols >= SUMMARY_QR_COLS + SUMMARY_MIN_TEXT_COLS)
        p.width = cols - SUMMARY_QR_COLS; /* the QR code's area stays blank until it is drawn */

    /* Without a QR area the header says why there is no QR code. */
    const char *narrow_why = p.width == cols ? qr_plan.why : NULL;
    char line[KTAP_LINE_MAX + 32];
    char bar[ROW_MAX + 1];
    unsigned w = p.width < ROW_MAX ? p.width : ROW_MAX;
    ksnprintf(line, sizeof(line), " btsx %s: summary%s%s", btsx_version(),
              narrow_why ? "; no QR code: " : "", narrow_why ? narrow_why : "");
    memset(bar, ' ', w);
    bar[w] = '\0';
    memcpy(bar, line, strlen(line) < w ? strlen(line) : w);
    console_screen_put(p.row++, 0, bar, CON_WHITE, CON_BLUE);

    /* However many facts there are, the counts (two rows) and "N more" keep their rows. */
    unsigned facts_end = p.end > p.row + 3 ? p.end - 3 : p.row;
    for (unsigned i = 0; i < NSOURCES; i++) {
        const char *v;
        for (unsigned nth = 0; (v = header_value(fact_sources[i].header, nth)); nth++)
            put_fact(&p, facts_end, fact_sources[i].label, v,
                     strcmp(fact_sources[i].header, "cpu") ? 2 : 3);
    }
    ksnprintf(line, sizeof(line), "Tests: %u passed, %u failed, %u skipped", k->passed, k->failed,
              k->skipped);
    p.row += p.row + 1 < p.end; /* a blank row before the results, if there is room */
    put_wrapped(&p, p.end, 2, line, CON_WHITE);

    unsigned more = put_entries(&p);
    if (more) {
        ksnprintf(line, sizeof(line), "%u more: see the serial log", more);
        put_wrapped(&p, p.end, 1, line, CON_WHITE);
    }

    ksnprintf(line, sizeof(line), " verdict: %s", verdict);
    memset(bar, ' ', w);
    memcpy(bar, line, strlen(line) < w ? strlen(line) : w);
    console_screen_put(rows - 1, 0, bar, CON_WHITE, verdict_bg);
    qr_draw();
}
