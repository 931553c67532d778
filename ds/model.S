/*
 * The model's register writes. DEBUGCTL is stored first, so that turning recording off stops
 * records at once; then ds/model.c decides what RFLAGS.TF must become. When it turns TF on
 * here, the instruction after POPFQ (the RET at bts_model_write_ret) is the first one stepped:
 * like WRMSR;RET on hardware, the first record is that RET.
 */
#include "boot/asm.h"
#include "ds/model_tf.h"
#include "kernel/msr-index.h"
#include "kernel/percpu.h"

    .text
ENTRY(bts_model_write_debugctl)
    mov %gs:PERCPU_MODEL_OFFSET, %rax   /* this CPU's model state: DEBUGCTL first */
    mov %rdi, (%rax)
    push %rbx                           /* keeps the stack 16-byte aligned for the call */
    call bts_model_debugctl_changed
    pop %rbx
    cmp $TF_SET, %eax
    je 1f
    cmp $TF_CLEAR, %eax
    je 2f
    ret                                 /* inside a trap handler: the exit hook sets TF */
1:  pushfq
    orq $RFLAGS_TF, (%rsp)
    popfq
LABEL(bts_model_write_ret)
    ret
2:  pushfq
    andq $~RFLAGS_TF, (%rsp)
    popfq
    ret
END(bts_model_write_debugctl)

/* Turns single-stepping on for the code after the call; the model ignores this RET itself
 * (ds/model.c clears prev_valid first): it is the model's machinery, not traced code. */
    .section .text.model_hooks, "ax"
ENTRY(bts_model_tf_on)
    pushfq
    orq $RFLAGS_TF, (%rsp)
    popfq
    ret
END(bts_model_tf_on)

ENTRY(bts_model_tf_off)
    pushfq
    andq $~RFLAGS_TF, (%rsp)
    popfq
    ret
END(bts_model_tf_off)
