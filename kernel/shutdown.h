/* Ending the run: isa-debug-exit under QEMU, otherwise halt (or reboot) with the verdict shown. */
#ifndef BTSX_KERNEL_SHUTDOWN_H
#define BTSX_KERNEL_SHUTDOWN_H

/* The exit codes the run ends with: QEMU turns code c into status (c << 1) | 1. */
enum exit_code {
    EXIT_CODE_PASS = 0,
    EXIT_CODE_FAILURE = 1,
    EXIT_CODE_NO_TESTS = 2, /* no test ran, or a bad command line */
};

/* exit=: how machine_exit() ends the run. Auto is debugexit under QEMU, halt elsewhere. */
enum exit_method { EXIT_AUTO, EXIT_DEBUGEXIT, EXIT_HALT, EXIT_REBOOT };

#define ISA_DEBUG_EXIT_PORT 0xF4
#define BOCHS_SHUTDOWN_PORT 0x8900

__attribute__((noreturn)) void machine_exit(enum exit_code code);

#endif
