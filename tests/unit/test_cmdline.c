/* Host tests of kernel/cmdline.c, the mechanism: every value kind, every error message, the
 * all-or-nothing rule (no option changes on error), and options found wherever they are
 * registered. The options are this file's own, registered with the same macros the layers use
 * and shaped like the kernel's (names, choices, limits), so the messages checked are the ones a
 * user sees; tests/t_cmdline.c checks the kernel's real set. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define UNIT_TIMEOUT_S 60

#include "kernel/cmdline.h"

#define ERR_LEN   160
#define NELEM(a)  (sizeof(a) / sizeof((a)[0]))
#define MAX_GLOBS 16
#define GLOB_LEN  64
#define MAX_NAMES 2
#define NAME_LEN  8

enum backend { BACKEND_AUTO, BACKEND_HW, BACKEND_MODEL };
enum exit_method { EXIT_AUTO, EXIT_DEBUGEXIT, EXIT_HALT, EXIT_REBOOT };
enum pmi { PMI_FIXED, PMI_NMI };
enum apic { APIC_MODE_AUTO, APIC_MODE_XAPIC, APIC_MODE_X2APIC };
enum console { CONSOLE_ALL, CONSOLE_SERIAL };
enum layout { MODEL_LAYOUT_AUTO, MODEL_LAYOUT_CORE, MODEL_LAYOUT_NETBURST };
enum clock { CLOCK_AUTO, CLOCK_PIT, CLOCK_HPET, CLOCK_CPUID };

/* Every option's storage in one object, so a test can check that not a byte changed. */
struct options {
    char globs[MAX_GLOBS][GLOB_LEN];
    unsigned nglobs;
    enum backend backend;
    uint64_t seed;
    bool seed_set;
    bool verbose;
    enum exit_method exit;
    bool selftest;
    enum pmi pmi;
    enum apic apic;
    enum console console;
    enum clock clock;
    bool dump;
    enum layout model_layout;
    char names[MAX_NAMES][NAME_LEN]; /* a second list: limits and noun come from its own */
    unsigned nnames;
    uint64_t cpus; /* a count: at least 1, or "all" */
    bool cpus_set;
};
static struct options o;

OPTION_LIST("tests", "GLOB[,GLOB...]", "glob", o.globs, o.nglobs);
OPTION_CHOICE("backend", o.backend, {"auto", BACKEND_AUTO}, {"hw", BACKEND_HW},
              {"model", BACKEND_MODEL});
OPTION_U64("seed", o.seed, o.seed_set);
OPTION_FLAG("verbose", o.verbose);
OPTION_CHOICE("exit", o.exit, {"debugexit", EXIT_DEBUGEXIT}, {"halt", EXIT_HALT},
              {"reboot", EXIT_REBOOT});
OPTION_FLAG("selftest", o.selftest);
OPTION_CHOICE("pmi", o.pmi, {"fixed", PMI_FIXED}, {"nmi", PMI_NMI});
OPTION_CHOICE("apic", o.apic, {"auto", APIC_MODE_AUTO}, {"xapic", APIC_MODE_XAPIC},
              {"x2apic", APIC_MODE_X2APIC});
OPTION_CHOICE("console", o.console, {"all", CONSOLE_ALL}, {"serial", CONSOLE_SERIAL});
OPTION_FLAG("dump", o.dump);
OPTION_CHOICE("model.layout", o.model_layout, {"auto", MODEL_LAYOUT_AUTO},
              {"core", MODEL_LAYOUT_CORE}, {"netburst", MODEL_LAYOUT_NETBURST});
OPTION_CHOICE("clock", o.clock, {"auto", CLOCK_AUTO}, {"pit", CLOCK_PIT}, {"hpet", CLOCK_HPET},
              {"cpuid", CLOCK_CPUID});
OPTION_LIST("names", "NAME[,NAME...]", "name", o.names, o.nnames);
OPTION_COUNT("cpus", o.cpus, o.cpus_set, 1, "all", UINT64_MAX);

/* The defaults, as the owners' initializers would give them. */
static void reset(void)
{
    memset(&o, 0, sizeof(o));
    o.backend = BACKEND_AUTO;
    o.exit = EXIT_AUTO;
    o.pmi = PMI_FIXED;
    o.apic = APIC_MODE_AUTO;
    o.console = CONSOLE_ALL;
    o.clock = CLOCK_AUTO;
    o.model_layout = MODEL_LAYOUT_AUTO;
}

/* Parses line over the defaults and returns what it stored. */
static struct options parse_ok(const char *line)
{
    char err[ERR_LEN] = "untouched";
    int rc;

    reset();
    rc = cmdline_parse(line, err, sizeof(err));
    if (rc != 0)
        fail_msg("'%s' rejected (%d): %s", line, rc, err);
    assert_string_equal(err, "");
    return o;
}

/* The section holds this file's 14 registrations, and nothing else. */
static void test_registered(void **state)
{
    (void)state;
    assert_int_equal(__stop_btsx_options - __start_btsx_options, 14);
}

static void test_empty_lines(void **state)
{
    static const char *const lines[] = {"",
                                        " \t  \t",
                                        "/boot/btsx.elf",
                                        "\r\n",
                                        "tftp://10.0.0.1/btsx32.elf",
                                        "http://lab.example/b/btsx32.elf?x=1",
                                        "coap+tcp://h/k"};
    struct options def;

    (void)state;
    reset();
    def = o;
    for (size_t i = 0; i < NELEM(lines); i++) {
        parse_ok(lines[i]);
        assert_memory_equal(&o, &def, sizeof(o));
    }
    assert_int_equal(cmdline_parse(NULL, NULL, 0), 0);
    assert_memory_equal(&o, &def, sizeof(o));
}

static void test_choices(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("backend=auto").backend, BACKEND_AUTO);
    assert_int_equal(parse_ok("backend=hw").backend, BACKEND_HW);
    assert_int_equal(parse_ok("backend=model").backend, BACKEND_MODEL);
    assert_int_equal(parse_ok("exit=debugexit").exit, EXIT_DEBUGEXIT);
    assert_int_equal(parse_ok("exit=halt").exit, EXIT_HALT);
    assert_int_equal(parse_ok("exit=reboot").exit, EXIT_REBOOT);
    assert_int_equal(parse_ok("pmi=fixed").pmi, PMI_FIXED);
    assert_int_equal(parse_ok("pmi=nmi").pmi, PMI_NMI);
    assert_int_equal(parse_ok("apic=auto").apic, APIC_MODE_AUTO);
    assert_int_equal(parse_ok("apic=xapic").apic, APIC_MODE_XAPIC);
    assert_int_equal(parse_ok("apic=x2apic").apic, APIC_MODE_X2APIC);
    assert_int_equal(parse_ok("console=all").console, CONSOLE_ALL);
    assert_int_equal(parse_ok("console=serial").console, CONSOLE_SERIAL);
    assert_int_equal(parse_ok("model.layout=auto").model_layout, MODEL_LAYOUT_AUTO);
    assert_int_equal(parse_ok("model.layout=core").model_layout, MODEL_LAYOUT_CORE);
    assert_int_equal(parse_ok("model.layout=netburst").model_layout, MODEL_LAYOUT_NETBURST);
    assert_int_equal(parse_ok("clock=auto").clock, CLOCK_AUTO);
    assert_int_equal(parse_ok("clock=pit").clock, CLOCK_PIT);
    assert_int_equal(parse_ok("clock=hpet").clock, CLOCK_HPET);
    assert_int_equal(parse_ok("clock=cpuid").clock, CLOCK_CPUID);
}

static void test_flags(void **state)
{
    (void)state;
    assert_true(parse_ok("verbose").verbose);
    assert_true(parse_ok("verbose=1").verbose);
    assert_false(parse_ok("verbose=0").verbose);
    assert_true(parse_ok("selftest").selftest);
    assert_true(parse_ok("selftest=1").selftest);
    assert_false(parse_ok("selftest=0").selftest);
    assert_true(parse_ok("dump").dump);
    assert_true(parse_ok("dump=1").dump);
    assert_false(parse_ok("dump=0").dump);
    /* =0 turns a flag off even if it was on. */
    reset();
    o.verbose = true;
    assert_int_equal(cmdline_parse("verbose=0", NULL, 0), 0);
    assert_false(o.verbose);
}

static void test_seed(void **state)
{
    struct options r;

    (void)state;
    r = parse_ok("seed=0");
    assert_true(r.seed_set);
    assert_int_equal(r.seed, 0);
    assert_int_equal(parse_ok("seed=12345").seed, 12345);
    assert_int_equal(parse_ok("seed=0x1F").seed, 0x1f);
    assert_int_equal(parse_ok("seed=0XdeadBEEF").seed, 0xdeadbeef);
    assert_int_equal(parse_ok("seed=007").seed, 7); /* decimal, not octal */
    assert_int_equal(parse_ok("seed=18446744073709551615").seed, UINT64_MAX);
    assert_int_equal(parse_ok("seed=0xffffffffffffffff").seed, UINT64_MAX);
    assert_int_equal(parse_ok("seed=0x0000000000000000001").seed, 1);
    assert_false(parse_ok("verbose").seed_set);
}

static void test_count(void **state)
{
    struct options r;

    (void)state;
    r = parse_ok("cpus=1");
    assert_true(r.cpus_set);
    assert_int_equal(r.cpus, 1);
    assert_int_equal(parse_ok("cpus=0x10").cpus, 16);
    assert_int_equal(parse_ok("cpus=all").cpus, UINT64_MAX);
    assert_false(parse_ok("verbose").cpus_set);
}

static void test_lists(void **state)
{
    struct options r;
    char line[CMDLINE_MAX_LEN + 1];
    size_t pos;

    (void)state;
    r = parse_ok("tests=boot.*");
    assert_int_equal(r.nglobs, 1);
    assert_string_equal(r.globs[0], "boot.*");
    r = parse_ok("tests=boot.*,paging.?x,apic.timer");
    assert_int_equal(r.nglobs, 3);
    assert_string_equal(r.globs[0], "boot.*");
    assert_string_equal(r.globs[1], "paging.?x");
    assert_string_equal(r.globs[2], "apic.timer");

    /* The limits themselves are accepted: 16 globs, 63 characters. */
    pos = (size_t)snprintf(line, sizeof(line), "tests=");
    for (int i = 0; i < MAX_GLOBS; i++)
        pos += (size_t)snprintf(line + pos, sizeof(line) - pos, "%sg%d", i ? "," : "", i);
    r = parse_ok(line);
    assert_int_equal(r.nglobs, MAX_GLOBS);
    assert_string_equal(r.globs[15], "g15");
    snprintf(line, sizeof(line), "tests=%0*d", GLOB_LEN - 1, 0);
    r = parse_ok(line);
    assert_int_equal(strlen(r.globs[0]), GLOB_LEN - 1);

    /* A list's limits are its storage's: 2 names of 7 characters. */
    r = parse_ok("names=abcdefg,x");
    assert_int_equal(r.nnames, 2);
    assert_string_equal(r.names[0], "abcdefg");
    assert_string_equal(r.names[1], "x");
    assert_int_equal(r.nglobs, 0);

    /* A new list replaces the stored one rather than appending. */
    reset();
    o.nglobs = 2;
    strcpy(o.globs[0], "old0");
    strcpy(o.globs[1], "old1");
    assert_int_equal(cmdline_parse("tests=new", NULL, 0), 0);
    assert_int_equal(o.nglobs, 1);
    assert_string_equal(o.globs[0], "new");
}

static void test_whole_line(void **state)
{
    struct options r;

    (void)state;
    r = parse_ok("/boot/btsx.elf\ttests=ds.*,sched.*  backend=model seed=0x2a verbose "
                 "exit=debugexit selftest=0 pmi=nmi apic=x2apic names=a\n");
    assert_int_equal(r.nglobs, 2);
    assert_int_equal(r.backend, BACKEND_MODEL);
    assert_int_equal(r.seed, 42);
    assert_true(r.seed_set);
    assert_true(r.verbose);
    assert_int_equal(r.exit, EXIT_DEBUGEXIT);
    assert_false(r.selftest);
    assert_int_equal(r.pmi, PMI_NMI);
    assert_int_equal(r.apic, APIC_MODE_X2APIC);
    assert_int_equal(r.nnames, 1);
    /* Options not on the line keep their values, also from an earlier line. */
    reset();
    o.backend = BACKEND_HW;
    assert_int_equal(cmdline_parse("seed=9", NULL, 0), 0);
    assert_int_equal(cmdline_parse("verbose", NULL, 0), 0);
    assert_int_equal(o.backend, BACKEND_HW);
    assert_true(o.seed_set);
    assert_int_equal(o.seed, 9);
    assert_true(o.verbose);
}

struct bad_case {
    const char *line;
    int code;
    const char *msg;
};

static const struct bad_case bad_cases[] = {
    {"foo", CMDLINE_EUNKNOWN, "unknown option 'foo'"},
    {"foo=bar", CMDLINE_EUNKNOWN, "unknown option 'foo'"},
    {"Verbose", CMDLINE_EUNKNOWN, "unknown option 'Verbose'"},
    {"verbose /boot/late.elf", CMDLINE_EUNKNOWN, "unknown option '/boot/late.elf'"},
    {"=x", CMDLINE_EUNKNOWN, "empty option name in '=x'"},
    {"=", CMDLINE_EUNKNOWN, "empty option name in '='"},
    {"cpus=0", CMDLINE_EVALUE, "bad value '0' for 'cpus' (decimal or 0x-hex u64 >= 1, or all)"},
    {"cpus=x", CMDLINE_EVALUE, "bad value 'x' for 'cpus' (decimal or 0x-hex u64 >= 1, or all)"},
    {"cpus=ALL", CMDLINE_EVALUE, "bad value 'ALL' for 'cpus' (decimal or 0x-hex u64 >= 1, or all)"},
    {"cpus", CMDLINE_EVALUE, "missing value for 'cpus' (decimal or 0x-hex u64 >= 1, or all)"},
    {"backend", CMDLINE_EVALUE, "missing value for 'backend' (auto|hw|model)"},
    {"backend=", CMDLINE_EVALUE, "bad value '' for 'backend' (auto|hw|model)"},
    {"backend=x", CMDLINE_EVALUE, "bad value 'x' for 'backend' (auto|hw|model)"},
    {"backend=HW", CMDLINE_EVALUE, "bad value 'HW' for 'backend' (auto|hw|model)"},
    {"backend=hw=1", CMDLINE_EVALUE, "bad value 'hw=1' for 'backend' (auto|hw|model)"},
    {"exit", CMDLINE_EVALUE, "missing value for 'exit' (debugexit|halt|reboot)"},
    {"exit=poweroff", CMDLINE_EVALUE, "bad value 'poweroff' for 'exit' (debugexit|halt|reboot)"},
    {"pmi", CMDLINE_EVALUE, "missing value for 'pmi' (fixed|nmi)"},
    {"pmi=smi", CMDLINE_EVALUE, "bad value 'smi' for 'pmi' (fixed|nmi)"},
    {"apic", CMDLINE_EVALUE, "missing value for 'apic' (auto|xapic|x2apic)"},
    {"console=vga", CMDLINE_EVALUE, "bad value 'vga' for 'console' (all|serial)"},
    {"model.layout", CMDLINE_EVALUE, "missing value for 'model.layout' (auto|core|netburst)"},
    {"model.layout=p4", CMDLINE_EVALUE, "bad value 'p4' for 'model.layout' (auto|core|netburst)"},
    {"model.layout=NetBurst", CMDLINE_EVALUE,
     "bad value 'NetBurst' for 'model.layout' (auto|core|netburst)"},
    {"model.layout=core model.layout=core", CMDLINE_EDUP, "option 'model.layout' given twice"},
    {"model=netburst", CMDLINE_EUNKNOWN, "unknown option 'model'"},
    {"clock", CMDLINE_EVALUE, "missing value for 'clock' (auto|pit|hpet|cpuid)"},
    {"clock=tsc", CMDLINE_EVALUE, "bad value 'tsc' for 'clock' (auto|pit|hpet|cpuid)"},
    {"clock=HPET", CMDLINE_EVALUE, "bad value 'HPET' for 'clock' (auto|pit|hpet|cpuid)"},
    {"apic=x3apic", CMDLINE_EVALUE, "bad value 'x3apic' for 'apic' (auto|xapic|x2apic)"},
    {"verbose=", CMDLINE_EVALUE, "bad value '' for 'verbose' (0|1)"},
    {"verbose=yes", CMDLINE_EVALUE, "bad value 'yes' for 'verbose' (0|1)"},
    {"verbose=2", CMDLINE_EVALUE, "bad value '2' for 'verbose' (0|1)"},
    {"selftest=true", CMDLINE_EVALUE, "bad value 'true' for 'selftest' (0|1)"},
    {"seed", CMDLINE_EVALUE, "missing value for 'seed' (decimal or 0x-hex u64)"},
    {"seed=", CMDLINE_EVALUE, "bad value '' for 'seed' (decimal or 0x-hex u64)"},
    {"seed=x", CMDLINE_EVALUE, "bad value 'x' for 'seed' (decimal or 0x-hex u64)"},
    {"seed=0x", CMDLINE_EVALUE, "bad value '0x' for 'seed' (decimal or 0x-hex u64)"},
    {"seed=-1", CMDLINE_EVALUE, "bad value '-1' for 'seed' (decimal or 0x-hex u64)"},
    {"seed=+1", CMDLINE_EVALUE, "bad value '+1' for 'seed' (decimal or 0x-hex u64)"},
    {"seed=12a", CMDLINE_EVALUE, "bad value '12a' for 'seed' (decimal or 0x-hex u64)"},
    {"seed=0xg", CMDLINE_EVALUE, "bad value '0xg' for 'seed' (decimal or 0x-hex u64)"},
    {"seed=18446744073709551616", CMDLINE_EVALUE,
     "bad value '18446744073709551616' for 'seed' (out of range for u64)"},
    {"seed=99999999999999999999", CMDLINE_EVALUE,
     "bad value '99999999999999999999' for 'seed' (out of range for u64)"},
    {"seed=0x10000000000000000", CMDLINE_EVALUE,
     "bad value '0x10000000000000000' for 'seed' (out of range for u64)"},
    {"tests", CMDLINE_EVALUE, "missing value for 'tests' (GLOB[,GLOB...])"},
    {"tests=", CMDLINE_EVALUE, "bad value '' for 'tests' (empty glob)"},
    {"tests=a,,b", CMDLINE_EVALUE, "bad value 'a,,b' for 'tests' (empty glob)"},
    {"tests=a,", CMDLINE_EVALUE, "bad value 'a,' for 'tests' (empty glob)"},
    {"tests=,a", CMDLINE_EVALUE, "bad value ',a' for 'tests' (empty glob)"},
    {"tests=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17", CMDLINE_ETOOLONG,
     "too many globs for 'tests' (max 16)"},
    {"tests=a,0123456789012345678901234567890123456789012345678901234567890123", CMDLINE_ETOOLONG,
     "glob '0123456789012345678901234567890123456789012345678901234567890123' too long for "
     "'tests' (max 63 chars)"},
    {"seed=1 seed=2", CMDLINE_EDUP, "option 'seed' given twice"},
    {"seed=1 seed=x", CMDLINE_EDUP, "option 'seed' given twice"},
    {"verbose verbose=0", CMDLINE_EDUP, "option 'verbose' given twice"},
    {"selftest selftest", CMDLINE_EDUP, "option 'selftest' given twice"},
    {"tests=a tests=b", CMDLINE_EDUP, "option 'tests' given twice"},
    {"backend=hw exit=halt backend=hw", CMDLINE_EDUP, "option 'backend' given twice"},
    {"pmi=nmi pmi=nmi", CMDLINE_EDUP, "option 'pmi' given twice"},
    {"apic=auto apic=xapic", CMDLINE_EDUP, "option 'apic' given twice"},
    {"clock=pit clock=hpet", CMDLINE_EDUP, "option 'clock' given twice"},
    {"exit=halt exit=reboot", CMDLINE_EDUP, "option 'exit' given twice"},
    /* The error comes after valid options: those must not leak out either. */
    {"verbose backend=hw tests=x seed=5 bogus", CMDLINE_EUNKNOWN, "unknown option 'bogus'"},
    {"tests=a,b,c,d backend=none", CMDLINE_EVALUE,
     "bad value 'none' for 'backend' (auto|hw|model)"},
    {"names=a,b,c", CMDLINE_ETOOLONG, "too many names for 'names' (max 2)"},
    {"names=abcdefgh", CMDLINE_ETOOLONG, "name 'abcdefgh' too long for 'names' (max 7 chars)"},
    {"names=", CMDLINE_EVALUE, "bad value '' for 'names' (empty name)"},
    {"names", CMDLINE_EVALUE, "missing value for 'names' (NAME[,NAME...])"},
    {"/boot/btsx.elf verbose dump verbose", CMDLINE_EDUP, "option 'verbose' given twice"},
    {"tftp://h/btsx32.elf verbose verbose", CMDLINE_EDUP, "option 'verbose' given twice"},
    /* Only the first word may be the loader's image, and only a path or a URI is one. */
    {"verbose tftp://h/btsx32.elf", CMDLINE_EUNKNOWN, "unknown option 'tftp://h/btsx32.elf'"},
    {"tftp:/h/btsx32.elf", CMDLINE_EUNKNOWN, "unknown option 'tftp:/h/btsx32.elf'"},
    {"1http://h/k", CMDLINE_EUNKNOWN, "unknown option '1http://h/k'"},
    {"://h/k", CMDLINE_EUNKNOWN, "unknown option '://h/k'"},
    {"dump=1 seed=3 names=x dump=0", CMDLINE_EDUP, "option 'dump' given twice"},
    /* The error comes after valid options of every kind: none may be stored. */
    {"names=q verbose backend=hw tests=x seed=5 bogus", CMDLINE_EUNKNOWN, "unknown option 'bogus'"},
};

/* Every bad line returns its code and message, and leaves every option byte for byte as it
 * was, even when the storage held garbage. */
static void test_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < NELEM(bad_cases); i++) {
        const struct bad_case *c = &bad_cases[i];
        struct options before;
        char err[ERR_LEN];
        int rc;

        memset(&o, 0xa5, sizeof(o));
        memcpy(&before, &o, sizeof(o));
        rc = cmdline_parse(c->line, err, sizeof(err));
        if (rc != c->code || strcmp(err, c->msg) != 0)
            fail_msg("'%s': got %d '%s', want %d '%s'", c->line, rc, err, c->code, c->msg);
        assert_memory_equal(&o, &before, sizeof(o));

        /* The same line over the defaults: still untouched. */
        reset();
        memcpy(&before, &o, sizeof(o));
        assert_int_equal(cmdline_parse(c->line, NULL, 0), c->code);
        assert_memory_equal(&o, &before, sizeof(o));
    }
}

static void test_codes_distinct(void **state)
{
    (void)state;
    assert_true(CMDLINE_EUNKNOWN < 0 && CMDLINE_EVALUE < 0 && CMDLINE_EDUP < 0 &&
                CMDLINE_ETOOLONG < 0);
    assert_int_not_equal(CMDLINE_EUNKNOWN, CMDLINE_EVALUE);
    assert_int_not_equal(CMDLINE_EUNKNOWN, CMDLINE_EDUP);
    assert_int_not_equal(CMDLINE_EUNKNOWN, CMDLINE_ETOOLONG);
    assert_int_not_equal(CMDLINE_EVALUE, CMDLINE_EDUP);
    assert_int_not_equal(CMDLINE_EVALUE, CMDLINE_ETOOLONG);
    assert_int_not_equal(CMDLINE_EDUP, CMDLINE_ETOOLONG);
}

static void test_line_length(void **state)
{
    char line[CMDLINE_MAX_LEN + 2];
    struct options before;
    char err[ERR_LEN];

    (void)state;
    /* Exactly the limit: accepted. */
    memset(line, ' ', CMDLINE_MAX_LEN);
    memcpy(line, "verbose", 7);
    line[CMDLINE_MAX_LEN] = '\0';
    assert_true(parse_ok(line).verbose);
    /* One more: rejected, even though the extra byte is a blank. */
    line[CMDLINE_MAX_LEN] = ' ';
    line[CMDLINE_MAX_LEN + 1] = '\0';
    reset();
    memcpy(&before, &o, sizeof(o));
    assert_int_equal(cmdline_parse(line, err, sizeof(err)), CMDLINE_ETOOLONG);
    assert_string_equal(err, "command line longer than 1024 characters");
    assert_memory_equal(&o, &before, sizeof(o));
}

/* A short error buffer gets a truncated, terminated message; no buffer at all is fine. */
static void test_error_buffer(void **state)
{
    char err[8];

    (void)state;
    reset();
    memset(err, 'Z', sizeof(err));
    assert_int_equal(cmdline_parse("bogus", err, sizeof(err)), CMDLINE_EUNKNOWN);
    assert_string_equal(err, "unknown");
    assert_int_equal(cmdline_parse("bogus", NULL, 0), CMDLINE_EUNKNOWN);
    assert_int_equal(cmdline_parse("bogus", err, 0), CMDLINE_EUNKNOWN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registered),  cmocka_unit_test(test_empty_lines),
        cmocka_unit_test(test_choices),     cmocka_unit_test(test_flags),
        cmocka_unit_test(test_seed),        cmocka_unit_test(test_count),
        cmocka_unit_test(test_lists),       cmocka_unit_test(test_whole_line),
        cmocka_unit_test(test_errors),      cmocka_unit_test(test_codes_distinct),
        cmocka_unit_test(test_line_length), cmocka_unit_test(test_error_buffer),
    };
    /* A runaway loop in the code under test must fail the run, not hang `make unit`. */
    alarm(UNIT_TIMEOUT_S);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
