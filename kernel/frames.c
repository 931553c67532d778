/* Physical frame allocator: bitmap bookkeeping only, see frames.h for the rules. */
#include "kernel/frames.h"

#include <stdbool.h>

#define FRAME_OFFSET_MASK       (FRAME_SIZE - 1)
#define WORD_ALL_USED           (~0ull)
#define FRAME_NONE              UINT64_MAX /* "no such frame" from the bitmap scans */
#define FRAME_FIRST_ALLOCATABLE 1          /* frame 0 is never handed out */

/* base + len without wrapping; false if the range runs past 2^64. */
static bool range_end(const struct mem_range *r, uint64_t *end)
{
    if (r->len > UINT64_MAX - r->base)
        return false;
    *end = r->base + r->len;
    return true;
}

static uint64_t frame_round_up(uint64_t addr)
{
    return (addr >> FRAME_SHIFT) + ((addr & FRAME_OFFSET_MASK) != 0);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* Bits [first, end) of the bitmap set (used) or cleared (free), a word at a time. */
static void bits_fill(uint64_t *bm, uint64_t first, uint64_t end, bool used)
{
    while (first < end) {
        uint64_t bit = first % FRAMES_PER_WORD;
        uint64_t n = min_u64(FRAMES_PER_WORD - bit, end - first);
        uint64_t mask = (n == FRAMES_PER_WORD ? WORD_ALL_USED : (1ull << n) - 1) << bit;

        if (used)
            bm[first / FRAMES_PER_WORD] |= mask;
        else
            bm[first / FRAMES_PER_WORD] &= ~mask;
        first += n;
    }
}

/* First frame in [from, to) whose bit equals want_used, or FRAME_NONE. */
static uint64_t bits_find(const uint64_t *bm, uint64_t from, uint64_t to, bool want_used)
{
    while (from < to) {
        uint64_t bit = from % FRAMES_PER_WORD;
        uint64_t w = bm[from / FRAMES_PER_WORD];

        if (!want_used)
            w = ~w;
        /* Ignore the bits below 'from' in this word. */
        w &= WORD_ALL_USED << bit;
        if (w) {
            uint64_t f = from - bit + (uint64_t)__builtin_ctzll(w);
            return f < to ? f : FRAME_NONE;
        }
        from += FRAMES_PER_WORD - bit;
    }
    return FRAME_NONE;
}

/* Open-coded: __builtin_popcountll becomes a libgcc call without -mpopcnt. */
static uint64_t popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (x * 0x0101010101010101ull) >> 56;
}

/* Bytes of usable memory at or above limit, each byte counted once however the ranges
 * overlap. Sweeps a cursor upward: extend it through the ranges covering it, else jump to the
 * next range start. O(n^2), and firmware maps are a few dozen entries. */
static uint64_t union_above(const struct mem_range *r, size_t n, uint64_t limit)
{
    uint64_t cursor = limit, total = 0;

    for (;;) {
        uint64_t best_end = cursor, next = UINT64_MAX;
        bool found_next = false;

        for (size_t i = 0; i < n; i++) {
            uint64_t end = r[i].base + r[i].len; /* validated: no wrap */
            if (r[i].base <= cursor && end > best_end)
                best_end = end;
            if (r[i].len && r[i].base > cursor && r[i].base < next) {
                next = r[i].base;
                found_next = true;
            }
        }
        if (best_end > cursor) {
            total += best_end - cursor;
            cursor = best_end;
        } else if (found_next) {
            cursor = next;
        } else {
            return total;
        }
    }
}

int frames_init(struct frame_alloc *fa, uint64_t *bitmap, size_t bitmap_words,
                const struct mem_range *usable, size_t nusable, const struct mem_range *reserved,
                size_t nreserved)
{
    uint64_t nframes, end;

    if (!fa || !bitmap || bitmap_words == 0)
        return E_INVAL;
    if ((nusable && !usable) || (nreserved && !reserved))
        return E_INVAL;
    /* Validate everything before writing anything. */
    for (size_t i = 0; i < nusable; i++)
        if (!range_end(&usable[i], &end))
            return E_OVERFLOW;
    for (size_t i = 0; i < nreserved; i++)
        if (!range_end(&reserved[i], &end))
            return E_OVERFLOW;

    nframes = bitmap_words > FRAMES_MAX_FRAMES / FRAMES_PER_WORD
                  ? FRAMES_MAX_FRAMES
                  : (uint64_t)bitmap_words * FRAMES_PER_WORD;
    fa->bitmap = bitmap;
    fa->nframes = nframes;
    fa->hint = FRAME_FIRST_ALLOCATABLE;
    bits_fill(bitmap, 0, nframes, true);

    /* Usable: only whole frames inside the range (base rounded up, end rounded down). */
    for (size_t i = 0; i < nusable; i++) {
        uint64_t first = frame_round_up(usable[i].base);
        uint64_t last = min_u64((usable[i].base + usable[i].len) >> FRAME_SHIFT, nframes);
        if (first < last)
            bits_fill(bitmap, first, last, false);
    }
    /* Reserved: every frame the range touches (base rounded down, end rounded up). */
    for (size_t i = 0; i < nreserved; i++) {
        uint64_t first = reserved[i].base >> FRAME_SHIFT;
        uint64_t last = min_u64(frame_round_up(reserved[i].base + reserved[i].len), nframes);
        if (reserved[i].len && first < last)
            bits_fill(bitmap, first, last, true);
    }
    bits_fill(bitmap, 0, FRAME_FIRST_ALLOCATABLE, true);

    fa->free = nframes;
    for (uint64_t w = 0; w < nframes / FRAMES_PER_WORD; w++)
        fa->free -= popcount64(bitmap[w]);

    /* The whole address space is covered when nframes hits the maximum. */
    fa->unmanaged_above = nframes == FRAMES_MAX_FRAMES ? UINT64_MAX : nframes << FRAME_SHIFT;
    fa->unmanaged_bytes = union_above(usable, nusable, fa->unmanaged_above);
    return 0;
}

static void take(struct frame_alloc *fa, uint64_t first, uint64_t n)
{
    bits_fill(fa->bitmap, first, first + n, true);
    fa->free -= n;
}

uint64_t frames_alloc(struct frame_alloc *fa)
{
    uint64_t f;

    if (fa->free == 0)
        return 0;
    /* Next-fit from the hint, then wrap around to the bottom. */
    f = bits_find(fa->bitmap, fa->hint, fa->nframes, false);
    if (f == FRAME_NONE)
        f = bits_find(fa->bitmap, FRAME_FIRST_ALLOCATABLE, fa->hint, false);
    if (f == FRAME_NONE)
        return 0;
    take(fa, f, 1);
    fa->hint = f + 1 < fa->nframes ? f + 1 : FRAME_FIRST_ALLOCATABLE;
    return f << FRAME_SHIFT;
}

/* Smallest multiple of align that is >= f, or FRAME_NONE if that wraps. */
static uint64_t align_frame_up(uint64_t f, uint64_t align)
{
    uint64_t rem = f % align;

    if (rem == 0)
        return f;
    if (align - rem > UINT64_MAX - f)
        return FRAME_NONE;
    return f + (align - rem);
}

uint64_t frames_alloc_contig(struct frame_alloc *fa, uint64_t n, uint64_t align_frames)
{
    uint64_t cand;

    if (n == 0 || align_frames == 0 || n > fa->free)
        return 0;
    cand = align_frame_up(FRAME_FIRST_ALLOCATABLE, align_frames);
    /* First fit: on a used frame inside the window, restart at the next free frame. */
    while (cand != FRAME_NONE && cand < fa->nframes && n <= fa->nframes - cand) {
        uint64_t used = bits_find(fa->bitmap, cand, cand + n, true);
        uint64_t next_free;

        if (used == FRAME_NONE) {
            take(fa, cand, n);
            return cand << FRAME_SHIFT;
        }
        next_free = bits_find(fa->bitmap, used + 1, fa->nframes, false);
        if (next_free == FRAME_NONE)
            return 0;
        cand = align_frame_up(next_free, align_frames);
    }
    return 0;
}

int frames_free(struct frame_alloc *fa, uint64_t phys, uint64_t n)
{
    uint64_t first = phys >> FRAME_SHIFT;

    if (phys & FRAME_OFFSET_MASK)
        return E_ALIGN;
    if (n == 0)
        return E_INVAL;
    if (first < FRAME_FIRST_ALLOCATABLE || first >= fa->nframes || n > fa->nframes - first)
        return E_RANGE;
    if (bits_find(fa->bitmap, first, first + n, false) != FRAME_NONE)
        return E_STATE;
    bits_fill(fa->bitmap, first, first + n, false);
    fa->free += n;
    /* Prefer reusing low frames: keeps the allocation pattern compact and predictable. */
    if (first < fa->hint)
        fa->hint = first;
    return 0;
}

uint64_t frames_free_count(const struct frame_alloc *fa)
{
    return fa->free;
}

int memmap_check(const struct mem_range *usable, size_t n, uint64_t *total)
{
    uint64_t sum = 0, end;

    if (!usable || n == 0)
        return E_NOENT;
    for (size_t i = 0; i < n; i++) {
        if (usable[i].len == 0)
            return E_INVAL;
        if (!range_end(&usable[i], &end))
            return E_OVERFLOW;
        if (usable[i].len > UINT64_MAX - sum)
            return E_OVERFLOW;
        sum += usable[i].len;
    }
    if (total)
        *total = sum;
    return 0;
}
