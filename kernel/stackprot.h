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

/* The compiler's call on a changed canary. Every protected function calls it, so it calls
 * no other C file (tools/check-loops.sh): it hands the address of the failed check to
 * stackprot_fail_hook (kernel/stackprot_report.c installs the reporter) and, with none, ends
 * in an invalid-opcode exception. */
__attribute__((noreturn)) void __stack_chk_fail(void);
extern void (*stackprot_fail_hook)(uint64_t at);

extern uint64_t __stack_chk_guard;

#endif /* BTSX_KERNEL_STACKPROT_H */
