/* Entering user mode (CPL 3). */
#ifndef BTSX_KERNEL_USER_H
#define BTSX_KERNEL_USER_H

#include <stdint.h>

/* IRETQ to CPL 3 at rip with rsp, interrupts on, RDI = arg, RSI = arg2. Does not return:
 * user code comes back through a trap (a fault ends in the current recovery point, or the
 * scheduler's task) or a system call. */
__attribute__((noreturn)) void user_enter(uint64_t rip, uint64_t rsp, uint64_t arg, uint64_t arg2);
/* Its IRETQ: the source of the first record of a traced user task. */
extern const char user_enter_iretq[];

#endif
