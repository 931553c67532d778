/*
 * ds/ring.h - the per-task trace ring.
 *
 * The "larger kernel buffer" of the design: the threshold interrupt drains the small hardware
 * buffer into it, and the tracer reads it with count/get/get_range/drain/clear. The caller
 * owns the storage (no allocation here) and serialises access: the ring has no locking of its
 * own. ds/trace.c holds the trace's lock around every use, since the threshold interrupt on the
 * tracee's CPU and the tracer on another can come at the same time (bts.smp.drain_live).
 *
 * Records are kept in chronological order, index 0 the oldest. Copies in and out are at most
 * two memcpy calls (one on each side of the wrap point): the drain path sits in the threshold
 * interrupt and is measured against a plain memcpy of the same bytes.
 */
#ifndef BTSX_DS_RING_H
#define BTSX_DS_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "ds/record.h"

/* What happens when an append does not fit (the tracer API's overflow policies). */
enum bts_policy {
    BTS_POLICY_WRAP,   /* keep the newest: overwrite the oldest (debugging) */
    BTS_POLICY_STOP,   /* keep the oldest: on full, drop everything until ring_clear() */
    BTS_POLICY_STREAM, /* lose nothing: store what fits, the caller waits for a drain */
    BTS_POLICY_COUNT
};

/* Largest capacity whose byte size fits in 64 bits. */
#define RING_CAP_MAX (UINT64_MAX / BTS_RECORD_SIZE)

struct bts_ring {
    struct bts_record *rec; /* caller's storage, cap records */
    uint64_t cap;
    uint64_t head;  /* index in rec[] of the oldest record */
    uint64_t count; /* records held */
    enum bts_policy policy;
    uint64_t lost;   /* dropped (STOP) or overwritten (WRAP); ring_append never counts STREAM
                      * losses: the threshold interrupt does, when no tracer made room */
    bool overflowed; /* STOP: a record did not fit; everything since was dropped */
};

/* Sets up an empty ring over storage[0..cap). E_INVAL for a NULL ring or storage or an
 * unknown policy, E_RANGE for cap 0, E_OVERFLOW for cap > RING_CAP_MAX; *r is untouched on
 * error. */
int ring_init(struct bts_ring *r, struct bts_record *storage, uint64_t cap, enum bts_policy p);

/* Free slots: cap - count. */
uint64_t ring_space(const struct bts_ring *r);

/* Records held. */
uint64_t ring_count(const struct bts_ring *r);

/*
 * Appends src[0..n) in order, applying the policy, and returns the number of records stored:
 *   WRAP:   stores all n (returns n) and keeps the newest cap; every record pushed out, old or
 *           from this same call, adds to lost.
 *   STOP:   stores while there is room. The first record that does not fit sets overflowed;
 *           it and every later record, in this call and all later calls, are dropped and
 *           added to lost until ring_clear(). A drain does not re-arm the ring: what it holds
 *           stays a gap-free prefix of the trace.
 *   STREAM: stores min(n, space) and returns it. Nothing is dropped or counted: the caller
 *           (the threshold interrupt) must have the tracer drain, then append src[ret..n).
 */
uint64_t ring_append(struct bts_ring *r, const struct bts_record *src, uint64_t n);

/* Copies record i (0 = oldest) to *out. E_NOENT if i >= count, E_INVAL for NULL pointers. */
int ring_get(const struct bts_ring *r, uint64_t i, struct bts_record *out);

/* Copies records first..first+n-1, oldest first, as far as they exist: min(n, count - first)
 * records, 0 if first >= count. Returns the number copied. */
uint64_t ring_get_range(const struct bts_ring *r, uint64_t first, uint64_t n,
                        struct bts_record *out);

/* Copies the oldest min(max, count) records to out and removes them; returns the number
 * copied. lost and overflowed are unchanged (see ring_append for STOP). */
uint64_t ring_drain(struct bts_ring *r, struct bts_record *out, uint64_t max);

/* Empties the ring and starts a new trace: count, lost and overflowed all go to zero, which
 * also re-arms a STOP ring. Storage, capacity and policy are kept. */
void ring_clear(struct bts_ring *r);

#endif /* BTSX_DS_RING_H */
