/* Host tests of ds/layout.c: the DS area's offsets, ds_layout_bts() in both modes with every
 * error (each its own code, the area untouched), the default threshold, ds_pending() on sane
 * and corrupted indexes, circular reads before and after the wrap against a simulated CPU
 * that writes through the DS fields (the buffer backed by a guard page, so reading one slot
 * too far faults), and the memory quota with its overflows.
 *
 * `test_layout NAME_GLOB` runs only the matching tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "ds/layout.h"
#include "kernel/errno.h"

#define NELEM(a)   (sizeof(a) / sizeof((a)[0]))
#define R          BTS_RECORD_SIZE
#define POISON     0xa5
#define BASE       0x200000ULL /* a plausible identity-mapped buffer */
#define PAGE       DS_QUOTA_PAGE
/* Lowest address above the lower canonical half, highest below the upper one. */
#define LOW_END    0x0000800000000000ULL
#define HIGH_START 0xffff800000000000ULL

static struct ds_area poisoned(void)
{
    struct ds_area ds;

    memset(&ds, POISON, sizeof(ds));
    return ds;
}

/* ================================================================== the area */

static void test_area_offsets(void **state)
{
    (void)state;
    assert_int_equal(offsetof(struct ds_area, bts_base), 0x00);
    assert_int_equal(offsetof(struct ds_area, bts_index), 0x08);
    assert_int_equal(offsetof(struct ds_area, bts_abs_max), 0x10);
    assert_int_equal(offsetof(struct ds_area, bts_thresh), 0x18);
    assert_int_equal(offsetof(struct ds_area, pebs_base), 0x20);
    assert_int_equal(offsetof(struct ds_area, pebs_index), 0x28);
    assert_int_equal(offsetof(struct ds_area, pebs_abs_max), 0x30);
    assert_int_equal(offsetof(struct ds_area, pebs_thresh), 0x38);
    assert_int_equal(offsetof(struct ds_area, pebs_reset), 0x40);
    assert_int_equal(sizeof(struct ds_area), 0x60);
}

/* ================================================================== ds_layout_bts */

static void check_bts(const struct ds_area *ds, uint64_t base, uint64_t size, uint64_t thresh)
{
    struct ds_area p = poisoned();

    assert_true(ds->bts_base == base);
    assert_true(ds->bts_index == base);
    assert_true(ds->bts_abs_max == base + size);
    assert_true(ds->bts_thresh == thresh);
    /* The PEBS half is not this function's. */
    assert_memory_equal(&ds->pebs_base, &p.pebs_base,
                        sizeof(*ds) - offsetof(struct ds_area, pebs_base));
}

static void test_layout_interrupt(void **state)
{
    struct ds_area ds = poisoned();
    uint64_t n = 16;

    (void)state;
    assert_int_equal(ds_layout_bts(&ds, BASE, n * R, 15 * R, BTS_MODE_INTERRUPT), 0);
    check_bts(&ds, BASE, n * R, BASE + 15 * R);
    /* The extremes: one record in, one record short of the maximum. */
    ds = poisoned();
    assert_int_equal(ds_layout_bts(&ds, BASE, n * R, R, BTS_MODE_INTERRUPT), 0);
    check_bts(&ds, BASE, n * R, BASE + R);
    /* The minimum buffer. */
    ds = poisoned();
    assert_int_equal(ds_layout_bts(&ds, BASE, BTS_MIN_RECORDS * R, R, BTS_MODE_INTERRUPT), 0);
    check_bts(&ds, BASE, BTS_MIN_RECORDS * R, BASE + R);
    /* A buffer ending exactly at the top of the lower canonical half, and one at the bottom
     * of the upper half. */
    ds = poisoned();
    assert_int_equal(ds_layout_bts(&ds, LOW_END - n * R, n * R, R, BTS_MODE_INTERRUPT), 0);
    check_bts(&ds, LOW_END - n * R, n * R, LOW_END - n * R + R);
    ds = poisoned();
    assert_int_equal(ds_layout_bts(&ds, HIGH_START, n * R, R, BTS_MODE_INTERRUPT), 0);
    check_bts(&ds, HIGH_START, n * R, HIGH_START + R);
    /* Interrupt mode needs no room above the maximum. */
    ds = poisoned();
    assert_int_equal(ds_layout_bts(&ds, 0 - 8 - n * R, n * R, R, BTS_MODE_INTERRUPT), 0);
    check_bts(&ds, 0 - 8 - n * R, n * R, 0 - 8 - n * R + R);
}

static void test_layout_circular(void **state)
{
    struct ds_area ds = poisoned();

    (void)state;
    /* Linux's choice: one record beyond the maximum. */
    assert_int_equal(ds_layout_bts(&ds, BASE, 8 * R, BTS_THRESH_CIRCULAR, BTS_MODE_CIRCULAR), 0);
    check_bts(&ds, BASE, 8 * R, BASE + 9 * R);
    assert_true(ds.bts_thresh > ds.bts_abs_max);
    /* Any threshold beyond the maximum is fine. */
    ds = poisoned();
    assert_int_equal(ds_layout_bts(&ds, BASE, 8 * R, 100 * R, BTS_MODE_CIRCULAR), 0);
    check_bts(&ds, BASE, 8 * R, BASE + 100 * R);
    ds = poisoned();
    assert_int_equal(
        ds_layout_bts(&ds, BASE, BTS_MIN_RECORDS * R, BTS_THRESH_CIRCULAR, BTS_MODE_CIRCULAR), 0);
    check_bts(&ds, BASE, BTS_MIN_RECORDS * R, BASE + 3 * R);
}

struct layout_case {
    const char *what;
    uint64_t base, size, thresh;
    int mode;
    int err;
};

static const struct layout_case layout_errors[] = {
    {"base 0", 0, 8 * R, R, BTS_MODE_INTERRUPT, E_INVAL},
    {"unknown mode", BASE, 8 * R, R, BTS_MODE_COUNT, E_INVAL},
    {"negative mode", BASE, 8 * R, R, -1, E_INVAL},
    {"base 0 wins over bad size", 0, 25, 1, BTS_MODE_INTERRUPT, E_INVAL},
    {"bad mode wins over misaligned base", BASE + 4, 8 * R, R, BTS_MODE_COUNT, E_INVAL},

    {"base misaligned", BASE + 4, 8 * R, R, BTS_MODE_INTERRUPT, E_ALIGN},
    {"base misaligned by 1", BASE + 1, 8 * R, R, BTS_MODE_CIRCULAR, E_ALIGN},
    {"size not whole records (P79)", BASE, 8 * R + 8, R, BTS_MODE_INTERRUPT, E_ALIGN},
    {"size one byte over", BASE, 2 * R + 1, R, BTS_MODE_CIRCULAR, E_ALIGN},
    {"size under one record", BASE, R - 1, R, BTS_MODE_INTERRUPT, E_ALIGN},
    {"thresh off boundary", BASE, 8 * R, 7 * R + 1, BTS_MODE_INTERRUPT, E_ALIGN},
    {"thresh 1 byte", BASE, 8 * R, 1, BTS_MODE_INTERRUPT, E_ALIGN},
    {"circular thresh off boundary", BASE, 8 * R, 9 * R + 8, BTS_MODE_CIRCULAR, E_ALIGN},

    {"no records", BASE, 0, R, BTS_MODE_INTERRUPT, E_RANGE},
    {"one record", BASE, R, BTS_THRESH_CIRCULAR, BTS_MODE_CIRCULAR, E_RANGE},
    {"interrupt thresh 0", BASE, 8 * R, 0, BTS_MODE_INTERRUPT, E_RANGE},
    {"interrupt thresh at max", BASE, 8 * R, 8 * R, BTS_MODE_INTERRUPT, E_RANGE},
    {"interrupt thresh past max", BASE, 8 * R, 9 * R, BTS_MODE_INTERRUPT, E_RANGE},
    {"interrupt asks circular", BASE, 8 * R, BTS_THRESH_CIRCULAR, BTS_MODE_INTERRUPT, E_RANGE},
    {"circular thresh at max", BASE, 8 * R, 8 * R, BTS_MODE_CIRCULAR, E_RANGE},
    {"circular thresh below max", BASE, 8 * R, 4 * R, BTS_MODE_CIRCULAR, E_RANGE},
    {"circular thresh 0", BASE, 8 * R, 0, BTS_MODE_CIRCULAR, E_RANGE},

    {"base + size wraps", 0 - 8ULL, 2 * R, R, BTS_MODE_INTERRUPT, E_OVERFLOW},
    {"base + size is 2^64", 0 - 2ULL * R, 2 * R, R, BTS_MODE_INTERRUPT, E_OVERFLOW},
    {"base non-canonical", LOW_END, 8 * R, R, BTS_MODE_INTERRUPT, E_OVERFLOW},
    {"base in the hole", 0x1234000000000000ULL, 8 * R, R, BTS_MODE_INTERRUPT, E_OVERFLOW},
    {"end crosses into the hole", LOW_END - 8 * R + 8, 8 * R, R, BTS_MODE_INTERRUPT, E_OVERFLOW},
    {"starts in the hole, ends high", HIGH_START - 8, 8 * R, R, BTS_MODE_INTERRUPT, E_OVERFLOW},
    /* Both ends canonical and no wrap, but the hole lies in between. */
    {"spans the hole", BASE, ((HIGH_START - BASE) / R + 2) * R, R, BTS_MODE_INTERRUPT, E_OVERFLOW},
    {"circular thresh wraps", 0 - 8ULL - 8 * R, 8 * R, BTS_THRESH_CIRCULAR, BTS_MODE_CIRCULAR,
     E_OVERFLOW},
    {"explicit circular thresh wraps", BASE, 8 * R, (0 - BASE) / R *R + R, BTS_MODE_CIRCULAR,
     E_OVERFLOW},
};

static void test_layout_errors(void **state)
{
    const struct ds_area p = poisoned();
    struct ds_area ds;

    (void)state;
    for (size_t i = 0; i < NELEM(layout_errors); i++) {
        const struct layout_case *c = &layout_errors[i];
        int got;

        ds = p;
        got = ds_layout_bts(&ds, c->base, c->size, c->thresh, (enum bts_buf_mode)c->mode);
        if (got != c->err)
            fail_msg("%s: got %s, want %s", c->what, err_name(got), err_name(c->err));
        if (memcmp(&ds, &p, sizeof(ds)))
            fail_msg("%s: ds changed on error", c->what);
    }
    assert_int_equal(ds_layout_bts(NULL, BASE, 8 * R, R, BTS_MODE_INTERRUPT), E_INVAL);
    /* The four failure kinds are told apart. */
    assert_int_not_equal(E_INVAL, E_ALIGN);
    assert_int_not_equal(E_INVAL, E_RANGE);
    assert_int_not_equal(E_INVAL, E_OVERFLOW);
    assert_int_not_equal(E_ALIGN, E_RANGE);
    assert_int_not_equal(E_ALIGN, E_OVERFLOW);
    assert_int_not_equal(E_RANGE, E_OVERFLOW);
}

/* ================================================================== default threshold */

static void test_default_thresh(void **state)
{
    const struct {
        uint64_t n, thresh;
    } cases[] = {
        {0, 0},
        {1, 0},
        {2, 1},
        {3, 1},
        {24, 1},
        {25, 1},
        {26, 2},
        {32, 8},
        {64, 40},
        {399, 375},
        {400, 375},
        {416, 390},
        {2730, 2730 - 170},
        {4096, 3840},
        {UINT64_MAX, UINT64_MAX - UINT64_MAX / 16},
    };
    struct ds_area ds;

    (void)state;
    for (size_t i = 0; i < NELEM(cases); i++)
        assert_true(ds_default_thresh_records(cases[i].n) == cases[i].thresh);
    /* Every buffer size gets a threshold the layout accepts, with headroom. */
    for (uint64_t n = BTS_MIN_RECORDS; n <= 5000; n++) {
        uint64_t t = ds_default_thresh_records(n);

        assert_true(t >= 1 && t < n);
        assert_true(n - t >= n / 16);
        assert_true(n - t >= BTS_PMI_HEADROOM || t == 1);
        assert_int_equal(ds_layout_bts(&ds, BASE, n * R, t * R, BTS_MODE_INTERRUPT), 0);
    }
}

/* ================================================================== ds_pending */

static void test_pending(void **state)
{
    struct ds_area ds;
    uint64_t n;

    (void)state;
    assert_int_equal(ds_layout_bts(&ds, BASE, 8 * R, 6 * R, BTS_MODE_INTERRUPT), 0);
    for (uint64_t k = 0; k <= 8; k++) {
        ds.bts_index = BASE + k * R;
        n = 99;
        assert_int_equal(ds_pending(&ds, &n), 0);
        assert_int_equal(n, k);
    }

    const uint64_t corrupt[] = {
        /* BASE - 16 and BASE - 40 are a whole number of records from base modulo 2^64:
         * only the comparison with base rejects them. */
        0,          BASE - R,     BASE - 16,        BASE - 40,        BASE - 1,
        BASE + 1,   BASE + R + 8, BASE + 8 * R - 1, BASE + 8 * R + 1, BASE + 9 * R,
        UINT64_MAX,
    };
    for (size_t i = 0; i < NELEM(corrupt); i++) {
        ds.bts_index = corrupt[i];
        n = 99;
        assert_int_equal(ds_pending(&ds, &n), E_RANGE);
        assert_int_equal(n, 99);
    }
    /* An area whose maximum is below its base holds nothing trustworthy. */
    ds.bts_index = BASE;
    ds.bts_abs_max = BASE - R;
    assert_int_equal(ds_pending(&ds, &n), E_RANGE);
    ds.bts_abs_max = BASE + 8 * R;
    assert_int_equal(ds_pending(NULL, &n), E_INVAL);
    assert_int_equal(ds_pending(&ds, NULL), E_INVAL);
}

/* ================================================================== circular reads */

#define NREC 8

/* The buffer ends exactly where an inaccessible page begins, so a read or write at the
 * absolute maximum (the slot index points at when it has not wrapped yet) faults instead of
 * passing unnoticed. */
static struct bts_record *hwbuf;
static void *guard_map;
static size_t guard_len;

static int setup_hwbuf(void **state)
{
    long page = sysconf(_SC_PAGESIZE);

    (void)state;
    guard_len = 2 * (size_t)page;
    guard_map = mmap(NULL, guard_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (guard_map == MAP_FAILED || mprotect((char *)guard_map + page, (size_t)page, PROT_NONE))
        return -1;
    hwbuf = (struct bts_record *)((char *)guard_map + page) - NREC;
    return 0;
}

static int teardown_hwbuf(void **state)
{
    (void)state;
    return munmap(guard_map, guard_len);
}

static struct bts_record hwrec(uint64_t seq)
{
    struct bts_record r = {0x401000 + seq, 0x402000 + seq, 0};

    return r;
}

/* A fresh circular buffer of NREC zeroed records, as the driver sets it up. */
static struct ds_area circ_setup(void)
{
    struct ds_area ds;

    memset(hwbuf, 0, NREC * sizeof(hwbuf[0]));
    assert_int_equal(ds_layout_bts(&ds, (uint64_t)(uintptr_t)hwbuf, NREC * R, BTS_THRESH_CIRCULAR,
                                   BTS_MODE_CIRCULAR),
                     0);
    return ds;
}

/* The CPU in circular mode: write at index, advance, wrap at the maximum. It wraps before
 * the next write, so index == abs_max is visible between the two (the reader must cope);
 * `eager` wraps straight after the write instead. */
static void cpu_write(struct ds_area *ds, uint64_t seq, bool eager)
{
    if (ds->bts_index >= ds->bts_abs_max)
        ds->bts_index = ds->bts_base;
    *(struct bts_record *)(uintptr_t)ds->bts_index = hwrec(seq);
    ds->bts_index += R;
    if (eager && ds->bts_index >= ds->bts_abs_max)
        ds->bts_index = ds->bts_base;
}

/* After `written` records the read returns the newest min(written, NREC), oldest first. */
static void check_circular(const struct ds_area *ds, uint64_t written)
{
    struct bts_record out[NREC + 2];
    uint64_t held = written < NREC ? written : NREC;
    uint64_t first = written - held;

    memset(out, POISON, sizeof(out));
    assert_int_equal(ds_read_circular(ds, out, NREC + 2), held);
    for (uint64_t i = 0; i < held; i++) {
        struct bts_record want = hwrec(first + i);

        assert_memory_equal(&out[i], &want, sizeof(want));
    }
    assert_int_equal(((unsigned char *)&out[held])[0], POISON);
}

static void test_read_circular(void **state)
{
    (void)state;
    for (int eager = 0; eager <= 1; eager++) {
        struct ds_area ds = circ_setup();
        uint64_t w;

        check_circular(&ds, 0);
        /* Before, at and after the wrap, and around several times. */
        for (w = 1; w <= 3 * NREC + 3; w++) {
            cpu_write(&ds, w - 1, eager);
            check_circular(&ds, w);
        }
    }
}

static void test_read_circular_max(void **state)
{
    struct ds_area ds = circ_setup();
    struct bts_record out[NREC], poison[NREC];

    (void)state;
    memset(poison, POISON, sizeof(poison));
    for (uint64_t w = 0; w < NREC + 3; w++) /* wrapped: holds 3..10, oldest in slot 3 */
        cpu_write(&ds, w, false);
    /* max below what is held: the oldest max, across the end of the buffer. */
    memcpy(out, poison, sizeof(out));
    assert_int_equal(ds_read_circular(&ds, out, 6), 6);
    for (uint64_t i = 0; i < 6; i++) {
        struct bts_record want = hwrec(3 + i);

        assert_memory_equal(&out[i], &want, sizeof(want));
    }
    assert_memory_equal(&out[6], &poison[6], 2 * sizeof(out[0]));
    /* Nothing asked: out may be NULL. */
    assert_int_equal(ds_read_circular(&ds, NULL, 0), 0);
    assert_int_equal(ds_read_circular(&ds, out, 0), 0);
    assert_int_equal(ds_read_circular(&ds, NULL, 1), E_INVAL);
    assert_int_equal(ds_read_circular(NULL, out, 1), E_INVAL);
    /* Reading changed nothing. */
    assert_true(ds.bts_index == (uint64_t)(uintptr_t)&hwbuf[3]);
}

static void test_read_circular_corrupt(void **state)
{
    const struct ds_area good = circ_setup();
    struct bts_record out[NREC];
    struct ds_area ds;

    (void)state;
    ds = good;
    ds.bts_base = 0;
    ds.bts_index = 0;
    assert_int_equal(ds_read_circular(&ds, out, NREC), E_RANGE);
    ds = good;
    ds.bts_base += 4;
    ds.bts_index = ds.bts_base;
    assert_int_equal(ds_read_circular(&ds, out, NREC), E_RANGE);
    ds = good;
    ds.bts_abs_max = good.bts_base - R;
    assert_int_equal(ds_read_circular(&ds, out, NREC), E_RANGE);
    ds = good;
    ds.bts_abs_max -= 8; /* not whole records */
    assert_int_equal(ds_read_circular(&ds, out, NREC), E_RANGE);
    ds = good;
    ds.bts_abs_max = good.bts_base + R; /* one record */
    assert_int_equal(ds_read_circular(&ds, out, NREC), E_RANGE);
    ds = good;
    ds.bts_index += 1;
    assert_int_equal(ds_read_circular(&ds, out, NREC), E_RANGE);
    ds = good;
    ds.bts_index = good.bts_abs_max + R;
    assert_int_equal(ds_read_circular(&ds, out, NREC), E_RANGE);
    ds = good;
    ds.bts_index = good.bts_base - R;
    assert_int_equal(ds_read_circular(&ds, out, NREC), E_RANGE);
    assert_int_equal(ds_read_circular(&good, out, NREC), 0);
}

/* ================================================================== quota */

static void test_trace_bytes(void **state)
{
    const struct {
        uint64_t hw, ring, bytes;
    } cases[] = {
        {0, 0, PAGE}, /* the DS area alone */
        {1, 0, 2 * PAGE},
        {0, 1, 2 * PAGE},
        {PAGE / R, 0, 2 * PAGE}, /* 170 records: 4080 bytes */
        {PAGE / R + 1, 0, 3 * PAGE},
        {512, 512, PAGE + 3 * PAGE + 3 * PAGE}, /* 12288 bytes each: exact pages */
        {2730, 4096, PAGE + 16 * PAGE + 24 * PAGE},
    };
    /* The largest ring whose pages still fit with the DS page: total 2^64 - PAGE. */
    const uint64_t top_ring = (0 - 2 * PAGE) / R;
    uint64_t b;

    (void)state;
    for (size_t i = 0; i < NELEM(cases); i++) {
        b = 0;
        assert_int_equal(ds_trace_bytes(cases[i].hw, cases[i].ring, &b), 0);
        assert_true(b == cases[i].bytes);
    }
    assert_int_equal(ds_trace_bytes(0, top_ring, &b), 0);
    assert_true(b == 0 - PAGE);
    assert_int_equal(ds_trace_bytes(top_ring, 0, &b), 0);
    assert_true(b == 0 - PAGE);

    const struct {
        uint64_t hw, ring;
    } over[] = {
        {UINT64_MAX / R + 1, 0},                      /* records * 24 */
        {0, UINT64_MAX / R + 1}, {UINT64_MAX / R, 0}, /* rounding up to a page */
        {0, UINT64_MAX},         {1, top_ring},       /* the sum */
        {top_ring, 1},           {(1ULL << 63) / R, (1ULL << 63) / R},
    };
    for (size_t i = 0; i < NELEM(over); i++) {
        b = 12345;
        assert_int_equal(ds_trace_bytes(over[i].hw, over[i].ring, &b), E_OVERFLOW);
        assert_int_equal(b, 12345);
    }
    assert_int_equal(ds_trace_bytes(1, 1, NULL), E_INVAL);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_area_offsets),          cmocka_unit_test(test_layout_interrupt),
        cmocka_unit_test(test_layout_circular),       cmocka_unit_test(test_layout_errors),
        cmocka_unit_test(test_default_thresh),        cmocka_unit_test(test_pending),
        cmocka_unit_test(test_read_circular),         cmocka_unit_test(test_read_circular_max),
        cmocka_unit_test(test_read_circular_corrupt), cmocka_unit_test(test_trace_bytes),
    };

    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, setup_hwbuf, teardown_hwbuf);
}
