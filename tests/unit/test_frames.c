/* Host tests of kernel/frames.c: map validation, init rounding with overlapping/unsorted and
 * reserved ranges, frame 0, clipping, single and contiguous allocation, exhaustion, and frees
 * that must fail without changing anything. A randomised test checks init against a
 * frame-by-frame reference model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define UNIT_TIMEOUT_S 60

#include "kernel/frames.h"

#define KiB           1024ull
#define MiB           (1024ull * KiB)
#define NELEM(a)      (sizeof(a) / sizeof((a)[0]))
#define WORDS         16 /* 1024 frames: 4 MiB managed */
#define BITMAP_POISON 0xa5

static uint64_t bitmap[WORDS];
static struct frame_alloc fa;

static bool frame_is_free(const struct frame_alloc *a, uint64_t f)
{
    return !(a->bitmap[f / 64] >> (f % 64) & 1);
}

/* ----------------------------------------------------------------- memmap_check */

static void test_memmap_check(void **state)
{
    const struct mem_range good[] = {{0, 640 * KiB}, {MiB, 3 * MiB}, {0, 4096}};
    const struct mem_range zero[] = {{0, 4096}, {MiB, 0}};
    const struct mem_range wrap[] = {{UINT64_MAX - 4095, 4096}};
    const struct mem_range top[] = {{UINT64_MAX - 4095, 4095}};
    const struct mem_range sum_wraps[] = {{0, UINT64_MAX / 2 + 1}, {0, UINT64_MAX / 2 + 1}};
    uint64_t total = 12345;

    (void)state;
    assert_int_equal(memmap_check(good, NELEM(good), &total), 0);
    assert_int_equal(total, 640 * KiB + 3 * MiB + 4096);
    assert_int_equal(memmap_check(good, NELEM(good), NULL), 0);
    assert_int_equal(memmap_check(top, 1, &total), 0);

    total = 777;
    assert_int_equal(memmap_check(good, 0, &total), E_NOENT);
    assert_int_equal(memmap_check(NULL, 3, &total), E_NOENT);
    assert_int_equal(memmap_check(zero, NELEM(zero), &total), E_INVAL);
    assert_int_equal(memmap_check(wrap, NELEM(wrap), &total), E_OVERFLOW);
    assert_int_equal(memmap_check(sum_wraps, NELEM(sum_wraps), &total), E_OVERFLOW);
    assert_int_equal(total, 777); /* untouched on error */
    /* The three failure kinds are told apart. */
    assert_int_not_equal(E_NOENT, E_INVAL);
    assert_int_not_equal(E_NOENT, E_OVERFLOW);
    assert_int_not_equal(E_INVAL, E_OVERFLOW);
}

/* ----------------------------------------------------------------- init */

static void test_init_pc_map(void **state)
{
    /* Classic PC layout: low RAM below the VGA hole, then RAM from 1 MiB. */
    const struct mem_range usable[] = {{0, 640 * KiB}, {MiB, 3 * MiB}};

    (void)state;
    assert_int_equal(frames_init(&fa, bitmap, WORDS, usable, NELEM(usable), NULL, 0), 0);
    assert_int_equal(fa.nframes, WORDS * 64);
    /* frames 1..159 (frame 0 excluded) and 256..1023 */
    assert_int_equal(frames_free_count(&fa), 159 + 768);
    assert_false(frame_is_free(&fa, 0));
    assert_true(frame_is_free(&fa, 1));
    assert_true(frame_is_free(&fa, 159));
    assert_false(frame_is_free(&fa, 160));
    assert_false(frame_is_free(&fa, 255));
    assert_true(frame_is_free(&fa, 256));
    assert_int_equal(fa.unmanaged_bytes, 0);
}

static void test_init_rounding(void **state)
{
    /* Usable rounds inward: [0x1001, 0x4001) holds whole frames 2 and 3 only. */
    const struct mem_range usable[] = {{0x1001, 0x3000}, {0x10000, 0x10000}};
    /* Reserved rounds outward: two bytes straddling 0x16000 take frames 0x15 and 0x16. */
    const struct mem_range reserved[] = {{0x15fff, 2}, {0x18000, 0}};

    (void)state;
    assert_int_equal(
        frames_init(&fa, bitmap, WORDS, usable, NELEM(usable), reserved, NELEM(reserved)), 0);
    assert_false(frame_is_free(&fa, 1));
    assert_true(frame_is_free(&fa, 2));
    assert_true(frame_is_free(&fa, 3));
    assert_false(frame_is_free(&fa, 4));
    assert_true(frame_is_free(&fa, 0x14));
    assert_false(frame_is_free(&fa, 0x15));
    assert_false(frame_is_free(&fa, 0x16));
    assert_true(frame_is_free(&fa, 0x17));
    assert_true(frame_is_free(&fa, 0x18)); /* zero-length reservation takes nothing */
    assert_int_equal(frames_free_count(&fa), 2 + 16 - 2);
}

static void test_init_overlap_unsorted(void **state)
{
    /* Unsorted, overlapping, duplicated: the union [0x80000, 0x300000) is usable. */
    const struct mem_range usable[] = {
        {0x100000, 0x200000},
        {0x80000, 0x100000},
        {0x100000, 0x200000},
        {0x90000, 0x1000},
    };
    /* Reserved, also overlapping each other and partly outside usable memory. */
    const struct mem_range reserved[] = {
        {0x200000, 0x10000},
        {0x205000, 0x20000},
        {0x2ff000, 0x10000},
        {0x70000, 0x20000},
    };
    uint64_t expect = 0;

    (void)state;
    assert_int_equal(
        frames_init(&fa, bitmap, WORDS, usable, NELEM(usable), reserved, NELEM(reserved)), 0);
    for (uint64_t f = 0; f < fa.nframes; f++) {
        bool free_ = f >= 0x90 && f < 0x300 && !(f >= 0x200 && f < 0x225) && f != 0x2ff;
        assert_int_equal(frame_is_free(&fa, f), free_);
        expect += free_;
    }
    assert_int_equal(frames_free_count(&fa), expect);
}

static void test_init_frame0_never(void **state)
{
    const struct mem_range usable[] = {{0, 16 * 4096}};
    uint64_t got, n = 0;

    (void)state;
    assert_int_equal(frames_init(&fa, bitmap, WORDS, usable, 1, NULL, 0), 0);
    assert_int_equal(frames_free_count(&fa), 15);
    while ((got = frames_alloc(&fa)) != 0) {
        assert_int_not_equal(got, 0);
        n++;
    }
    assert_int_equal(n, 15);
    /* Frame 0 cannot be slipped in through free() either. */
    assert_int_equal(frames_free(&fa, 0, 1), E_RANGE);
    assert_int_equal(frames_free_count(&fa), 0);
    /* ... nor through a contiguous request aligned to it. */
    assert_int_equal(frames_free(&fa, 4096, 15), 0);
    assert_int_equal(frames_alloc_contig(&fa, 16, 1), 0);
    assert_int_equal(frames_alloc_contig(&fa, 8, 8), 8 * 4096);
}

static void test_init_clipping(void **state)
{
    /* One bitmap word manages 64 frames = 256 KiB; the rest must be reported. */
    const struct mem_range usable[] = {
        {0, MiB},               /* 768 KiB of it above the limit */
        {512 * KiB, 256 * KiB}, /* overlaps the first: counted once */
        {4 * MiB, MiB},         /* entirely above */
        {0x3f000, 0x1000},      /* entirely below */
    };

    (void)state;
    bitmap[1] = 0;
    assert_int_equal(frames_init(&fa, bitmap, 1, usable, NELEM(usable), NULL, 0), 0);
    assert_int_equal(fa.nframes, 64);
    assert_int_equal(frames_free_count(&fa), 63);
    assert_int_equal(fa.unmanaged_above, 256 * KiB);
    assert_int_equal(fa.unmanaged_bytes, 768 * KiB + MiB);
    /* Bits beyond the managed word are never touched. */
    assert_int_equal(bitmap[1], 0);
}

static void test_init_errors(void **state)
{
    const struct mem_range usable[] = {{0, MiB}};
    const struct mem_range wrap[] = {{UINT64_MAX - 10, 20}};
    struct frame_alloc before;

    (void)state;
    memset(&fa, BITMAP_POISON, sizeof(fa));
    memcpy(&before, &fa, sizeof(fa));
    memset(bitmap, BITMAP_POISON, sizeof(bitmap));
    assert_int_equal(frames_init(&fa, NULL, WORDS, usable, 1, NULL, 0), E_INVAL);
    assert_int_equal(frames_init(&fa, bitmap, 0, usable, 1, NULL, 0), E_INVAL);
    assert_int_equal(frames_init(NULL, bitmap, WORDS, usable, 1, NULL, 0), E_INVAL);
    assert_int_equal(frames_init(&fa, bitmap, WORDS, NULL, 1, NULL, 0), E_INVAL);
    assert_int_equal(frames_init(&fa, bitmap, WORDS, usable, 1, NULL, 1), E_INVAL);
    assert_int_equal(frames_init(&fa, bitmap, WORDS, wrap, 1, NULL, 0), E_OVERFLOW);
    assert_int_equal(frames_init(&fa, bitmap, WORDS, usable, 1, wrap, 1), E_OVERFLOW);
    assert_memory_equal(&fa, &before, sizeof(fa));
    for (size_t i = 0; i < WORDS; i++)
        assert_int_equal(bitmap[i], 0xa5a5a5a5a5a5a5a5ull);

    /* An empty map is not an init error (memmap_check is the gate): nothing is free. */
    assert_int_equal(frames_init(&fa, bitmap, WORDS, NULL, 0, NULL, 0), 0);
    assert_int_equal(frames_free_count(&fa), 0);
    assert_int_equal(frames_alloc(&fa), 0);
    assert_int_equal(frames_alloc_contig(&fa, 1, 1), 0);
}

/* ----------------------------------------------------------------- allocation */

static void test_alloc_exhaust_and_reuse(void **state)
{
    const struct mem_range usable[] = {{0, 4 * MiB}};
    static bool seen[WORDS * 64];
    uint64_t got, n = 0;

    (void)state;
    memset(seen, 0, sizeof(seen));
    assert_int_equal(frames_init(&fa, bitmap, WORDS, usable, 1, NULL, 0), 0);
    while ((got = frames_alloc(&fa)) != 0) {
        assert_int_equal(got % 4096, 0);
        assert_true(got / 4096 < fa.nframes);
        assert_false(seen[got / 4096]); /* never handed out twice */
        seen[got / 4096] = true;
        n++;
        assert_int_equal(frames_free_count(&fa), 1023 - n);
    }
    assert_int_equal(n, 1023);
    assert_int_equal(frames_alloc(&fa), 0);
    assert_int_equal(frames_alloc(&fa), 0);

    /* A freed frame is found again, wherever the hint is. */
    assert_int_equal(frames_free(&fa, 0x200000, 1), 0);
    assert_int_equal(frames_alloc(&fa), 0x200000);
    assert_int_equal(frames_free(&fa, 0x1000, 1), 0);
    assert_int_equal(frames_free(&fa, 0x3ff000, 1), 0);
    got = frames_alloc(&fa);
    assert_true(got == 0x1000 || got == 0x3ff000);
    assert_int_not_equal(frames_alloc(&fa), 0);
    assert_int_equal(frames_alloc(&fa), 0);
}

static void test_alloc_skips_reserved(void **state)
{
    const struct mem_range usable[] = {{0, 64 * 4096}};
    const struct mem_range reserved[] = {{4096, 30 * 4096}};
    uint64_t got;

    (void)state;
    assert_int_equal(frames_init(&fa, bitmap, WORDS, usable, 1, reserved, 1), 0);
    assert_int_equal(frames_free_count(&fa), 33);
    while ((got = frames_alloc(&fa)) != 0)
        assert_true(got >= 31 * 4096 && got < 64 * 4096);
}

static void test_contig(void **state)
{
    const struct mem_range usable[] = {{0, 4 * MiB}};
    /* Holes that break up the low frames. */
    const struct mem_range reserved[] = {{5 * 4096, 4096}, {14 * 4096, 4096}};
    uint64_t a, b, c, free0;

    (void)state;
    assert_int_equal(frames_init(&fa, bitmap, WORDS, usable, 1, reserved, NELEM(reserved)), 0);
    free0 = frames_free_count(&fa);

    /* 4 frames, no alignment: 1..4 is the lowest fit. */
    a = frames_alloc_contig(&fa, 4, 1);
    assert_int_equal(a, 1 * 4096);
    /* 8 frames: 6..13 fits between the holes. */
    b = frames_alloc_contig(&fa, 8, 1);
    assert_int_equal(b, 6 * 4096);
    /* 4 frames aligned to 16 KiB: 16..19 (15 is free but misaligned for the start). */
    c = frames_alloc_contig(&fa, 4, 4);
    assert_int_equal(c, 16 * 4096);
    assert_int_equal(frames_free_count(&fa), free0 - 16);
    for (uint64_t f = 16; f < 20; f++)
        assert_false(frame_is_free(&fa, f));
    assert_true(frame_is_free(&fa, 15));

    /* 2 MiB aligned, 512 frames: only 512..1023 qualifies. */
    assert_int_equal(frames_alloc_contig(&fa, 512, 512), 2 * MiB);
    /* A second one cannot fit, and a failed request takes nothing. */
    free0 = frames_free_count(&fa);
    assert_int_equal(frames_alloc_contig(&fa, 512, 512), 0);
    assert_int_equal(frames_alloc_contig(&fa, 500, 1), 0);
    assert_int_equal(frames_free_count(&fa), free0);

    /* Degenerate requests. */
    assert_int_equal(frames_alloc_contig(&fa, 0, 1), 0);
    assert_int_equal(frames_alloc_contig(&fa, 1, 0), 0);
    assert_int_equal(frames_alloc_contig(&fa, UINT64_MAX, 1), 0);
    assert_int_equal(frames_alloc_contig(&fa, 1, UINT64_MAX), 0);
    assert_int_equal(frames_alloc_contig(&fa, 1, 1ull << 40), 0);
    assert_int_equal(frames_free_count(&fa), free0);

    /* Free the aligned block and get it back; free the rest. */
    assert_int_equal(frames_free(&fa, c, 4), 0);
    assert_int_equal(frames_alloc_contig(&fa, 4, 4), c);
    assert_int_equal(frames_free(&fa, a, 4), 0);
    assert_int_equal(frames_free(&fa, b, 8), 0);
    assert_int_equal(frames_free(&fa, c, 4), 0);
    assert_int_equal(frames_free(&fa, 2 * MiB, 512), 0);
    assert_int_equal(frames_free_count(&fa), 1023 - 2);
}

static void test_contig_exhaustion(void **state)
{
    const struct mem_range usable[] = {{0, 64 * 4096}};
    uint64_t n = 0;

    (void)state;
    assert_int_equal(frames_init(&fa, bitmap, WORDS, usable, 1, NULL, 0), 0);
    /* 63 free frames (1..63) give 15 blocks of 4 aligned to 4 (4..63), then nothing. */
    while (frames_alloc_contig(&fa, 4, 4))
        n++;
    assert_int_equal(n, 15);
    assert_int_equal(frames_free_count(&fa), 3);
    assert_int_equal(frames_alloc_contig(&fa, 3, 1), 4096);
    assert_int_equal(frames_alloc(&fa), 0);
}

/* ----------------------------------------------------------------- free errors */

static void test_free_errors(void **state)
{
    const struct mem_range usable[] = {{0, 4 * MiB}};
    uint64_t snapshot[WORDS];
    uint64_t a, free0;

    (void)state;
    assert_int_equal(frames_init(&fa, bitmap, WORDS, usable, 1, NULL, 0), 0);
    a = frames_alloc_contig(&fa, 8, 1);
    assert_int_not_equal(a, 0);
    free0 = frames_free_count(&fa);
    memcpy(snapshot, bitmap, sizeof(bitmap));

    assert_int_equal(frames_free(&fa, a + 1, 1), E_ALIGN);
    assert_int_equal(frames_free(&fa, a + 2048, 1), E_ALIGN);
    assert_int_equal(frames_free(&fa, a, 0), E_INVAL);
    assert_int_equal(frames_free(&fa, 4 * MiB, 1), E_RANGE);
    assert_int_equal(frames_free(&fa, 4 * MiB - 4096, 2), E_RANGE);
    assert_int_equal(frames_free(&fa, a, UINT64_MAX), E_RANGE);
    assert_int_equal(frames_free(&fa, UINT64_MAX & ~0xfffull, 1), E_RANGE);
    assert_int_equal(frames_free(&fa, 0, 1), E_RANGE);
    /* 9 frames from a: the last one was never allocated. Nothing may be freed. */
    assert_int_equal(frames_free(&fa, a, 9), E_STATE);
    assert_int_equal(frames_free_count(&fa), free0);
    assert_memory_equal(bitmap, snapshot, sizeof(bitmap));

    /* Double free, whole and partial. */
    assert_int_equal(frames_free(&fa, a, 8), 0);
    memcpy(snapshot, bitmap, sizeof(bitmap));
    assert_int_equal(frames_free(&fa, a, 8), E_STATE);
    assert_int_equal(frames_free(&fa, a + 4096, 1), E_STATE);
    assert_int_equal(frames_free_count(&fa), free0 + 8);
    assert_memory_equal(bitmap, snapshot, sizeof(bitmap));
}

/* ----------------------------------------------------------------- randomised model check */

#define RANDOM_ROUNDS     300
#define RANDOM_SPAN       (6 * MiB) /* past the 4 MiB managed, to exercise clipping */
#define RANDOM_MAX_RANGES 8

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
    /* xorshift64: deterministic, so a failure reproduces. */
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

static void random_ranges(struct mem_range *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        r[i].base = rnd() % RANDOM_SPAN;
        r[i].len = rnd() % (RANDOM_SPAN / 4);
        /* Half of them frame-aligned, the rest at arbitrary bytes. */
        if (rnd() & 1) {
            r[i].base &= ~0xfffull;
            r[i].len &= ~0xfffull;
        }
    }
}

/* The rule of frames.h, one frame at a time: free iff not frame 0, wholly inside one usable
 * range, and touching no reserved byte. */
static bool model_free(uint64_t f, const struct mem_range *u, size_t nu, const struct mem_range *r,
                       size_t nr)
{
    uint64_t lo = f * 4096, hi = lo + 4096;
    bool inside = false;

    if (f == 0)
        return false;
    for (size_t i = 0; i < nu; i++)
        inside |= u[i].base <= lo && hi <= u[i].base + u[i].len;
    for (size_t i = 0; i < nr; i++)
        if (r[i].len && r[i].base < hi && lo < r[i].base + r[i].len)
            return false;
    return inside;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Independent reference for the clipped-away amount: cut the line at every range boundary
 * and add each elementary piece above limit that some range covers. */
static uint64_t union_above_model(const struct mem_range *u, size_t nu, uint64_t limit)
{
    uint64_t cuts[2 * RANDOM_MAX_RANGES + 1], total = 0;
    size_t n = 0;

    cuts[n++] = limit;
    for (size_t i = 0; i < nu; i++) {
        cuts[n++] = u[i].base;
        cuts[n++] = u[i].base + u[i].len;
    }
    qsort(cuts, n, sizeof(cuts[0]), cmp_u64);
    for (size_t j = 0; j + 1 < n; j++) {
        uint64_t lo = cuts[j], hi = cuts[j + 1];
        if (lo < limit || lo == hi)
            continue;
        for (size_t i = 0; i < nu; i++)
            if (u[i].base <= lo && hi <= u[i].base + u[i].len) {
                total += hi - lo;
                break;
            }
    }
    return total;
}

static void test_random_against_model(void **state)
{
    (void)state;
    for (int round = 0; round < RANDOM_ROUNDS; round++) {
        struct mem_range u[RANDOM_MAX_RANGES], r[RANDOM_MAX_RANGES];
        size_t nu = 1 + rnd() % RANDOM_MAX_RANGES, nr = rnd() % RANDOM_MAX_RANGES;
        uint64_t expect = 0, got;

        random_ranges(u, nu);
        random_ranges(r, nr);
        assert_int_equal(frames_init(&fa, bitmap, WORDS, u, nu, r, nr), 0);
        for (uint64_t f = 0; f < fa.nframes; f++) {
            bool m = model_free(f, u, nu, r, nr);
            if (m != frame_is_free(&fa, f))
                fail_msg("round %d frame %llu: model %d", round, (unsigned long long)f, m);
            expect += m;
        }
        assert_int_equal(frames_free_count(&fa), expect);
        assert_int_equal(fa.unmanaged_bytes, union_above_model(u, nu, fa.unmanaged_above));
        /* Everything free is allocatable, exactly once, and then nothing is. */
        while ((got = frames_alloc(&fa)) != 0) {
            assert_true(model_free(got / 4096, u, nu, r, nr));
            expect--;
        }
        assert_int_equal(expect, 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memmap_check),         cmocka_unit_test(test_init_pc_map),
        cmocka_unit_test(test_init_rounding),        cmocka_unit_test(test_init_overlap_unsorted),
        cmocka_unit_test(test_init_frame0_never),    cmocka_unit_test(test_init_clipping),
        cmocka_unit_test(test_init_errors),          cmocka_unit_test(test_alloc_exhaust_and_reuse),
        cmocka_unit_test(test_alloc_skips_reserved), cmocka_unit_test(test_contig),
        cmocka_unit_test(test_contig_exhaustion),    cmocka_unit_test(test_free_errors),
        cmocka_unit_test(test_random_against_model),
    };
    /* A runaway loop in the code under test must fail the run, not hang `make unit`. */
    alarm(UNIT_TIMEOUT_S);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
