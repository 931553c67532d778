/* DS-area arithmetic: building a BTS buffer description, reading the index back without
 * trusting it, reading a circular buffer in order, and the memory a trace costs.
 * The rules are docs/hardware.md §3 and §4 (SDM Vol. 3B, "BTS and DS Save Area"). */
#include "ds/layout.h"

#include <stdbool.h>

#include "kernel/errno.h"
#include "kernel/string.h"

/* Bits 63..DS_VADDR_BITS-1 of a canonical address are all equal (SDM Vol. 1 3.3.7.1). */
static bool vaddr_canonical(uint64_t a)
{
    uint64_t top = a >> (DS_VADDR_BITS - 1);

    return top == 0 || top == UINT64_MAX >> (DS_VADDR_BITS - 1);
}

/* The threshold's offset from base, checked for the mode; *off is set only on success. */
static int bts_thresh_offset(uint64_t base, uint64_t size, uint64_t thresh_bytes,
                             enum bts_buf_mode mode, uint64_t *off)
{
    uint64_t t = thresh_bytes, end;

    if (mode == BTS_MODE_CIRCULAR && t == BTS_THRESH_CIRCULAR) {
        if (__builtin_add_overflow(size, BTS_RECORD_SIZE, &t))
            return E_OVERFLOW;
    } else if (mode == BTS_MODE_INTERRUPT && t == BTS_THRESH_CIRCULAR) {
        /* "Beyond the maximum" asked of an interrupting buffer: a range error, not the
         * misalignment the sentinel's value would otherwise report. */
        return E_RANGE;
    }
    if (t % BTS_RECORD_SIZE)
        return E_ALIGN;
    if (mode == BTS_MODE_INTERRUPT) {
        /* Below one record the PMI fires at once; at the maximum the few records written
         * before the PMI is taken would wrap over the oldest ones. */
        if (t < BTS_RECORD_SIZE || t >= size)
            return E_RANGE;
    } else {
        /* BTINT=0 alone does not stop the interrupt: index must never reach it. */
        if (t <= size)
            return E_RANGE;
        if (__builtin_add_overflow(base, t, &end))
            return E_OVERFLOW;
    }
    *off = t;
    return 0;
}

int ds_layout_bts(struct ds_area *ds, uint64_t base, uint64_t size_bytes, uint64_t thresh_bytes,
                  enum bts_buf_mode mode)
{
    uint64_t abs_max, last, off;
    int err;

    if (!ds || !base || (unsigned int)mode >= BTS_MODE_COUNT)
        return E_INVAL;
    if (base % BTS_BASE_ALIGN)
        return E_ALIGN;
    /* Whole records only: a partial last record would be overrun (erratum "P79", processor
     * unconfirmed: docs/hardware.md §9, open question O10). */
    if (size_bytes % BTS_RECORD_SIZE)
        return E_ALIGN;
    if (size_bytes / BTS_RECORD_SIZE < BTS_MIN_RECORDS)
        return E_RANGE;
    if (__builtin_add_overflow(base, size_bytes, &abs_max))
        return E_OVERFLOW;
    /* Every byte the CPU may write must be canonical: both ends, in the same half. */
    last = abs_max - 1;
    if (!vaddr_canonical(base) || !vaddr_canonical(last) || (base ^ last) >> 63)
        return E_OVERFLOW;
    err = bts_thresh_offset(base, size_bytes, thresh_bytes, mode, &off);
    if (err)
        return err;

    ds->bts_base = base;
    ds->bts_index = base;
    ds->bts_abs_max = abs_max;
    ds->bts_thresh = base + off;
    return 0;
}

uint64_t ds_default_thresh_records(uint64_t n)
{
    /* Linux's BTS driver leaves max/16 below the maximum (docs/hardware.md §4). */
    uint64_t headroom = n / 16 > BTS_PMI_HEADROOM ? n / 16 : BTS_PMI_HEADROOM;

    if (n < BTS_MIN_RECORDS)
        return 0;
    return n > headroom ? n - headroom : 1;
}

/* Index position in records from base, checked against [base, abs_max]. */
static int bts_index_records(const struct ds_area *ds, uint64_t *pos)
{
    uint64_t base = ds->bts_base, index = ds->bts_index;

    if (index < base || index > ds->bts_abs_max || (index - base) % BTS_RECORD_SIZE)
        return E_RANGE;
    *pos = (index - base) / BTS_RECORD_SIZE;
    return 0;
}

int ds_pending(const struct ds_area *ds, uint64_t *n)
{
    if (!ds || !n)
        return E_INVAL;
    return bts_index_records(ds, n);
}

static bool bts_record_written(const struct bts_record *r)
{
    return r->from | r->to | r->flags;
}

int64_t ds_read_circular(const struct ds_area *ds, struct bts_record *out, uint64_t max)
{
    const struct bts_record *buf;
    uint64_t base, nrec, pos, oldest, held, n, run;
    int err;

    if (!ds || (!out && max))
        return E_INVAL;
    /* The whole geometry is checked before a single record is read through base. */
    base = ds->bts_base;
    if (!base || base % BTS_BASE_ALIGN || ds->bts_abs_max < base ||
        (ds->bts_abs_max - base) % BTS_RECORD_SIZE)
        return E_RANGE;
    nrec = (ds->bts_abs_max - base) / BTS_RECORD_SIZE;
    if (nrec < BTS_MIN_RECORDS)
        return E_RANGE;
    err = bts_index_records(ds, &pos);
    if (err)
        return err;

    buf = (const struct bts_record *)(uintptr_t)base;
    /* The CPU writes at index and then wraps it, so index == abs_max means "next at base". */
    oldest = pos == nrec ? 0 : pos;
    if (bts_record_written(&buf[oldest])) {
        held = nrec;
    } else {
        held = pos;
        oldest = 0;
    }

    n = max < held ? max : held;
    run = nrec - oldest < n ? nrec - oldest : n;
    if (run)
        memcpy(out, &buf[oldest], run * BTS_RECORD_SIZE);
    if (n > run)
        memcpy(out + run, &buf[0], (n - run) * BTS_RECORD_SIZE);
    return (int64_t)n;
}

/* records * BTS_RECORD_SIZE rounded up to whole quota pages. */
static int quota_pages_bytes(uint64_t records, uint64_t *bytes)
{
    uint64_t b;

    if (__builtin_mul_overflow(records, BTS_RECORD_SIZE, &b) ||
        __builtin_add_overflow(b, DS_QUOTA_PAGE - 1, &b))
        return E_OVERFLOW;
    *bytes = b & ~(DS_QUOTA_PAGE - 1);
    return 0;
}

int ds_trace_bytes(uint64_t hw_records, uint64_t ring_records, uint64_t *bytes)
{
    /* The DS area itself: 0x60 bytes, alone on its page (it must not share one with code,
     * and every address space maps it). */
    uint64_t total = (sizeof(struct ds_area) + DS_QUOTA_PAGE - 1) & ~(DS_QUOTA_PAGE - 1);
    uint64_t hw, ring;

    if (!bytes)
        return E_INVAL;
    if (quota_pages_bytes(hw_records, &hw) || quota_pages_bytes(ring_records, &ring) ||
        __builtin_add_overflow(total, hw, &total) || __builtin_add_overflow(total, ring, &total))
        return E_OVERFLOW;
    *bytes = total;
    return 0;
}
