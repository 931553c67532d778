/* Entering user mode (CPL 3). */
#ifndef BTSX_KERNEL_USER_H
#define BTSX_KERNEL_USER_H

#include <stdint.h>

/* IRETQ to CPL 3 at rip with rsp, interrupts on, RDI = arg. Does not return: user code comes
 * back through a trap (a fault ends in the current recovery point) or a system call. */
__attribute__((noreturn)) void user_enter(uint64_t rip, uint64_t rsp, uint64_t arg);

#endif
