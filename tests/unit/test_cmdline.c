/* Host tests of kernel/cmdline.c: every option and value, every error message, the
 * all-or-nothing rule (options untouched on error), and the glob matcher. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#define UNIT_TIMEOUT_S 60

#include "kernel/cmdline.h"

#define ERR_LEN  160
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static struct btsx_options parse_ok(const char *line)
{
    struct btsx_options o;
    char err[ERR_LEN] = "untouched";
    int rc;

    cmdline_defaults(&o);
    rc = cmdline_parse(line, &o, err, sizeof(err));
    if (rc != 0)
        fail_msg("'%s' rejected (%d): %s", line, rc, err);
    assert_string_equal(err, "");
    return o;
}

/* Field by field: struct assignment need not copy padding, so memcmp only fits the error
 * tests, where nothing may be written at all. */
static void assert_options_equal(const struct btsx_options *a, const struct btsx_options *b)
{
    assert_int_equal(a->nglobs, b->nglobs);
    for (unsigned i = 0; i < a->nglobs && i < CMDLINE_MAX_GLOBS; i++)
        assert_string_equal(a->globs[i], b->globs[i]);
    assert_int_equal(a->backend, b->backend);
    assert_int_equal(a->seed, b->seed);
    assert_int_equal(a->seed_set, b->seed_set);
    assert_int_equal(a->verbose, b->verbose);
    assert_int_equal(a->exit, b->exit);
    assert_int_equal(a->selftest, b->selftest);
    assert_int_equal(a->dump, b->dump);
    assert_int_equal(a->pmi, b->pmi);
    assert_int_equal(a->apic, b->apic);
    assert_int_equal(a->console, b->console);
    assert_int_equal(a->model_layout, b->model_layout);
}

static void test_defaults(void **state)
{
    struct btsx_options o;

    (void)state;
    memset(&o, 0x5a, sizeof(o));
    cmdline_defaults(&o);
    assert_int_equal(o.nglobs, 0);
    assert_int_equal(o.backend, BACKEND_AUTO);
    assert_int_equal(o.seed, 0);
    assert_false(o.seed_set);
    assert_false(o.verbose);
    assert_int_equal(o.exit, EXIT_AUTO);
    assert_false(o.selftest);
    assert_false(o.dump);
    assert_int_equal(o.pmi, PMI_FIXED);
    assert_int_equal(o.apic, APIC_MODE_AUTO);
    assert_int_equal(o.console, CONSOLE_ALL);
    assert_int_equal(o.model_layout, MODEL_LAYOUT_AUTO);
}

static void test_empty_lines(void **state)
{
    struct btsx_options def, o;

    (void)state;
    cmdline_defaults(&def);
    o = parse_ok("");
    assert_options_equal(&o, &def);
    o = parse_ok(" \t  \t");
    assert_options_equal(&o, &def);
    o = parse_ok("/boot/btsx.elf");
    assert_options_equal(&o, &def);
    cmdline_defaults(&o);
    assert_int_equal(cmdline_parse(NULL, &o, NULL, 0), 0);
    assert_options_equal(&o, &def);
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
}

static void test_flags(void **state)
{
    struct btsx_options o;

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
    /* =0 turns a flag off even if the caller had it on. */
    cmdline_defaults(&o);
    o.verbose = true;
    assert_int_equal(cmdline_parse("verbose=0", &o, NULL, 0), 0);
    assert_false(o.verbose);
}

static void test_seed(void **state)
{
    struct btsx_options o;

    (void)state;
    o = parse_ok("seed=0");
    assert_true(o.seed_set);
    assert_int_equal(o.seed, 0);
    assert_int_equal(parse_ok("seed=12345").seed, 12345);
    assert_int_equal(parse_ok("seed=0x1F").seed, 0x1f);
    assert_int_equal(parse_ok("seed=0XdeadBEEF").seed, 0xdeadbeef);
    assert_int_equal(parse_ok("seed=007").seed, 7); /* decimal, not octal */
    assert_int_equal(parse_ok("seed=18446744073709551615").seed, UINT64_MAX);
    assert_int_equal(parse_ok("seed=0xffffffffffffffff").seed, UINT64_MAX);
    assert_int_equal(parse_ok("seed=0x0000000000000000001").seed, 1);
    assert_false(parse_ok("verbose").seed_set);
}

static void test_tests_globs(void **state)
{
    struct btsx_options o;
    char line[CMDLINE_MAX_LEN + 1];
    size_t pos;

    (void)state;
    o = parse_ok("tests=boot.*");
    assert_int_equal(o.nglobs, 1);
    assert_string_equal(o.globs[0], "boot.*");
    o = parse_ok("tests=boot.*,paging.?x,apic.timer");
    assert_int_equal(o.nglobs, 3);
    assert_string_equal(o.globs[0], "boot.*");
    assert_string_equal(o.globs[1], "paging.?x");
    assert_string_equal(o.globs[2], "apic.timer");

    /* The limits themselves are accepted: 16 globs, 63 characters. */
    pos = (size_t)snprintf(line, sizeof(line), "tests=");
    for (int i = 0; i < CMDLINE_MAX_GLOBS; i++)
        pos += (size_t)snprintf(line + pos, sizeof(line) - pos, "%sg%d", i ? "," : "", i);
    o = parse_ok(line);
    assert_int_equal(o.nglobs, CMDLINE_MAX_GLOBS);
    assert_string_equal(o.globs[15], "g15");
    snprintf(line, sizeof(line), "tests=%0*d", CMDLINE_GLOB_LEN - 1, 0);
    o = parse_ok(line);
    assert_int_equal(strlen(o.globs[0]), CMDLINE_GLOB_LEN - 1);

    /* A new tests= replaces the caller's globs rather than appending. */
    cmdline_defaults(&o);
    o.nglobs = 2;
    strcpy(o.globs[0], "old0");
    strcpy(o.globs[1], "old1");
    assert_int_equal(cmdline_parse("tests=new", &o, NULL, 0), 0);
    assert_int_equal(o.nglobs, 1);
    assert_string_equal(o.globs[0], "new");
}

static void test_whole_line(void **state)
{
    struct btsx_options o;

    (void)state;
    o = parse_ok("/boot/btsx.elf\ttests=ds.*,sched.*  backend=model seed=0x2a verbose "
                 "exit=debugexit selftest=0 pmi=nmi apic=x2apic\n");
    assert_int_equal(o.nglobs, 2);
    assert_int_equal(o.backend, BACKEND_MODEL);
    assert_int_equal(o.seed, 42);
    assert_true(o.seed_set);
    assert_true(o.verbose);
    assert_int_equal(o.exit, EXIT_DEBUGEXIT);
    assert_false(o.selftest);
    assert_int_equal(o.pmi, PMI_NMI);
    assert_int_equal(o.apic, APIC_MODE_X2APIC);
    /* Options not on the line keep the caller's values. */
    cmdline_defaults(&o);
    o.backend = BACKEND_HW;
    assert_int_equal(cmdline_parse("verbose", &o, NULL, 0), 0);
    assert_int_equal(o.backend, BACKEND_HW);
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
    {"exit=halt exit=reboot", CMDLINE_EDUP, "option 'exit' given twice"},
    /* The error comes after valid options: those must not leak out either. */
    {"verbose backend=hw tests=x seed=5 bogus", CMDLINE_EUNKNOWN, "unknown option 'bogus'"},
    {"tests=a,b,c,d backend=none", CMDLINE_EVALUE,
     "bad value 'none' for 'backend' (auto|hw|model)"},
};

/* Every bad line returns its code and message, and leaves the options byte-for-byte as they
 * were, even when the struct held garbage. */
static void test_errors(void **state)
{
    (void)state;
    for (size_t i = 0; i < NELEM(bad_cases); i++) {
        const struct bad_case *c = &bad_cases[i];
        struct btsx_options o, before;
        char err[ERR_LEN];
        int rc;

        memset(&o, 0xa5, sizeof(o));
        memcpy(&before, &o, sizeof(o));
        rc = cmdline_parse(c->line, &o, err, sizeof(err));
        if (rc != c->code || strcmp(err, c->msg) != 0)
            fail_msg("'%s': got %d '%s', want %d '%s'", c->line, rc, err, c->code, c->msg);
        assert_memory_equal(&o, &before, sizeof(o));

        /* The same line after defaults: still untouched. */
        cmdline_defaults(&o);
        memcpy(&before, &o, sizeof(o));
        assert_int_equal(cmdline_parse(c->line, &o, NULL, 0), c->code);
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
    struct btsx_options o, before;
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
    cmdline_defaults(&o);
    memcpy(&before, &o, sizeof(o));
    assert_int_equal(cmdline_parse(line, &o, err, sizeof(err)), CMDLINE_ETOOLONG);
    assert_string_equal(err, "command line longer than 1024 characters");
    assert_memory_equal(&o, &before, sizeof(o));
}

/* A short error buffer gets a truncated, terminated message; no buffer at all is fine. */
static void test_error_buffer(void **state)
{
    struct btsx_options o;
    char err[8];

    (void)state;
    cmdline_defaults(&o);
    memset(err, 'Z', sizeof(err));
    assert_int_equal(cmdline_parse("bogus", &o, err, sizeof(err)), CMDLINE_EUNKNOWN);
    assert_string_equal(err, "unknown");
    assert_int_equal(cmdline_parse("bogus", &o, NULL, 0), CMDLINE_EUNKNOWN);
    assert_int_equal(cmdline_parse("bogus", &o, err, 0), CMDLINE_EUNKNOWN);
    assert_int_equal(cmdline_parse("verbose", NULL, err, sizeof(err)), CMDLINE_EVALUE);
}

struct glob_case {
    const char *pattern, *name;
    bool match;
};

static const struct glob_case glob_cases[] = {
    {"", "", true},
    {"", "a", false},
    {"a", "", false},
    {"*", "", true},
    {"*", "boot.memmap", true},
    {"**", "x", true},
    {"boot.*", "boot.memmap", true},
    {"boot.*", "boot.", true},
    {"boot.*", "boot", false},
    {"boot.*", "paging.boot.x", false},
    {"*.memmap", "boot.memmap", true},
    {"*.memmap", "boot.memmapx", false},
    {"*map*", "boot.memmap.e820", true},
    {"a?c", "abc", true},
    {"a?c", "ac", false},
    {"a?c", "abbc", false},
    {"?", "", false},
    {"?", "x", true},
    {"???", "abc", true},
    {"*?", "", false},
    {"*?", "a", true},
    {"a*b", "a", false},
    {"a*b", "ab", true},
    {"a*b", "axxxbxxb", true},
    {"a*b", "axxxbxxbc", false},
    {"a*b*c", "abcabc", true},
    {"*a*b*c*", "xxaxxbxxcxx", true},
    {"*a*b*c*", "xxaxxcxxbxx", false},
    {"ds.bts.wrap", "ds.bts.wrap", true},
    {"ds.bts.wrap", "ds.bts.wra", false},
    {"ds.bts.wrap", "ds.bts.wrapx", false},
    {"*", "*", true},
    {"a", "*", false},
    {"A*", "a", false},
};

static void test_glob_match(void **state)
{
    (void)state;
    for (size_t i = 0; i < NELEM(glob_cases); i++) {
        const struct glob_case *c = &glob_cases[i];
        if (glob_match(c->pattern, c->name) != c->match)
            fail_msg("glob_match('%s', '%s') != %d", c->pattern, c->name, c->match);
    }
    assert_false(glob_match(NULL, "a"));
    assert_false(glob_match("a", NULL));
}

/* A pattern that makes naive recursive matchers exponential must stay fast. */
static void test_glob_pathological(void **state)
{
    char pattern[CMDLINE_GLOB_LEN], name[4096];
    clock_t t0;

    (void)state;
    for (size_t i = 0; i < 30; i++) {
        pattern[2 * i] = 'a';
        pattern[2 * i + 1] = '*';
    }
    pattern[60] = 'b';
    pattern[61] = '\0';
    memset(name, 'a', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    t0 = clock();
    assert_false(glob_match(pattern, name));
    assert_true((double)(clock() - t0) / CLOCKS_PER_SEC < 1.0);
}

static void test_selects(void **state)
{
    struct btsx_options o;

    (void)state;
    cmdline_defaults(&o);
    assert_true(cmdline_selects(&o, "anything"));
    assert_false(cmdline_selects(&o, NULL));
    assert_int_equal(cmdline_parse("tests=boot.*,apic.timer", &o, NULL, 0), 0);
    assert_true(cmdline_selects(&o, "boot.memmap"));
    assert_true(cmdline_selects(&o, "apic.timer"));
    assert_false(cmdline_selects(&o, "apic.timer2"));
    assert_false(cmdline_selects(&o, "paging.write_text"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_empty_lines),
        cmocka_unit_test(test_choices),
        cmocka_unit_test(test_flags),
        cmocka_unit_test(test_seed),
        cmocka_unit_test(test_tests_globs),
        cmocka_unit_test(test_whole_line),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_codes_distinct),
        cmocka_unit_test(test_line_length),
        cmocka_unit_test(test_error_buffer),
        cmocka_unit_test(test_glob_match),
        cmocka_unit_test(test_glob_pathological),
        cmocka_unit_test(test_selects),
    };
    /* A runaway loop in the code under test must fail the run, not hang `make unit`. */
    alarm(UNIT_TIMEOUT_S);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
