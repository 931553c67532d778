/*
 * cmdline.*: the options the layers register, through the kernel build of the parser. Exactly
 * the documented options are registered, once each; every documented value reaches the owning
 * layer's variable as that layer's value; and bad lines are refused with the option named and
 * leave every registered option as it was. The host unit tests cover the parser's mechanism in
 * depth, with options of their own.
 *
 * The parses here act on the run's real options, so each test saves every registered option's
 * storage first and puts it back, with interrupts off in between.
 */
#include "ds/options.h"
#include "kernel/apic.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/glob.h"
#include "kernel/shutdown.h"
#include "kernel/string.h"
#include "tests/test.h"

#define ERR_LEN   160
#define SAVE_MAX  4096
#define GLOB_COPY 64
#define NELEM(a)  (sizeof(a) / sizeof((a)[0]))

/* The options the README's table documents. */
static const char *const documented[] = {
    "tests",
    "backend",
    "seed",
    "verbose",
    "exit",
    "selftest",
    "pmi",
    "apic",
    "clock",
    "smp",
    "console",
    "dump",
    "volume",
    "model.layout",
    "model",
    "model.skid",
    "model.offos_returns",
    "model.handler_records",
    "rand.programs",
    "rand.size",
    "sysfuzz.calls",
};

static const struct cmdline_option *option(const char *name)
{
    for (const struct cmdline_option *d = __start_btsx_options; d < __stop_btsx_options; d++)
        if (strcmp(d->name, name) == 0)
            return d;
    return NULL;
}

/* The memory an option's parse may write: its variable, and its count or given flag. */
struct region {
    void *p;
    size_t n;
};
static unsigned regions(const struct cmdline_option *d, struct region r[3])
{
    unsigned n = 0;
    if (d->kind == CMDLINE_CHOICE)
        r[n++] = (struct region){d->var, sizeof(int)};
    else if (d->kind == CMDLINE_FLAG)
        r[n++] = (struct region){d->var, sizeof(bool)};
    else if (d->kind == CMDLINE_U64)
        r[n++] = (struct region){d->var, sizeof(uint64_t)};
    else
        r[n++] = (struct region){d->var, d->max_items * d->item_size};
    if (d->count)
        r[n++] = (struct region){d->count, sizeof(unsigned)};
    if (d->given)
        r[n++] = (struct region){d->given, sizeof(bool)};
    return n;
}

/* Every registered option's storage, byte for byte. */
static uint8_t saved[SAVE_MAX];
enum save_op { SAVE, RESTORE, COMPARE };
/* Returns false if the storage does not fit (SAVE) or differs from the saved bytes (COMPARE). */
static bool storage(enum save_op op)
{
    size_t at = 0;
    bool same = true;
    for (const struct cmdline_option *d = __start_btsx_options; d < __stop_btsx_options; d++) {
        struct region r[3];
        unsigned n = regions(d, r);
        for (unsigned i = 0; i < n; i++) {
            if (at + r[i].n > sizeof(saved))
                return false;
            if (op == SAVE)
                memcpy(saved + at, r[i].p, r[i].n);
            else if (op == RESTORE)
                memcpy(r[i].p, saved + at, r[i].n);
            else
                same = same && memcmp(saved + at, r[i].p, r[i].n) == 0;
            at += r[i].n;
        }
    }
    return same;
}

TEST(cmdline, registered, "exactly the documented options are registered, once each", 0)
{
    for (unsigned i = 0; i < NELEM(documented); i++) {
        unsigned n = 0;
        for (const struct cmdline_option *d = __start_btsx_options; d < __stop_btsx_options; d++)
            n += strcmp(d->name, documented[i]) == 0;
        CHECK(n == 1, "option '%s' registered %u times", documented[i], n);
    }
    CHECK_EQ(__stop_btsx_options - __start_btsx_options, NELEM(documented));
    for (const struct cmdline_option *d = __start_btsx_options; d < __stop_btsx_options; d++) {
        CHECK(d->var != NULL, "'%s' has no variable", d->name);
        if (d->kind == CMDLINE_CHOICE)
            CHECK(d->choices && d->nchoices > 0, "'%s' has no choices", d->name);
        if (d->kind == CMDLINE_LIST)
            CHECK(d->count && d->max_items > 0 && d->item_size > 1 && d->noun && d->expect,
                  "'%s' is an incomplete list", d->name);
    }
    CHECK(storage(SAVE), "the options' storage is over %u bytes", SAVE_MAX);
}

/* What a parse of the documented line stored, read before the options are put back. */
struct parsed {
    int backend, exit, pmi, apic, clock, console, model_layout, model, model_skid, model_offos,
        model_handler;
    uint64_t seed, smp;
    bool seed_given, smp_given, verbose, selftest, dump;
    unsigned nglobs;
    char glob[2][GLOB_COPY];
};

static int choice(const char *name)
{
    return *(const int *)option(name)->var;
}
static bool flag(const char *name)
{
    return *(const bool *)option(name)->var;
}

TEST(cmdline, accepts, "every documented option parses into its layer's value", 0)
{
    for (unsigned i = 0; i < NELEM(documented); i++)
        if (!CHECK(option(documented[i]), "option '%s' not registered", documented[i]))
            return;
    if (!CHECK(storage(SAVE), "the options' storage is over %u bytes", SAVE_MAX))
        return;

    const struct cmdline_option *tests = option("tests"), *seed = option("seed");
    struct parsed p;
    char err[ERR_LEN] = "";
    irq_disable();
    int rc = cmdline_parse("tests=boot.*,apic.?elf_ipi backend=model seed=0x2a verbose "
                           "exit=halt selftest=0 pmi=nmi apic=xapic console=serial dump=1 "
                           "model.layout=netburst clock=hpet model=hw model.skid=3 "
                           "model.offos_returns=never model.handler_records=always smp=3",
                           err, sizeof(err));
    p = (struct parsed){
        .backend = choice("backend"),
        .exit = choice("exit"),
        .pmi = choice("pmi"),
        .apic = choice("apic"),
        .clock = choice("clock"),
        .console = choice("console"),
        .model_layout = choice("model.layout"),
        .model = choice("model"),
        .model_skid = choice("model.skid"),
        .model_offos = choice("model.offos_returns"),
        .model_handler = choice("model.handler_records"),
        .seed = *(const uint64_t *)seed->var,
        .seed_given = *seed->given,
        .smp = *(const uint64_t *)option("smp")->var,
        .smp_given = *option("smp")->given,
        .verbose = flag("verbose"),
        .selftest = flag("selftest"),
        .dump = flag("dump"),
        .nglobs = *tests->count,
    };
    for (unsigned i = 0; i < 2 && i < tests->max_items; i++)
        strlcpy(p.glob[i], (const char *)tests->var + i * tests->item_size, GLOB_COPY);
    storage(RESTORE);
    bool restored = storage(COMPARE);
    irq_enable();

    if (!CHECK(rc == 0, "rejected: %s", err))
        return;
    CHECK(restored, "the run's options were not put back");
    CHECK(p.backend == BACKEND_MODEL && p.pmi == PMI_NMI && p.model_layout == MODEL_LAYOUT_NETBURST,
          "DS options wrong");
    CHECK(p.model == MODEL_HW && p.model_skid == 3 && p.model_offos == MODEL_OFFOS_NEVER &&
              p.model_handler == MODEL_HANDLER_ALWAYS,
          "model options wrong");
    CHECK(p.exit == EXIT_HALT && p.apic == APIC_MODE_XAPIC && p.clock == CLOCK_HPET &&
              p.console == CONSOLE_SERIAL,
          "kernel options wrong");
    CHECK(p.smp == 3 && p.smp_given, "smp=3 stored %lu", p.smp);
    CHECK(p.seed == 42 && p.seed_given && p.verbose && !p.selftest && p.dump,
          "framework options wrong");
    CHECK_EQ(p.nglobs, 2);
    CHECK(strcmp(p.glob[0], "boot.*") == 0 && strcmp(p.glob[1], "apic.?elf_ipi") == 0,
          "globs '%s', '%s'", p.glob[0], p.glob[1]);
    CHECK(glob_match(p.glob[0], "boot.memmap") && glob_match(p.glob[1], "apic.self_ipi"),
          "globs do not select");
    CHECK(!glob_match(p.glob[1], "apic.timer_rate"), "glob selects too much");
}

struct bad_line {
    const char *line;
    int code;
    const char *msg;
};

static const struct bad_line bad[] = {
    {"frobnicate", CMDLINE_EUNKNOWN, "unknown option 'frobnicate'"},
    {"=1", CMDLINE_EUNKNOWN, "empty option name in '=1'"},
    {"backend=fast", CMDLINE_EVALUE, "bad value 'fast' for 'backend' (auto|hw|model)"},
    {"pmi=smi", CMDLINE_EVALUE, "bad value 'smi' for 'pmi' (fixed|nmi)"},
    {"model.layout=p4", CMDLINE_EVALUE, "bad value 'p4' for 'model.layout' (auto|core|netburst)"},
    {"model.skid=9", CMDLINE_EVALUE, "bad value '9' for 'model.skid' (auto|0|1|2|3|4|5|6|7|8)"},
    {"exit=", CMDLINE_EVALUE, "bad value '' for 'exit' (debugexit|halt|reboot)"},
    {"apic", CMDLINE_EVALUE, "missing value for 'apic' (auto|xapic|x2apic)"},
    {"clock=rtc", CMDLINE_EVALUE, "bad value 'rtc' for 'clock' (auto|pit|hpet|cpuid)"},
    {"console=vga", CMDLINE_EVALUE, "bad value 'vga' for 'console' (all|serial)"},
    {"verbose=2", CMDLINE_EVALUE, "bad value '2' for 'verbose' (0|1)"},
    {"selftest=true", CMDLINE_EVALUE, "bad value 'true' for 'selftest' (0|1)"},
    {"dump=yes", CMDLINE_EVALUE, "bad value 'yes' for 'dump' (0|1)"},
    {"seed=12x", CMDLINE_EVALUE, "bad value '12x' for 'seed' (decimal or 0x-hex u64)"},
    {"seed=99999999999999999999", CMDLINE_EVALUE,
     "bad value '99999999999999999999' for 'seed' (out of range for u64)"},
    {"seed=1 seed=2", CMDLINE_EDUP, "option 'seed' given twice"},
    {"tests=", CMDLINE_EVALUE, "bad value '' for 'tests' (empty glob)"},
    {"tests=a,,b", CMDLINE_EVALUE, "bad value 'a,,b' for 'tests' (empty glob)"},
    {"tests=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,"
     "33",
     CMDLINE_ETOOLONG, "too many globs for 'tests' (max 32)"},
    {"tests=0123456789012345678901234567890123456789012345678901234567890123", CMDLINE_ETOOLONG,
     "glob '0123456789012345678901234567890123456789012345678901234567890123' too long for "
     "'tests' (max 63 chars)"},
    /* Good options before the bad one: none of them may be stored. */
    {"tests=x backend=hw seed=5 verbose exit=halt selftest pmi=nmi apic=x2apic clock=pit "
     "console=serial dump model.layout=core bogus",
     CMDLINE_EUNKNOWN, "unknown option 'bogus'"},
};

/* A line of 1025 characters: "verbose" and blanks. */
static char overlong[CMDLINE_MAX_LEN + 2];

static void check_refused(const char *line, int code, const char *msg, const char *shown)
{
    char err[ERR_LEN] = "";
    irq_disable();
    int rc = cmdline_parse(line, err, sizeof(err));
    bool same = storage(COMPARE);
    if (!same)
        storage(RESTORE); /* keep the run's own options whatever the parser did */
    irq_enable();
    CHECK(rc == code, "'%s': code %d, expected %d (%s)", shown, rc, code, err);
    CHECK(strcmp(err, msg) == 0, "'%s': message '%s', expected '%s'", shown, err, msg);
    CHECK(same, "'%s' changed the options", shown);
    test_info("'%s': %s", shown, err);
}

TEST(cmdline, rejects, "bad lines are refused by name and change no option", 0)
{
    if (!CHECK(storage(SAVE), "the options' storage is over %u bytes", SAVE_MAX))
        return;
    for (unsigned i = 0; i < NELEM(bad); i++)
        check_refused(bad[i].line, bad[i].code, bad[i].msg, bad[i].line);
    memset(overlong, ' ', CMDLINE_MAX_LEN + 1);
    memcpy(overlong, "verbose", strlen("verbose"));
    overlong[CMDLINE_MAX_LEN + 1] = '\0';
    check_refused(overlong, CMDLINE_ETOOLONG, "command line longer than 1024 characters",
                  "verbose + 1018 blanks");
}
