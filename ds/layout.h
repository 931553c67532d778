/*
 * ds/layout.h - DS management area arithmetic and validation (docs/hardware.md §3, §4).
 *
 * Pure arithmetic on the 64-bit DS area: no MSR access, no allocation. The rules it enforces
 * are the ones the hardware does not check for itself (a bad layout makes the CPU write past
 * the buffer or interrupt forever rather than fault), so the driver builds every BTS buffer
 * description through ds_layout_bts() and never trusts an index it reads back without
 * ds_pending().
 */
#ifndef BTSX_DS_LAYOUT_H
#define BTSX_DS_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "ds/record.h"
#include "kernel/paging.h"

/* The 64-bit DS management area (docs/hardware.md §3, from the SDM's 64-bit DS format). */
struct ds_area {
    uint64_t bts_base;    /* first record */
    uint64_t bts_index;   /* next record to write */
    uint64_t bts_abs_max; /* one byte past the last record: base + N * 24 exactly */
    uint64_t bts_thresh;  /* PMI when index reaches it (BTINT=1) */
    uint64_t pebs_base, pebs_index, pebs_abs_max, pebs_thresh;
    uint64_t pebs_reset[4]; /* PEBS counter reset values */
};

_Static_assert(offsetof(struct ds_area, bts_base) == 0x00, "DS: BTS base at 0x00");
_Static_assert(offsetof(struct ds_area, bts_index) == 0x08, "DS: BTS index at 0x08");
_Static_assert(offsetof(struct ds_area, bts_abs_max) == 0x10, "DS: BTS abs max at 0x10");
_Static_assert(offsetof(struct ds_area, bts_thresh) == 0x18, "DS: BTS threshold at 0x18");
_Static_assert(offsetof(struct ds_area, pebs_base) == 0x20, "DS: PEBS base at 0x20");
_Static_assert(offsetof(struct ds_area, pebs_thresh) == 0x38, "DS: PEBS threshold at 0x38");
_Static_assert(offsetof(struct ds_area, pebs_reset) == 0x40, "DS: PEBS resets at 0x40");

/* docs/hardware.md §3: a BTS buffer holds at least two records. */
#define BTS_MIN_RECORDS 2
/* Buffer base alignment: the fields and records are read as uint64_t. */
#define BTS_BASE_ALIGN  8
/* Linear addresses are 48-bit sign-extended (4-level paging; btsx does not enable LA57). */
#define DS_VADDR_BITS   48
/* The quota counts whole pages for each piece of a trace: what the frame allocator hands out. */
#define DS_QUOTA_PAGE   PAGE_SIZE

enum bts_buf_mode {
    BTS_MODE_CIRCULAR,  /* BTINT=0, threshold beyond the maximum */
    BTS_MODE_INTERRUPT, /* BTINT=1 */
    BTS_MODE_COUNT
};

/* thresh_bytes meaning "absolute maximum + 1 record" in circular mode (Linux's choice):
 * BTINT=0 alone does not stop the interrupt, the threshold must be out of reach too. */
#define BTS_THRESH_CIRCULAR UINT64_MAX

/*
 * Validates a raw BTS buffer description and fills the four BTS fields of ds (index = base;
 * the PEBS fields are left alone). thresh_bytes is the threshold's offset from base. On
 * error ds is untouched; the checks run in this order and each failure has its own code:
 *   E_INVAL     ds NULL, base 0, or an unknown mode
 *   E_ALIGN     base not BTS_BASE_ALIGN-aligned; size_bytes not a whole number of records
 *               (the SDM's advice; an erratum the project lists as P79, whose processor is
 *               not confirmed, has the CPU write past such a buffer: docs/hardware.md §9);
 *               threshold not on a record boundary from base
 *   E_RANGE     fewer than BTS_MIN_RECORDS records; interrupt mode with a threshold under one
 *               record from base or at/after the absolute maximum (the PMI arrives a few
 *               records late, so it needs headroom); circular mode with a threshold at or
 *               below the absolute maximum
 *   E_OVERFLOW  base + size wraps, the buffer is not entirely canonical (it would cross or
 *               sit in the non-canonical hole), or base + threshold wraps
 */
int ds_layout_bts(struct ds_area *ds, uint64_t base, uint64_t size_bytes, uint64_t thresh_bytes,
                  enum bts_buf_mode mode);

/* The most records the hardware profile (bts_profile(), ds/bts.h) lets the PMI arrive after
 * the record that reached the threshold. The SDM gives no figure (docs/hardware.md §5, O2);
 * this is btsx's assumption, and the default threshold leaves room for it. */
#define BTS_HW_SKID_MAX          8
/* The most records the way into the threshold interrupt's handler may store before bts_pmi()
 * clears TR, when CPL 0 is recorded: the entry record, the stub's JMP, the CALL into
 * trap_dispatch(), its hook and handler calls and the branches they take first (compiled C:
 * no exact figure; the SDM gives none either, docs/hardware.md §7). btsx's assumption. */
#define BTS_HW_PMI_ENTRY_RECORDS 16
/* Headroom for a late PMI: the skid, then the records of the way into the handler. */
#define BTS_PMI_HEADROOM         (BTS_HW_SKID_MAX + BTS_HW_PMI_ENTRY_RECORDS)

/* Default interrupt threshold, in records from base, for a buffer of n records: leaves 1/16
 * of the buffer as headroom, as Linux does, but at least BTS_PMI_HEADROOM records, and the
 * threshold at least 1 record (a buffer of BTS_PMI_HEADROOM records or fewer has less
 * headroom). 0 when n < BTS_MIN_RECORDS (ds_layout_bts rejects that). */
uint64_t ds_default_thresh_records(uint64_t n);

/* Records currently in the hardware buffer, [base, index). E_RANGE if index is outside
 * [base, abs_max] or not on a record boundary: a corrupted area must not be trusted.
 * E_INVAL for NULL pointers. *n is written only on success. */
int ds_pending(const struct ds_area *ds, uint64_t *n);

/*
 * Reads a circular buffer in chronological order. The caller zeroes the buffer before
 * enabling, so a non-zero record in the slot at index means the buffer has wrapped and the
 * oldest record is there (index == abs_max counts as the slot at base); otherwise the
 * records are [base, index). Copies the oldest min(max, held) records into out and returns
 * that count, or E_RANGE for a corrupted area (as ds_pending, a zero or misaligned base, or
 * a size that is not a whole number of at least BTS_MIN_RECORDS records), E_INVAL for a NULL
 * ds or a NULL out with max > 0.
 */
int64_t ds_read_circular(const struct ds_area *ds, struct bts_record *out, uint64_t max);

/* Memory quota: bytes a trace of hw_records + ring_records needs, each of the DS area page,
 * the hardware buffer and the ring rounded up to whole DS_QUOTA_PAGE pages (0 records take
 * no page). E_OVERFLOW if that does not fit in 64 bits, E_INVAL for a NULL bytes; *bytes is
 * written only on success. */
int ds_trace_bytes(uint64_t hw_records, uint64_t ring_records, uint64_t *bytes);

#endif /* BTSX_DS_LAYOUT_H */
