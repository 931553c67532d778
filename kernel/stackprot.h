/* The stack protector's canary (-fstack-protector-strong, -mstack-protector-guard=global):
 * the compiler puts __stack_chk_guard's value between the locals and the saved registers of
 * every function with an array or an address-taken local, and calls __stack_chk_fail() when
 * the value has changed by the function's return. */
#ifndef BTSX_KERNEL_STACKPROT_H
#define BTSX_KERNEL_STACKPROT_H

#include <stdint.h>

/* Where the canary came from: "rdseed", "rdrand" or "tsc". */
enum stackprot_source { STACKPROT_RDSEED, STACKPROT_RDRAND, STACKPROT_TSC };

/* Chooses the canary. boot/entry.S calls it before kmain(), while no C frame is live: a
 * protected function that was running when the canary changed would fail its check. */
void stackprot_init(void);

enum stackprot_source stackprot_source(void);
const char *stackprot_source_name(enum stackprot_source s);

/* The compiler's call on a changed canary: reports the function whose frame was overwritten
 * and ends the innermost recovery point (the running test fails), or panics without one. */
__attribute__((noreturn)) void __stack_chk_fail(void);

extern uint64_t __stack_chk_guard;

#endif /* BTSX_KERNEL_STACKPROT_H */
