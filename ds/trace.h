/*
 * The trace code's interface to the rest of ds/ (ds/trace.c): ds_init() sets up the idle DS
 * area, the threshold interrupt (ds/pmi.c) hands the loaded trace its records. The tracer API
 * and the context-switch hook are in ds/bts.h.
 */
#ifndef BTSX_DS_TRACE_H
#define BTSX_DS_TRACE_H

#include "ds/bts.h"

/* Allocates a CPU's idle DS area, its untraced state: a valid DS area with a minimal buffer,
 * loaded whenever no trace is. E_NOMEM if there is no memory for it (then BTS cannot be used). */
int ds_idle_init(struct percpu *cpu);
/* Loads the running CPU's idle DS area into the backend chosen at boot. */
void ds_idle_load(void);

/* The threshold interrupt's work on the loaded trace, with recording off: if its index has
 * reached the threshold ("the only surefire way of knowing this PMI is ours"), the PMI is
 * counted and the hardware buffer drained under the trace's policy (a full stream ring waits
 * for the tracer only if can_wait: the interrupt's frame is on the task's own stack);
 * otherwise it is counted as spurious on this CPU, if count_spurious (an NMI that another
 * source claimed is not a spurious PMI). Returns the loaded trace (NULL: none, or no backend
 * usable). */
struct bts_trace *bts_threshold(bool can_wait, bool count_spurious);

#endif
