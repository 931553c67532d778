/* Host tests of ds/record.h and ds/ring.c.
 *
 * Records: the timestamp encoding, decoding of branches, timestamps and bad qualifiers.
 * Ring: init errors (ring untouched), every policy at every boundary (empty, exactly full, one
 * over, a wrap point inside one append, appends larger than the ring, drains across the wrap),
 * lost/overflowed accounting, get/get_range/drain order, clear. Every ring sits between two
 * guard records that must survive each test. A randomised test replays many operations
 * against a trivial reference model (a plain array shifted one record at a time), and a
 * timing test holds the drain to at most 1.5x a memcpy of the same bytes.
 *
 * `test_ring NAME_GLOB` runs only the matching tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "ds/record.h"
#include "ds/ring.h"
#include "kernel/errno.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))
#define CAP      8   /* the boundary tests' ring */
#define MAX_CAP  64  /* largest ring the storage holds */
#define SRC_LEN  256 /* records available to append */
#define POISON   0xa5

static const struct bts_record guard = {0x6a6a6a6a6a6a6a6aULL, 0x5b5b5b5b5b5b5b5bULL, 0x4c4c4cULL};

/* Ring storage with one guard record on each side. */
static struct bts_record storage[MAX_CAP + 2];
static struct bts_record src[SRC_LEN];
static struct bts_ring ring;

/* Record number `seq`: every field distinct and recognisable. */
static struct bts_record rec(uint64_t seq)
{
    struct bts_record r = {0x401000 + seq, 0x802000 + seq, seq};

    return r;
}

static void set_guards(uint64_t cap)
{
    storage[0] = guard;
    storage[cap + 1] = guard;
}

static void check_guards(uint64_t cap)
{
    assert_memory_equal(&storage[0], &guard, sizeof(guard));
    assert_memory_equal(&storage[cap + 1], &guard, sizeof(guard));
}

/* A fresh ring of cap records over storage[1..cap], with poisoned slots. */
static void ring_setup(uint64_t cap, enum bts_policy p)
{
    assert_true(cap <= MAX_CAP);
    memset(storage, POISON, sizeof(storage));
    set_guards(cap);
    assert_int_equal(ring_init(&ring, &storage[1], cap, p), 0);
}

static int setup_src(void **state)
{
    (void)state;
    for (uint64_t i = 0; i < SRC_LEN; i++)
        src[i] = rec(i);
    return 0;
}

/* Appends records seq first..first+n-1 and checks the return value. */
static void append_seq(uint64_t first, uint64_t n, uint64_t expect_stored)
{
    assert_true(first + n <= SRC_LEN);
    assert_int_equal(ring_append(&ring, &src[first], n), expect_stored);
}

/* The ring holds exactly records seq first..first+n-1, oldest first, by every accessor. */
static void check_contents(uint64_t first, uint64_t n)
{
    struct bts_record got, all[MAX_CAP + 1];

    assert_int_equal(ring_count(&ring), n);
    assert_int_equal(ring_space(&ring), ring.cap - n);
    for (uint64_t i = 0; i < n; i++) {
        struct bts_record want = rec(first + i);

        assert_int_equal(ring_get(&ring, i, &got), 0);
        assert_memory_equal(&got, &want, sizeof(want));
    }
    assert_int_equal(ring_get(&ring, n, &got), E_NOENT);
    memset(all, POISON, sizeof(all));
    assert_int_equal(ring_get_range(&ring, 0, MAX_CAP + 1, all), n);
    if (n)
        assert_memory_equal(all, &src[first], n * sizeof(all[0]));
    check_guards(ring.cap);
}

static void check_acct(uint64_t lost, bool overflowed)
{
    assert_int_equal(ring.lost, lost);
    assert_int_equal(ring.overflowed, overflowed);
}

/* ================================================================== records */

static void test_record_layout(void **state)
{
    (void)state;
    assert_int_equal(sizeof(struct bts_record), BTS_RECORD_SIZE);
    assert_int_equal(offsetof(struct bts_record, from), 0);
    assert_int_equal(offsetof(struct bts_record, to), 8);
    assert_int_equal(offsetof(struct bts_record, flags), 16);
}

static void test_timestamp_encode(void **state)
{
    struct bts_record a = bts_timestamp_record(BTS_Q_ARRIVE, 0x123456789abcULL);
    struct bts_record d = bts_timestamp_record(BTS_Q_DEPART, UINT64_MAX);

    (void)state;
    assert_true(a.from == BTS_ESCAPE);
    assert_true(a.to == 0x123456789abcULL);
    assert_int_equal(a.flags, BTS_Q_ARRIVE);
    assert_true(d.from == BTS_ESCAPE);
    assert_true(d.to == UINT64_MAX);
    assert_int_equal(d.flags, BTS_Q_DEPART);
}

static void test_decode_timestamps(void **state)
{
    const uint64_t tscs[] = {0, 1, 0x8000000000000000ULL, UINT64_MAX};
    struct bts_event ev;

    (void)state;
    for (size_t i = 0; i < NELEM(tscs); i++) {
        struct bts_record a = bts_timestamp_record(BTS_Q_ARRIVE, tscs[i]);
        struct bts_record d = bts_timestamp_record(BTS_Q_DEPART, tscs[i]);

        memset(&ev, POISON, sizeof(ev));
        assert_int_equal(bts_decode_record(&a, &ev), 0);
        assert_int_equal(ev.kind, BTS_EV_ARRIVE);
        assert_true(ev.tsc == tscs[i]);
        assert_true(ev.from == 0 && ev.to == 0);

        memset(&ev, POISON, sizeof(ev));
        assert_int_equal(bts_decode_record(&d, &ev), 0);
        assert_int_equal(ev.kind, BTS_EV_DEPART);
        assert_true(ev.tsc == tscs[i]);
        assert_true(ev.from == 0 && ev.to == 0);
    }
}

static void test_decode_timestamp_cpu(void **state)
{
    /* The CPU travels in bits 31..8 of flags; CPU 0 leaves the bare qualifier. */
    const unsigned cpus[] = {0, 1, 15, 255, BTS_Q_CPU_MAX};
    struct bts_event ev;

    (void)state;
    for (size_t i = 0; i < NELEM(cpus); i++) {
        struct bts_record d = bts_timestamp_record_on(BTS_Q_DEPART, 77, cpus[i]);

        assert_true(d.flags == (BTS_Q_DEPART | (uint64_t)cpus[i] << BTS_Q_CPU_SHIFT));
        assert_true((d.flags >> 32) == 0);
        memset(&ev, POISON, sizeof(ev));
        assert_int_equal(bts_decode_record(&d, &ev), 0);
        assert_int_equal(ev.kind, BTS_EV_DEPART);
        assert_int_equal(ev.cpu, cpus[i]);
        assert_true(ev.tsc == 77);
    }
    assert_int_equal(bts_timestamp_record_on(BTS_Q_ARRIVE, 1, 0).flags, BTS_Q_ARRIVE);
    /* A CPU number a qualifier bit would need is refused: bits 63..32 must be zero. */
    struct bts_record r = {BTS_ESCAPE, 1, BTS_Q_ARRIVE | (1ULL << 32)};
    assert_int_equal(bts_decode_record(&r, &ev), E_INVAL);
}

static void test_decode_branch(void **state)
{
    /* Flags are never interpreted for branches (bit 4 "predicted" is unreliable), and only
     * the exact escape makes a timestamp: its neighbours are branches. */
    const struct bts_record branches[] = {
        {0x401000, 0x401020, 0},
        {0x401000, 0x401020, 1u << 4},
        {0x401000, 0x401020, BTS_Q_ARRIVE},
        {0, 0, 0},
        {BTS_ESCAPE - 1, BTS_ESCAPE, BTS_Q_DEPART},
        {0xffffffff80001000ULL, 0x1000, UINT64_MAX},
    };
    struct bts_event ev;

    (void)state;
    for (size_t i = 0; i < NELEM(branches); i++) {
        memset(&ev, POISON, sizeof(ev));
        assert_int_equal(bts_decode_record(&branches[i], &ev), 0);
        assert_int_equal(ev.kind, BTS_EV_BRANCH);
        assert_true(ev.from == branches[i].from);
        assert_true(ev.to == branches[i].to);
        assert_int_equal(ev.tsc, 0);
    }
}

static void test_decode_bad(void **state)
{
    const uint64_t bad_flags[] = {0, 3, 4, (1ULL << 32) | BTS_Q_ARRIVE, UINT64_MAX};
    struct bts_event ev, poison;
    struct bts_record ok = bts_timestamp_record(BTS_Q_ARRIVE, 5);

    (void)state;
    memset(&poison, POISON, sizeof(poison));
    for (size_t i = 0; i < NELEM(bad_flags); i++) {
        struct bts_record r = {BTS_ESCAPE, 42, bad_flags[i]};

        ev = poison;
        assert_int_equal(bts_decode_record(&r, &ev), E_INVAL);
        assert_memory_equal(&ev, &poison, sizeof(ev));
    }
    assert_int_equal(bts_decode_record(NULL, &ev), E_INVAL);
    assert_int_equal(bts_decode_record(&ok, NULL), E_INVAL);
}

/* ================================================================== init */

static void test_init_errors(void **state)
{
    struct bts_ring r, poison;
    struct bts_record one[1];

    (void)state;
    memset(&poison, POISON, sizeof(poison));
    r = poison;
    assert_int_equal(ring_init(NULL, one, 1, BTS_POLICY_WRAP), E_INVAL);
    assert_int_equal(ring_init(&r, NULL, 1, BTS_POLICY_WRAP), E_INVAL);
    assert_int_equal(ring_init(&r, one, 1, BTS_POLICY_COUNT), E_INVAL);
    assert_int_equal(ring_init(&r, one, 1, (enum bts_policy) - 1), E_INVAL);
    assert_int_equal(ring_init(&r, one, 0, BTS_POLICY_STOP), E_RANGE);
    assert_int_equal(ring_init(&r, one, RING_CAP_MAX + 1, BTS_POLICY_STREAM), E_OVERFLOW);
    assert_int_equal(ring_init(&r, one, UINT64_MAX, BTS_POLICY_STREAM), E_OVERFLOW);
    assert_memory_equal(&r, &poison, sizeof(r)); /* untouched by every failure */
}

static void test_init_ok(void **state)
{
    struct bts_ring r;
    struct bts_record one[1];

    (void)state;
    memset(&r, POISON, sizeof(r));
    assert_int_equal(ring_init(&r, one, 1, BTS_POLICY_STREAM), 0);
    assert_ptr_equal(r.rec, one);
    assert_int_equal(r.cap, 1);
    assert_int_equal(r.policy, BTS_POLICY_STREAM);
    assert_int_equal(r.head, 0);
    assert_int_equal(ring_count(&r), 0);
    assert_int_equal(ring_space(&r), 1);
    assert_int_equal(r.lost, 0);
    assert_false(r.overflowed);
    /* The largest capacity is accepted: only its byte count matters here. */
    assert_int_equal(ring_init(&r, one, RING_CAP_MAX, BTS_POLICY_WRAP), 0);
    assert_int_equal(ring_space(&r), RING_CAP_MAX);
}

/* ================================================================== every policy */

static const enum bts_policy policies[] = {BTS_POLICY_WRAP, BTS_POLICY_STOP, BTS_POLICY_STREAM};

static void test_empty(void **state)
{
    struct bts_record out[2], poison[2];

    (void)state;
    memset(poison, POISON, sizeof(poison));
    for (size_t p = 0; p < NELEM(policies); p++) {
        ring_setup(CAP, policies[p]);
        append_seq(0, 0, 0);
        memcpy(out, poison, sizeof(out));
        assert_int_equal(ring_get(&ring, 0, &out[0]), E_NOENT);
        assert_int_equal(ring_get_range(&ring, 0, 2, out), 0);
        assert_int_equal(ring_drain(&ring, out, 2), 0);
        assert_memory_equal(out, poison, sizeof(out));
        assert_int_equal(ring_get(NULL, 0, out), E_INVAL);
        assert_int_equal(ring_get(&ring, 0, NULL), E_INVAL);
        check_contents(0, 0);
        check_acct(0, false);
    }
}

static void test_exactly_full(void **state)
{
    (void)state;
    for (size_t p = 0; p < NELEM(policies); p++) {
        /* In one append ... */
        ring_setup(CAP, policies[p]);
        append_seq(0, CAP, CAP);
        check_contents(0, CAP);
        check_acct(0, false);
        /* ... and one record at a time. */
        ring_setup(CAP, policies[p]);
        for (uint64_t i = 0; i < CAP; i++)
            append_seq(i, 1, 1);
        check_contents(0, CAP);
        check_acct(0, false);
    }
}

static void test_one_over_after_full(void **state)
{
    (void)state;
    ring_setup(CAP, BTS_POLICY_WRAP);
    append_seq(0, CAP, CAP);
    append_seq(CAP, 1, 1);
    check_contents(1, CAP); /* the oldest was overwritten */
    check_acct(1, false);

    ring_setup(CAP, BTS_POLICY_STOP);
    append_seq(0, CAP, CAP);
    append_seq(CAP, 1, 0);
    check_contents(0, CAP); /* the new one was dropped */
    check_acct(1, true);

    ring_setup(CAP, BTS_POLICY_STREAM);
    append_seq(0, CAP, CAP);
    append_seq(CAP, 1, 0);
    check_contents(0, CAP); /* refused, not lost: the caller keeps it */
    check_acct(0, false);
}

static void test_one_over_in_one_append(void **state)
{
    (void)state;
    ring_setup(CAP, BTS_POLICY_WRAP);
    append_seq(0, CAP + 1, CAP + 1);
    check_contents(1, CAP);
    check_acct(1, false);

    ring_setup(CAP, BTS_POLICY_STOP);
    append_seq(0, CAP + 1, CAP);
    check_contents(0, CAP);
    check_acct(1, true);

    ring_setup(CAP, BTS_POLICY_STREAM);
    append_seq(0, CAP + 1, CAP);
    check_contents(0, CAP);
    check_acct(0, false);
}

/* Head moved to slot 3 by a drain; one append then runs across the end of storage. */
static void test_wrap_inside_append(void **state)
{
    struct bts_record out[CAP];

    (void)state;
    for (size_t p = 0; p < NELEM(policies); p++) {
        ring_setup(CAP, policies[p]);
        append_seq(0, 5, 5);
        assert_int_equal(ring_drain(&ring, out, 3), 3);
        assert_int_equal(ring.head, 3);
        append_seq(5, 5, 5); /* slots 5,6,7,0,1 */
        check_contents(3, 7);
        append_seq(10, 1, 1); /* slot 2: exactly full, ends right before head */
        check_contents(3, CAP);
        check_acct(0, false);
    }
    /* Tail exactly at the end of storage: the append starts at slot 0 in one piece. */
    ring_setup(CAP, BTS_POLICY_STREAM);
    append_seq(0, CAP, CAP);
    assert_int_equal(ring_drain(&ring, out, 2), 2);
    append_seq(CAP, 2, 2);
    check_contents(2, CAP);
}

/* WRAP overwriting part of the ring while the new records themselves wrap. */
static void test_wrap_partial_overwrite(void **state)
{
    struct bts_record out[CAP];

    (void)state;
    ring_setup(CAP, BTS_POLICY_WRAP);
    append_seq(0, 6, 6);
    assert_int_equal(ring_drain(&ring, out, 2), 2); /* holds 2..5 in slots 2..5 */
    append_seq(6, 7, 7);                            /* 11 records: 3 pushed out */
    check_contents(5, CAP);
    check_acct(3, false);
    /* Again from this rotated state, one at a time past the end. */
    for (uint64_t i = 13; i < 13 + 2 * CAP + 1; i++)
        append_seq(i, 1, 1);
    check_contents(13 + CAP + 1, CAP);
    check_acct(3 + 2 * CAP + 1, false);
}

static void test_larger_than_cap(void **state)
{
    struct bts_record out[CAP];

    (void)state;
    /* WRAP keeps the newest cap, counting the ring's own and the call's own losses. */
    ring_setup(CAP, BTS_POLICY_WRAP);
    append_seq(0, 3, 3);
    append_seq(3, 20, 20);
    check_contents(23 - CAP, CAP);
    check_acct(3 + 20 - CAP, false);
    /* From a rotated head, and an append of exactly cap onto a non-empty ring. */
    assert_int_equal(ring_drain(&ring, out, 5), 5);
    append_seq(100, CAP, CAP);
    check_contents(100, CAP);
    check_acct(3 + 20 - CAP + 3, false);
    append_seq(120, 3 * CAP, 3 * CAP);
    check_contents(120 + 2 * CAP, CAP);

    ring_setup(CAP, BTS_POLICY_STOP);
    append_seq(0, 3, 3);
    append_seq(3, 20, CAP - 3);
    check_contents(0, CAP);
    check_acct(20 - (CAP - 3), true);

    ring_setup(CAP, BTS_POLICY_STREAM);
    append_seq(0, 3, 3);
    append_seq(3, 20, CAP - 3);
    check_contents(0, CAP);
    check_acct(0, false);
}

static void test_cap_one(void **state)
{
    (void)state;
    ring_setup(1, BTS_POLICY_WRAP);
    append_seq(0, 1, 1);
    append_seq(1, 1, 1);
    check_contents(1, 1);
    append_seq(2, 4, 4);
    check_contents(5, 1);
    check_acct(5, false);

    ring_setup(1, BTS_POLICY_STOP);
    append_seq(0, 3, 1);
    check_contents(0, 1);
    check_acct(2, true);

    ring_setup(1, BTS_POLICY_STREAM);
    append_seq(0, 3, 1);
    check_contents(0, 1);
    check_acct(0, false);
}

/* ================================================================== policy specifics */

static void test_stop_stays_stopped(void **state)
{
    struct bts_record out[CAP];

    (void)state;
    ring_setup(CAP, BTS_POLICY_STOP);
    append_seq(0, CAP + 2, CAP);
    check_acct(2, true);
    /* Draining makes room, but the ring must stay a gap-free prefix of the trace. */
    assert_int_equal(ring_drain(&ring, out, CAP), CAP);
    assert_memory_equal(out, &src[0], sizeof(out));
    append_seq(CAP + 2, 3, 0);
    check_contents(0, 0);
    check_acct(5, true);
    append_seq(CAP + 5, 0, 0);
    check_acct(5, true);
    /* Clearing starts a new trace and re-arms. */
    ring_clear(&ring);
    check_acct(0, false);
    append_seq(50, 4, 4);
    check_contents(50, 4);
    check_acct(0, false);
}

/* The threshold interrupt's STREAM pattern: store what fits, drain, append the rest. */
static void test_stream_never_loses(void **state)
{
    struct bts_record got[40];
    uint64_t done = 0, stored, total = 0;

    (void)state;
    ring_setup(CAP, BTS_POLICY_STREAM);
    append_seq(0, 3, 3);
    for (int round = 0; done < 30; round++) {
        assert_true(round < 30); /* every round must make progress */
        stored = ring_append(&ring, &src[3 + done], 30 - done);
        assert_true(stored <= 30 - done);
        done += stored;
        check_acct(0, false);
        total += ring_drain(&ring, &got[total], 5); /* a slow tracer */
    }
    total += ring_drain(&ring, &got[total], CAP);
    assert_int_equal(total, 33);
    assert_memory_equal(got, &src[0], 33 * sizeof(got[0]));
    check_contents(0, 0);
    check_acct(0, false);
}

/* ================================================================== readers */

static void test_drain_across_wrap(void **state)
{
    struct bts_record out[CAP + 2], poison[CAP + 2];

    (void)state;
    memset(poison, POISON, sizeof(poison));
    for (size_t p = 0; p < NELEM(policies); p++) {
        ring_setup(CAP, policies[p]);
        append_seq(0, 6, 6);
        assert_int_equal(ring_drain(&ring, out, 6), 6);
        assert_int_equal(ring.head, 0); /* emptied: back to slot 0 */
        append_seq(6, 6, 6);
        assert_int_equal(ring_drain(&ring, out, 4), 4); /* head at 4: 10,11 at 4,5 */
        append_seq(12, 6, 6);                           /* 12..17 at 6,7,0,1,2,3 */
        check_contents(10, CAP);

        memcpy(out, poison, sizeof(out));
        assert_int_equal(ring_drain(&ring, out, 0), 0);
        assert_memory_equal(out, poison, sizeof(out));
        /* 10..14 sit in slots 4..7,0: the drain crosses the wrap point. */
        assert_int_equal(ring_drain(&ring, out, 5), 5);
        assert_memory_equal(out, &src[10], 5 * sizeof(out[0]));
        assert_memory_equal(&out[5], &poison[5], sizeof(out[0]));
        check_contents(15, 3);
        /* More than held: only what is there. */
        memcpy(out, poison, sizeof(out));
        assert_int_equal(ring_drain(&ring, out, CAP + 2), 3);
        assert_memory_equal(out, &src[15], 3 * sizeof(out[0]));
        assert_memory_equal(&out[3], &poison[3], sizeof(out[0]));
        check_contents(0, 0);
        check_acct(0, false);
    }
}

static void test_get_range(void **state)
{
    struct bts_record out[CAP + 2], poison[CAP + 2], one;

    (void)state;
    memset(poison, POISON, sizeof(poison));
    ring_setup(CAP, BTS_POLICY_WRAP);
    append_seq(0, CAP, CAP);
    append_seq(CAP, 5, 5); /* holds 5..12, head at slot 5 */
    assert_int_equal(ring.head, 5);

    const struct {
        uint64_t first, n, copied;
    } cases[] = {
        {0, CAP, CAP},   /* everything, across the wrap */
        {0, 3, 3},       /* before the wrap point */
        {2, 3, 3},       /* across it */
        {3, 4, 4},       /* starting exactly at slot 0 */
        {5, 10, 3},      /* clipped at the end */
        {7, 1, 1},       /* the newest */
        {CAP - 1, 0, 0}, /* nothing asked */
        {CAP, 1, 0},     /* first == count */
        {CAP + 1, 1, 0}, /* past the end */
        {UINT64_MAX, UINT64_MAX, 0},
        {1, UINT64_MAX, CAP - 1},
    };
    for (size_t i = 0; i < NELEM(cases); i++) {
        memcpy(out, poison, sizeof(out));
        assert_int_equal(ring_get_range(&ring, cases[i].first, cases[i].n, out), cases[i].copied);
        if (cases[i].copied)
            assert_memory_equal(out, &src[5 + cases[i].first], cases[i].copied * sizeof(out[0]));
        assert_memory_equal(&out[cases[i].copied], &poison[cases[i].copied], sizeof(out[0]));
    }
    /* Reading changes nothing. */
    check_contents(5, CAP);
    check_acct(5, false);
    assert_int_equal(ring_get(&ring, UINT64_MAX, &one), E_NOENT);
}

static void test_clear(void **state)
{
    (void)state;
    for (size_t p = 0; p < NELEM(policies); p++) {
        ring_setup(CAP, policies[p]);
        append_seq(0, CAP + 3, policies[p] == BTS_POLICY_WRAP ? CAP + 3 : CAP);
        ring_clear(&ring);
        check_contents(0, 0);
        check_acct(0, false);
        assert_int_equal(ring.head, 0);
        assert_int_equal(ring.cap, CAP);
        assert_int_equal(ring.policy, policies[p]);
        assert_ptr_equal(ring.rec, &storage[1]);
        append_seq(20, CAP, CAP);
        check_contents(20, CAP);
    }
}

/* ================================================================== against a model */

/* The reference: a plain array, oldest first, changed one record at a time. */
struct model {
    struct bts_record a[MAX_CAP];
    uint64_t n, cap, lost;
    bool overflowed;
    enum bts_policy policy;
};

static void model_pop_front(struct model *m, uint64_t k)
{
    memmove(m->a, m->a + k, (m->n - k) * sizeof(m->a[0]));
    m->n -= k;
}

static uint64_t model_append(struct model *m, const struct bts_record *s, uint64_t n)
{
    uint64_t stored = 0;

    for (uint64_t i = 0; i < n; i++) {
        switch (m->policy) {
        case BTS_POLICY_WRAP:
            if (m->n == m->cap) {
                model_pop_front(m, 1);
                m->lost++;
            }
            break;
        case BTS_POLICY_STOP:
            if (m->overflowed || m->n == m->cap) {
                m->overflowed = true;
                m->lost++;
                continue;
            }
            break;
        default:
            if (m->n == m->cap)
                return stored;
            break;
        }
        m->a[m->n++] = s[i];
        stored++;
    }
    return stored;
}

/* xorshift64*: the same sequence on every host and libc. */
static uint64_t rng_state;

static uint64_t rnd(uint64_t bound)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (rng_state * 0x2545F4914F6CDD1DULL) % bound;
}

#define RANDOM_SEED 0x5eed0b75ULL
#define RANDOM_OPS  20000

static void check_against_model(const struct model *m)
{
    struct bts_record all[MAX_CAP];

    assert_int_equal(ring_count(&ring), m->n);
    assert_int_equal(ring_space(&ring), m->cap - m->n);
    assert_int_equal(ring.lost, m->lost);
    assert_int_equal(ring.overflowed, m->overflowed);
    assert_int_equal(ring_get_range(&ring, 0, MAX_CAP, all), m->n);
    if (m->n)
        assert_memory_equal(all, m->a, m->n * sizeof(all[0]));
    check_guards(m->cap);
}

static void test_random_vs_model(void **state)
{
    static const uint64_t caps[] = {1, 2, 3, 5, 8, 13, MAX_CAP};
    static struct model m;
    struct bts_record out[2 * MAX_CAP + 2], got;
    uint64_t seq = 0;

    (void)state;
    rng_state = RANDOM_SEED;
    for (size_t c = 0; c < NELEM(caps); c++) {
        for (size_t p = 0; p < NELEM(policies); p++) {
            uint64_t cap = caps[c];

            ring_setup(cap, policies[p]);
            memset(&m, 0, sizeof(m));
            m.cap = cap;
            m.policy = policies[p];
            for (int op = 0; op < RANDOM_OPS; op++) {
                uint64_t k = rnd(100), n, i, first;

                if (k < 45) { /* append: mostly small, sometimes over cap */
                    n = rnd(k < 5 ? 2 * cap + 2 : cap / 2 + 2);
                    for (i = 0; i < n; i++)
                        out[i] = rec(seq++);
                    assert_int_equal(ring_append(&ring, out, n), model_append(&m, out, n));
                } else if (k < 75) { /* drain */
                    n = rnd(cap + 2);
                    i = m.n < n ? m.n : n;
                    assert_int_equal(ring_drain(&ring, out, n), i);
                    if (i)
                        assert_memory_equal(out, m.a, i * sizeof(out[0]));
                    model_pop_front(&m, i);
                } else if (k < 87) { /* get_range */
                    first = rnd(cap + 2);
                    n = rnd(cap + 2);
                    i = first >= m.n ? 0 : (n < m.n - first ? n : m.n - first);
                    assert_int_equal(ring_get_range(&ring, first, n, out), i);
                    if (i)
                        assert_memory_equal(out, &m.a[first], i * sizeof(out[0]));
                } else if (k < 99) { /* get */
                    i = rnd(cap + 1);
                    if (i < m.n) {
                        assert_int_equal(ring_get(&ring, i, &got), 0);
                        assert_memory_equal(&got, &m.a[i], sizeof(got));
                    } else {
                        assert_int_equal(ring_get(&ring, i, &got), E_NOENT);
                    }
                } else {
                    ring_clear(&ring);
                    m.n = m.lost = 0;
                    m.overflowed = false;
                }
                check_against_model(&m);
            }
        }
    }
}

/* ================================================================== drain cost */

#define BENCH_CAP   4096 /* 96 KiB: the size of a large per-task ring, cache-resident */
#define BENCH_REPS  300
#define BENCH_RATIO 1.5

static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Minimum over many runs, so a preempted run cannot make the ratio fail. */
static void test_drain_cost(void **state)
{
    static struct bts_record bstore[BENCH_CAP], bout[BENCH_CAP];
    void *(*volatile copy)(void *, const void *, size_t) = memcpy;
    uint64_t best_drain = UINT64_MAX, best_copy = UINT64_MAX, t;
    struct bts_ring b;

    (void)state;
    for (uint64_t i = 0; i < BENCH_CAP; i++)
        bstore[i] = rec(i);
    assert_int_equal(ring_init(&b, bstore, BENCH_CAP, BTS_POLICY_STREAM), 0);
    for (int rep = 0; rep < BENCH_REPS; rep++) {
        /* A full ring with its wrap point in the middle: the two-copy case. */
        b.head = BENCH_CAP / 2;
        b.count = BENCH_CAP;
        __asm__ volatile("" ::: "memory");
        t = now_ns();
        assert_int_equal(ring_drain(&b, bout, BENCH_CAP), BENCH_CAP);
        __asm__ volatile("" ::: "memory");
        t = now_ns() - t;
        best_drain = t < best_drain ? t : best_drain;

        t = now_ns();
        copy(bout, bstore, sizeof(bstore));
        __asm__ volatile("" ::: "memory");
        t = now_ns() - t;
        best_copy = t < best_copy ? t : best_copy;
    }
    assert_memory_equal(bout, bstore, sizeof(bstore)); /* the last memcpy */
    print_message("drain %llu ns, memcpy %llu ns of %zu bytes (ratio %.2f, limit %.1f)\n",
                  (unsigned long long)best_drain, (unsigned long long)best_copy, sizeof(bstore),
                  (double)best_drain / (double)(best_copy ? best_copy : 1), BENCH_RATIO);
    assert_true((double)best_drain <= BENCH_RATIO * (double)(best_copy ? best_copy : 1));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_layout),
        cmocka_unit_test(test_timestamp_encode),
        cmocka_unit_test(test_decode_timestamps),
        cmocka_unit_test(test_decode_timestamp_cpu),
        cmocka_unit_test(test_decode_branch),
        cmocka_unit_test(test_decode_bad),
        cmocka_unit_test(test_init_errors),
        cmocka_unit_test(test_init_ok),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_exactly_full),
        cmocka_unit_test(test_one_over_after_full),
        cmocka_unit_test(test_one_over_in_one_append),
        cmocka_unit_test(test_wrap_inside_append),
        cmocka_unit_test(test_wrap_partial_overwrite),
        cmocka_unit_test(test_larger_than_cap),
        cmocka_unit_test(test_cap_one),
        cmocka_unit_test(test_stop_stays_stopped),
        cmocka_unit_test(test_stream_never_loses),
        cmocka_unit_test(test_drain_across_wrap),
        cmocka_unit_test(test_get_range),
        cmocka_unit_test(test_clear),
        cmocka_unit_test(test_random_vs_model),
        cmocka_unit_test(test_drain_cost),
    };

    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    return cmocka_run_group_tests(tests, setup_src, NULL);
}
