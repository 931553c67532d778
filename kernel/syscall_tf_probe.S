/*
 * syscall_tf_probe(): a SYSCALL at CPL 0 that starts with TF set by the POPFQ before it, with
 * IA32_LSTAR at syscall_tf_probe_entry and IA32_FMASK clearing TF (trap_probe_syscall_tf()
 * sets both up). Hardware raises no #DB; an emulator that takes TF from before the mask
 * raises one at syscall_tf_probe_entry, on this (kernel) stack. The entry returns to the
 * caller with the saved flags less TF. Its own file: kernel/trap.c calls it, and the entry
 * code in kernel/isr.S calls kernel/trap.c.
 */
#include "boot/asm.h"
#include "kernel/msr-index.h"

    .text
ENTRY(syscall_tf_probe)
    pushfq
    orq $RFLAGS_TF, (%rsp)
    popfq
    syscall
    ret
END(syscall_tf_probe)
ENTRY(syscall_tf_probe_entry)
    andq $~RFLAGS_TF, %r11
    push %r11
    popfq
    jmp *%rcx
END(syscall_tf_probe_entry)
