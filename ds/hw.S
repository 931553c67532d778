/* The hardware backend: IA32_DEBUGCTL and IA32_DS_AREA, as they are. */
#include "kernel/msr-index.h"

    .text
    .globl bts_hw_read_debugctl
bts_hw_read_debugctl:
    mov $MSR_IA32_DEBUGCTL, %ecx
    rdmsr
    shl $32, %rdx
    or %rdx, %rax
    ret

/* Branch-free up to the WRMSR, so that the first record after enabling is the RET below. */
    .globl bts_hw_write_debugctl, bts_hw_write_ret
bts_hw_write_debugctl:
    mov %edi, %eax
    mov %rdi, %rdx
    shr $32, %rdx
    mov $MSR_IA32_DEBUGCTL, %ecx
    wrmsr
bts_hw_write_ret:
    ret

    .globl bts_hw_read_ds_area
bts_hw_read_ds_area:
    mov $MSR_IA32_DS_AREA, %ecx
    rdmsr
    shl $32, %rdx
    or %rdx, %rax
    ret

    .globl bts_hw_write_ds_area
bts_hw_write_ds_area:
    mov %edi, %eax
    mov %rdi, %rdx
    shr $32, %rdx
    mov $MSR_IA32_DS_AREA, %ecx
    wrmsr
    ret
