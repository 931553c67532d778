/* The hardware probe (ds/probe.c), for ds_init(): the rest of the kernel asks ds/bts.h. */
#ifndef BTSX_DS_PROBE_H
#define BTSX_DS_PROBE_H

#include <stdbool.h>

#define BTS_REASON_LEN 160

struct debugctl_layout;

/* Probes hardware BTS with the CPU's DEBUGCTL layout (NULL: the table knows none, which fails
 * the probe). Interrupts must be off. Returns whether it passed; *why is the step that failed,
 * or what passed, and stays valid (bts_hw_probe_passed() returns the same). */
bool bts_probe_hw(const struct debugctl_layout *layout, const char **why);

#endif
