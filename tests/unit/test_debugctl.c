/* Host tests of ds/debugctl.c: the vendor/family table that chooses a DEBUGCTL layout, each
 * layout's bits against the SDM's figures (IA32_DEBUGCTL for family 06H and later,
 * MSR_DEBUGCTLA for the Pentium 4 and NetBurst Xeons), the values composed from them, and the
 * recording test, including one layout's value read with the other layout.
 *
 * `test_debugctl NAME_GLOB` runs only the matching tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ds/debugctl.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ================================================================== the table */

struct row {
    const char *vendor;
    uint32_t family;
    const struct debugctl_layout *want;
};

static void test_table(void **state)
{
    (void)state;
    static const struct row rows[] = {
        /* Intel: Pentium M/Core family 6, NetBurst 0FH, extended families after 0FH. */
        {"GenuineIntel", 0x06, &debugctl_core},
        {"GenuineIntel", 0x0F, &debugctl_netburst},
        {"GenuineIntel", 0x07, &debugctl_core},
        {"GenuineIntel", 0x0E, &debugctl_core},
        {"GenuineIntel", 0x10, &debugctl_core},
        {"GenuineIntel", 0x13, &debugctl_core},
        {"GenuineIntel", 0xFFFFFFFF, &debugctl_core},
        /* Intel before family 6: no BTS in DEBUGCTL. */
        {"GenuineIntel", 0x05, NULL},
        {"GenuineIntel", 0x00, NULL},
        /* Other vendors, QEMU's generic models (qemu64/max are AuthenticAMD family 0FH). */
        {"AuthenticAMD", 0x0F, NULL},
        {"AuthenticAMD", 0x06, NULL},
        {"AuthenticAMD", 0x19, NULL},
        {"HygonGenuine", 0x18, NULL},
        {"CentaurHauls", 0x06, NULL},
        {"  Shanghai  ", 0x07, NULL},
        /* Near misses of the vendor string. */
        {"genuineintel", 0x06, NULL},
        {"GenuineIntel ", 0x06, NULL},
        {"GenuineInte", 0x0F, NULL},
        {"", 0x06, NULL},
    };
    for (size_t i = 0; i < NELEM(rows); i++) {
        const struct debugctl_layout *got = debugctl_layout_for(rows[i].vendor, rows[i].family);
        if (got != rows[i].want)
            fail_msg("'%s' family %#x: got %s, want %s", rows[i].vendor, rows[i].family,
                     got ? got->name : "none", rows[i].want ? rows[i].want->name : "none");
    }
    assert_null(debugctl_layout_for(NULL, 6));
}

/* ================================================================== the bits */

/* SDM Vol. 3B, figure "IA32_DEBUGCTL MSR for Processors based on Intel Core microarchitecture"
 * and its successors: TR 6, BTS 7, BTINT 8, BTS_OFF_OS 9, BTS_OFF_USR 10. */
static void test_core_bits(void **state)
{
    (void)state;
    const struct debugctl_layout *l = &debugctl_core;
    assert_string_equal(l->name, "core");
    assert_int_equal(l->tr, 0x040);
    assert_int_equal(l->bts, 0x080);
    assert_int_equal(l->btint, 0x100);
    assert_int_equal(l->bts_off_os, 0x200);
    assert_int_equal(l->bts_off_usr, 0x400);
}

/* SDM Vol. 3B, figure "MSR_DEBUGCTLA MSR for Pentium 4 and Intel Xeon Processors": TR 2, BTS 3,
 * BTINT 4, BTS_OFF_OS 5, BTS_OFF_USR 6. */
static void test_netburst_bits(void **state)
{
    (void)state;
    const struct debugctl_layout *l = &debugctl_netburst;
    assert_string_equal(l->name, "netburst");
    assert_int_equal(l->tr, 0x04);
    assert_int_equal(l->bts, 0x08);
    assert_int_equal(l->btint, 0x10);
    assert_int_equal(l->bts_off_os, 0x20);
    assert_int_equal(l->bts_off_usr, 0x40);
}

/* ================================================================== composing */

struct compose_case {
    const struct debugctl_layout *l;
    bool interrupt, kernel, user;
    uint64_t want;
};

static void test_compose(void **state)
{
    (void)state;
    static const struct compose_case cases[] = {
        {&debugctl_core, false, true, true, 0x0C0},     /* TR|BTS */
        {&debugctl_core, true, true, true, 0x1C0},      /* + BTINT */
        {&debugctl_core, true, false, true, 0x3C0},     /* + BTS_OFF_OS */
        {&debugctl_core, false, true, false, 0x4C0},    /* TR|BTS|BTS_OFF_USR */
        {&debugctl_core, true, false, false, 0x7C0},    /* everything */
        {&debugctl_netburst, false, true, true, 0x0C},  /* TR|BTS */
        {&debugctl_netburst, true, true, true, 0x1C},   /* + BTINT */
        {&debugctl_netburst, true, false, true, 0x3C},  /* + BTS_OFF_OS */
        {&debugctl_netburst, false, true, false, 0x4C}, /* TR|BTS|BTS_OFF_USR */
        {&debugctl_netburst, true, false, false, 0x7C}, /* everything */
        {NULL, true, true, true, 0},                    /* no layout: nothing is switched on */
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        const struct compose_case *c = &cases[i];
        uint64_t got = debugctl_compose(c->l, c->interrupt, c->kernel, c->user);
        if (got != c->want)
            fail_msg("case %zu (%s): got %#llx, want %#llx", i, c->l ? c->l->name : "none",
                     (unsigned long long)got, (unsigned long long)c->want);
    }
}

static void test_recording(void **state)
{
    (void)state;
    assert_true(debugctl_recording(&debugctl_core, 0xC0));
    assert_true(debugctl_recording(&debugctl_core, 0x7C3));
    assert_false(debugctl_recording(&debugctl_core, 0x40)); /* TR alone */
    assert_false(debugctl_recording(&debugctl_core, 0x80)); /* BTS alone */
    assert_true(debugctl_recording(&debugctl_netburst, 0x0C));
    assert_false(debugctl_recording(&debugctl_netburst, 0x08));
    /* One layout's TR|BTS means something else in the other: Core's 0xC0 is BTS_OFF_USR and a
     * reserved bit on a Pentium 4, NetBurst's 0x0C reserved bits on a Core. */
    assert_false(debugctl_recording(&debugctl_netburst, 0xC0));
    assert_false(debugctl_recording(&debugctl_core, 0x0C));
    assert_false(debugctl_recording(NULL, ~0ULL));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),         cmocka_unit_test(test_core_bits),
        cmocka_unit_test(test_netburst_bits), cmocka_unit_test(test_compose),
        cmocka_unit_test(test_recording),
    };
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests_name("debugctl", tests, NULL, NULL);
}
