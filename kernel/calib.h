/*
 * The boot calibration's rounds (kernel/apic.c): each round measures the LAPIC timer and the
 * TSC against the PIT or HPET over several windows and keeps their medians. Under an emulator
 * whose host deschedules its threads, a whole round can come out wrong (seen under QEMU TCG with
 * four vCPUs on two host cores: the timer at 39 % of its rate in one boot, both rates a fifth
 * fast in another), so rounds repeat until two in a row agree. Pure arithmetic, tested on the
 * host (tests/unit/test_calib.c).
 */
#ifndef BTSX_KERNEL_CALIB_H
#define BTSX_KERNEL_CALIB_H

#include <stdbool.h>
#include <stdint.h>

struct calib_round {
    uint64_t timer_hz, tsc_hz;
};

/* The middle value of v[0..n) (sorts v in place; n > 0). */
uint64_t median_u64(uint64_t *v, unsigned n);
/* Whether b is within pct percent of a in both rates (a's rates the reference; 0 Hz agrees
 * with nothing). */
bool calib_agree(const struct calib_round *a, const struct calib_round *b, unsigned pct);
/* The rates to believe from rounds r[0..n) (n > 0, at most CALIB_ROUNDS_MAX): the latest round
 * that agrees with the one before it; when no two consecutive rounds agree, *agreed is false
 * and each rate is the median over all rounds. */
#define CALIB_ROUNDS_MAX 8
struct calib_round calib_choose(const struct calib_round *r, unsigned n, unsigned pct,
                                bool *agreed);

#endif
