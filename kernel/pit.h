/* The 8254 PIT, channel 2: a fixed-frequency reference to calibrate the LAPIC timer and TSC. */
#ifndef BTSX_KERNEL_PIT_H
#define BTSX_KERNEL_PIT_H

#include <stdint.h>

#define PIT_HZ 1193182ULL

/* Starts a one-shot countdown of `ms` on channel 2 (speaker gate, speaker off). */
void pit_oneshot_start(unsigned ms);
/* True once the countdown reached zero. */
int pit_oneshot_done(void);

#endif
