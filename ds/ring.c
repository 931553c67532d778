/* The per-task trace ring: policy and bookkeeping in ring_append(), the copies in two helpers
 * that split a run of slots at the wrap point, so every transfer is at most two memcpy calls
 * and no per-record modulo. */
#include "ds/ring.h"

#include "kernel/errno.h"
#include "kernel/string.h"

/* Slot of logical index i (0 = oldest). head < cap and i < cap, so one subtraction replaces
 * the modulo. */
static uint64_t ring_slot(const struct bts_ring *r, uint64_t i)
{
    uint64_t s = r->head + i;

    return s >= r->cap ? s - r->cap : s;
}

/* Copies n records, starting at logical index first, out of the ring. */
static void ring_copy_out(const struct bts_ring *r, uint64_t first, uint64_t n,
                          struct bts_record *out)
{
    uint64_t s = ring_slot(r, first);
    uint64_t run = r->cap - s < n ? r->cap - s : n;

    memcpy(out, &r->rec[s], run * BTS_RECORD_SIZE);
    if (n > run)
        memcpy(out + run, &r->rec[0], (n - run) * BTS_RECORD_SIZE);
}

/* Copies n <= space records in after the newest one and counts them. */
static void ring_copy_in(struct bts_ring *r, const struct bts_record *src, uint64_t n)
{
    uint64_t s = ring_slot(r, r->count);
    uint64_t run = r->cap - s < n ? r->cap - s : n;

    memcpy(&r->rec[s], src, run * BTS_RECORD_SIZE);
    if (n > run)
        memcpy(&r->rec[0], src + run, (n - run) * BTS_RECORD_SIZE);
    r->count += n;
}

int ring_init(struct bts_ring *r, struct bts_record *storage, uint64_t cap, enum bts_policy p)
{
    if (!r || !storage)
        return E_INVAL;
    /* Compared as unsigned so that a negative value smuggled into the enum is caught too. */
    if ((unsigned int)p >= BTS_POLICY_COUNT)
        return E_INVAL;
    if (cap == 0)
        return E_RANGE;
    if (cap > RING_CAP_MAX)
        return E_OVERFLOW;
    r->rec = storage;
    r->cap = cap;
    r->policy = p;
    ring_clear(r);
    return 0;
}

uint64_t ring_space(const struct bts_ring *r)
{
    return r->cap - r->count;
}

uint64_t ring_count(const struct bts_ring *r)
{
    return r->count;
}

uint64_t ring_append(struct bts_ring *r, const struct bts_record *src, uint64_t n)
{
    uint64_t space = ring_space(r);

    if (n <= space) {
        /* The common case for every policy, except a STOP ring that already overflowed. */
        if (r->policy == BTS_POLICY_STOP && r->overflowed) {
            r->lost += n;
            return 0;
        }
        ring_copy_in(r, src, n);
        return n;
    }

    switch (r->policy) {
    case BTS_POLICY_WRAP:
        /* n - space records are pushed out, oldest first: the ring's own, then this call's
         * first ones. What survives is the newest cap of (ring, src). */
        r->lost += n - space;
        if (n >= r->cap) {
            r->head = 0;
            r->count = 0;
            ring_copy_in(r, src + (n - r->cap), r->cap);
        } else {
            uint64_t evict = n - space; /* < count, since n < cap */

            r->head = ring_slot(r, evict);
            r->count -= evict;
            ring_copy_in(r, src, n);
        }
        return n;
    case BTS_POLICY_STOP:
        if (r->overflowed)
            space = 0;
        ring_copy_in(r, src, space);
        r->overflowed = true;
        r->lost += n - space;
        return space;
    case BTS_POLICY_STREAM:
    default:
        ring_copy_in(r, src, space);
        return space;
    }
}

int ring_get(const struct bts_ring *r, uint64_t i, struct bts_record *out)
{
    if (!r || !out)
        return E_INVAL;
    if (i >= r->count)
        return E_NOENT;
    *out = r->rec[ring_slot(r, i)];
    return 0;
}

uint64_t ring_get_range(const struct bts_ring *r, uint64_t first, uint64_t n,
                        struct bts_record *out)
{
    if (first >= r->count)
        return 0;
    if (n > r->count - first)
        n = r->count - first;
    if (n)
        ring_copy_out(r, first, n, out);
    return n;
}

uint64_t ring_drain(struct bts_ring *r, struct bts_record *out, uint64_t max)
{
    uint64_t n = max < r->count ? max : r->count;

    if (!n)
        return 0;
    ring_copy_out(r, 0, n, out);
    r->count -= n;
    /* An emptied ring restarts at slot 0, so the next append is one contiguous copy. */
    r->head = r->count ? ring_slot(r, n) : 0;
    return n;
}

void ring_clear(struct bts_ring *r)
{
    r->head = 0;
    r->count = 0;
    r->lost = 0;
    r->overflowed = false;
}
