/* The hardware backend: IA32_DEBUGCTL and IA32_DS_AREA, as they are. */
#include "boot/asm.h"
#include "kernel/msr-index.h"

    .text
ENTRY(bts_hw_read_debugctl)
    mov $MSR_IA32_DEBUGCTL, %ecx
    rdmsr
    shl $32, %rdx
    or %rdx, %rax
    ret
END(bts_hw_read_debugctl)

/* Branch-free up to the WRMSR, so that the first record after enabling is the RET below. */
ENTRY(bts_hw_write_debugctl)
    mov %edi, %eax
    mov %rdi, %rdx
    shr $32, %rdx
    mov $MSR_IA32_DEBUGCTL, %ecx
    wrmsr
LABEL(bts_hw_write_ret)
    ret
END(bts_hw_write_debugctl)

ENTRY(bts_hw_read_ds_area)
    mov $MSR_IA32_DS_AREA, %ecx
    rdmsr
    shl $32, %rdx
    or %rdx, %rax
    ret
END(bts_hw_read_ds_area)

ENTRY(bts_hw_write_ds_area)
    mov %edi, %eax
    mov %rdi, %rdx
    shr $32, %rdx
    mov $MSR_IA32_DS_AREA, %ecx
    wrmsr
    ret
END(bts_hw_write_ds_area)
