/*
 * bts_call_traced(debugctl, fn, arg, write_debugctl): enable, call fn(arg), disable, with a
 * fixed shape. On either backend the trace of one run is exactly
 *     {write_ret -> bts_run_enabled}  the RET that ends the enabling write
 *     {bts_run_call -> fn}            the call into the code under test
 *     ...the code under test...
 *     {fn's RET -> bts_run_returned}
 *     {bts_run_disable -> write_debugctl}   the last record before recording stops
 * (plus interrupt records if any arrive), which is what the tests expect from the labels.
 */
#include "boot/asm.h"

    .section .text.traced, "ax"         /* the records the tests look at all touch this range */
ENTRY(bts_call_traced)
    push %rbx
    push %r12
    push %r13
    mov %rsi, %rbx                      /* fn */
    mov %rdx, %r12                      /* arg */
    mov %rcx, %r13                      /* the backend's write_debugctl */
    call *%r13                          /* recording starts inside */
LABEL(bts_run_enabled)
    mov %r12, %rdi
LABEL(bts_run_call)
    call *%rbx
LABEL(bts_run_returned)
    xor %edi, %edi
LABEL(bts_run_disable)
    call *%r13                          /* recording stops inside */
    pop %r13
    pop %r12
    pop %rbx
    ret
END(bts_call_traced)

/* The probe's known branch (ds/probe.c): one taken JMP whose record must appear. */
ENTRY(bts_probe_code)
LABEL(bts_probe_jmp)
    jmp bts_probe_target
    ud2
LABEL(bts_probe_target)
    ret
END(bts_probe_code)
