/*
 * The tests' log of context switches, kept through the scheduler's switch tracepoint
 * (sched_switch_probe_add()): which task left, which arrived, and the TSC, taken before the
 * DS hook's own timestamps. With no buffer it only counts.
 */
#ifndef BTSX_TESTS_SWITCHLOG_H
#define BTSX_TESTS_SWITCHLOG_H

#include <stdint.h>

#include "sched/sched.h"

struct switch_log_entry {
    unsigned from, to;
    uint64_t tsc;
};
#define SWITCH_LOG_LEN 1024

struct switch_log {
    struct sched_switch_probe probe;
    struct switch_log_entry *buf; /* NULL: count only */
    unsigned cap, len;            /* entries kept: the first cap switches */
    uint64_t switches;            /* every switch, kept or not */
};

/* Starts (or restarts) logging into buf[cap]. Keep l static: a test cut short by its
 * watchdog leaves the probe registered until the next start or stop. */
void switch_log_start(struct switch_log *l, struct switch_log_entry *buf, unsigned cap);
/* Stops logging; returns the number of entries kept. */
unsigned switch_log_stop(struct switch_log *l);

#endif
