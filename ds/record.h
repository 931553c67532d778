/*
 * ds/record.h - the BTS record and its decoded form.
 *
 * The hardware writes 24-byte records {from, to, flags} (SDM Vol. 3B, 64-bit DS save area
 * format; docs/hardware.md §3). btsx stores its own task arrival/departure timestamps in the
 * same format so that one buffer, one ring and one reader handle both: `from` holds
 * BTS_ESCAPE, `to` the TSC and `flags` the qualifier (the seed's design).
 *
 * Hardware `flags` are never interpreted for branches: bit 4 "predicted" is absent
 * on Core/Atom (docs/hardware.md §3), so only escape records give `flags` a meaning.
 */
#ifndef BTSX_DS_RECORD_H
#define BTSX_DS_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/errno.h"

/* The hardware BTS record (SDM Vol. 3B, 64-bit DS format): 24 bytes. */
struct bts_record {
    uint64_t from, to, flags;
};
#define BTS_RECORD_SIZE 24

_Static_assert(sizeof(struct bts_record) == BTS_RECORD_SIZE, "BTS record is 24 bytes");
_Static_assert(offsetof(struct bts_record, from) == 0x00, "BTS record: from at 0x00");
_Static_assert(offsetof(struct bts_record, to) == 0x08, "BTS record: to at 0x08");
_Static_assert(offsetof(struct bts_record, flags) == 0x10, "BTS record: flags at 0x10");

/* The escape value: non-canonical (bit 63 set, bits 62..47 clear), so no instruction can
 * ever be at it and no hardware record can carry it as its source. */
#define BTS_ESCAPE 0x8000000000000000ULL

/* The `flags` of a timestamp record: the qualifier in bits 7..0, the number of the CPU the
 * task arrived on or departed from in bits 31..8 (0, the bootstrap CPU, leaves flags the bare
 * qualifier, as before there were several CPUs), bits 63..32 zero. 0 is deliberately not a
 * qualifier, so a zeroed slot that somehow carries the escape is still rejected. */
enum bts_qualifier {
    BTS_Q_ARRIVE = 1, /* the task was switched in */
    BTS_Q_DEPART = 2, /* the task was switched out */
};
#define BTS_Q_MASK      0xFFULL
#define BTS_Q_CPU_SHIFT 8
#define BTS_Q_CPU_MAX   0xFFFFFFu

enum bts_event_kind { BTS_EV_BRANCH, BTS_EV_ARRIVE, BTS_EV_DEPART };

/* The general form of a record: a branch has from/to (tsc = 0), a timestamp has tsc
 * (from = to = 0). */
struct bts_event {
    enum bts_event_kind kind;
    uint64_t from, to;
    uint64_t tsc;
    unsigned cpu; /* a timestamp's CPU */
};

/* Decodes one raw record. A record with the escape in `from` and a qualifier other than
 * arrive/depart is E_INVAL (*out untouched), as are NULL pointers. */
static inline int bts_decode_record(const struct bts_record *r, struct bts_event *out)
{
    struct bts_event ev = {BTS_EV_BRANCH, 0, 0, 0, 0};

    if (!r || !out)
        return E_INVAL;
    if (r->from != BTS_ESCAPE) {
        ev.from = r->from;
        ev.to = r->to;
    } else if ((r->flags >> 32) == 0 && ((r->flags & BTS_Q_MASK) == BTS_Q_ARRIVE ||
                                         (r->flags & BTS_Q_MASK) == BTS_Q_DEPART)) {
        ev.kind = (r->flags & BTS_Q_MASK) == BTS_Q_ARRIVE ? BTS_EV_ARRIVE : BTS_EV_DEPART;
        ev.tsc = r->to;
        ev.cpu = (unsigned)(r->flags >> BTS_Q_CPU_SHIFT);
    } else {
        return E_INVAL;
    }
    *out = ev;
    return 0;
}

/* The record that says "the task arrived on/departed from CPU cpu at this TSC". */
static inline struct bts_record bts_timestamp_record_on(enum bts_qualifier q, uint64_t tsc,
                                                        unsigned cpu)
{
    struct bts_record r = {BTS_ESCAPE, tsc,
                           (uint64_t)q | (uint64_t)(cpu & BTS_Q_CPU_MAX) << BTS_Q_CPU_SHIFT};

    return r;
}

/* ... on the bootstrap CPU (CPU 0). */
static inline struct bts_record bts_timestamp_record(enum bts_qualifier q, uint64_t tsc)
{
    return bts_timestamp_record_on(q, tsc, 0);
}

#endif /* BTSX_DS_RECORD_H */
