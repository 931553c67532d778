/* The 8254 PIT, channel 2: a fixed-frequency reference to calibrate the LAPIC timer and TSC. */
#ifndef BTSX_KERNEL_PIT_H
#define BTSX_KERNEL_PIT_H

#include <stdbool.h>
#include <stdint.h>

#define PIT_HZ 1193182ULL

/* Starts a one-shot countdown of `ms` on channel 2 (speaker gate, speaker off). */
void pit_oneshot_start(unsigned ms);
/* True once the countdown reached zero. */
int pit_oneshot_done(void);
/* True when channel 2 counts a short one-shot down within a bounded time: newer platforms
 * may leave the PIT out (or gate it off). */
bool pit_present(void);

#endif
