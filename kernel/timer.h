/*
 * Software timers on the one LAPIC one-shot timer: a few slots, each a TSC deadline and a
 * callback run in the timer interrupt. The test watchdog, the timer tests and sleeping
 * tasks (task_sleep_ms()) share the hardware this way.
 */
#ifndef BTSX_KERNEL_TIMER_H
#define BTSX_KERNEL_TIMER_H

#include <stdint.h>

#include "kernel/trap.h"

#define TIMER_SLOTS 8

typedef void (*timer_fn_t)(struct trap_frame *f, void *arg);

/* Arms a timer `us` from now; returns its id (>= 0) or E_BUSY when every slot is taken. */
int timer_start_us(uint64_t us, timer_fn_t fn, void *arg);
/* Disarms a timer; harmless if it already fired. */
void timer_cancel(int id);
void timer_cancel_all(void);

#endif
