/*
 * Interrupt stubs: one per vector, each normalising the stack to struct trap_frame
 * (kernel/trap.h) and entering trap_dispatch(). All gates are interrupt gates, so IF and TF
 * are clear inside; the CPU restores both with the IRETQ at isr_iretq. #DB and NMI first go
 * through db_entry and nmi_entry, which pick the stack their handlers run on.
 */
#include "boot/asm.h"
#include "boot/layout.h"
#include "kernel/gdt.h"
#include "kernel/msr-index.h"
#include "kernel/paging.h"
#include "kernel/percpu.h"

#define STUB_SIZE 16

/* Vectors for which the CPU pushes an error code: #DF #TS #NP #SS #GP #PF #AC #CP. */
#define HAS_ERROR(v) ((v) == 8 || ((v) >= 10 && (v) <= 14) || (v) == 17 || (v) == 21)

    .text
    .balign STUB_SIZE
ENTRY(isr_stubs)
    vec = 0
    .rept 256
    .balign STUB_SIZE
    .if HAS_ERROR(vec)
        nop; nop                        /* every entry has the same size */
    .else
        push $0
    .endif
    push $vec
    .if vec == 1
        jmp db_entry
    .elseif vec == 2
        jmp nmi_entry
    .else
        jmp isr_common
    .endif
    vec = vec + 1
    .endr
LABEL(isr_stubs_end)
END(isr_stubs)

/* Completes struct trap_frame over the vector and error code, calls fn(frame), undoes it.
 * With gs=1 it also makes sure the kernel's GS is loaded while fn runs (kernel/percpu.h): if
 * IA32_GS_BASE is not one of the per-CPU structures, the interrupted code ran with the user's
 * GS (CPL 3, or the few kernel instructions next to SWAPGS), and the two are swapped around
 * the call. The decision reads the MSR rather than the saved CS because an NMI or #DB can
 * land in those few instructions at CPL 0. R12 remembers it across the call (callee-saved). */
.macro CALL_WITH_FRAME fn, gs=0
    cld
    push %rax
    push %rbx
    push %rcx
    push %rdx
    push %rsi
    push %rdi
    push %rbp
    push %r8
    push %r9
    push %r10
    push %r11
    push %r12
    push %r13
    push %r14
    push %r15
    .if \gs
    xor %r12d, %r12d
    mov $MSR_GS_BASE, %ecx
    rdmsr
    shl $32, %rdx
    or %rax, %rdx
    lea percpu_all(%rip), %rax
    sub %rax, %rdx
    cmp $(SMP_MAX_CPUS * PERCPU_SIZE), %rdx
    jb 7f
    swapgs
    mov $1, %r12d
7:
    .endif
    mov %rsp, %rdi
    mov %rsp, %rbx                      /* callee-saved: the frame, across the call */
    and $-16, %rsp                      /* ABI alignment, whatever the interrupted stack was */
    call \fn
    mov %rbx, %rsp
    .if \gs
    test %r12d, %r12d
    jz 8f
    swapgs
8:
    .endif
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %r11
    pop %r10
    pop %r9
    pop %r8
    pop %rbp
    pop %rdi
    pop %rsi
    pop %rdx
    pop %rcx
    pop %rbx
    pop %rax
    add $16, %rsp                       /* vector and error code */
.endm

LOCAL_ENTRY(isr_common)
    CALL_WITH_FRAME trap_dispatch, gs=1
LABEL(isr_iretq)
    iretq
END(isr_common)

/*
 * #DB and NMI arrive on IST stacks of their own, because both can be taken where the kernel
 * has no usable stack: the SYSCALL window, at CPL 0 with RSP still the user's. A single step
 * there comes from Bochs, which decides from TF before IA32_FMASK cleared it (kernel/trap.c);
 * an NMI can land there on any CPU. Pushing the frame there writes the user's stack, or
 * faults on it under SMAP and ends in #DF.
 *
 * The handlers must not stay on the IST stack, though: the stream policy suspends a task
 * inside the threshold interrupt (a #DB of the BTS model, or the PMI itself with pmi=nmi) and
 * runs another one, whose own #DB or NMI would reuse the IST stack and overwrite the
 * suspended frame. So each entry decides here, with IF and TF clear and (for NMI) NMIs
 * blocked, before anything can switch (IST_MOVE):
 *   - from CPL 3: the frame moves to the task's RSP0 stack, where the CPU would have put it
 *     without IST;
 *   - from CPL 0 on a kernel-half stack: it moves below the interrupted RSP (aligned down to
 *     16 as the CPU does; the kernel has no red zone). That stack may itself be an IST stack
 *     (an NMI in the #DB entry, a #DB or NMI nested in a handler that runs on one): the frame
 *     stays off the words in use either way, and trap_can_block() tells the handler that it
 *     is on a shared stack and must not wait;
 *   - from CPL 0 on a user-half stack (the SYSCALL window): the vector's hazard path.
 * After a move, a #DB or NMI taken by the next task starts on an empty IST stack again, and
 * the moved frame returns through isr_iretq like any other.
 */
#define IST_WORDS 9                     /* RCX, RAX, vector, error code and the CPU's 5 words */
#define IST_CS    (5 * 8)
#define IST_RSP   (7 * 8)

/* Picks the stack as above and enters isr_common there; jumps to \hazard (RAX and RCX still
 * pushed) for the SYSCALL window. \move is where a hazard path may come back with the new
 * top in RAX. */
.macro IST_MOVE hazard, move
    push %rax
    push %rcx
    testb $3, IST_CS(%rsp)
    jnz 1f
    mov IST_RSP(%rsp), %rax
    mov $USER_BASE, %rcx
    cmp %rcx, %rax
    ja \hazard                          /* CPL 0 on a stack that is not the kernel's */
    and $-16, %rax
    jmp \move
1:  mov (IST_WORDS * 8)(%rsp), %rax     /* this CPU's TSS, right above the frame (kernel/gdt.c) */
    mov TSS_RSP0_OFFSET(%rax), %rax
\move:
    sub $(IST_WORDS * 8), %rax
    .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8
    mov \i * 8(%rsp), %rcx
    mov %rcx, \i * 8(%rax)
    .endr
    mov %rax, %rsp
    pop %rcx
    pop %rax
    jmp isr_common
.endm

/* #DB in the SYSCALL window: trap_db_hazard() handles it right on the IST stack; it never
 * schedules, so the IST stack is free again when it returns. */
LOCAL_ENTRY(db_entry)
    IST_MOVE db_hazard, db_move
END(db_entry)

LOCAL_ENTRY(db_hazard)
    pop %rcx
    pop %rax
    CALL_WITH_FRAME trap_db_hazard
    iretq
END(db_hazard)

/*
 * An NMI in the SYSCALL window is handled on the NMI IST stack, but not where it landed: the
 * frame moves NMI_LANDING bytes down and the handler runs below that, through isr_common like
 * any NMI. The handler sees that it is on a shared stack (trap_can_block() is false): the PMI
 * then drains without waiting (ds/pmi.c), and the watchdog's ways of ending a test never
 * return to the interrupted context (tests/framework.c).
 *
 * Nested NMIs. The CPU blocks NMIs from delivery until the next IRET. An IRET inside a
 * handler (the return from a #PF, from a #GP that an exception fixup handled, from a #DB)
 * unblocks them early, and the next NMI lands at the top of the NMI IST stack while the first
 * handler is still running: the classic hazard, where the second frame overwrites the
 * first's. Here it cannot: a first NMI that was moved left nothing on the IST stack, and a
 * hazard NMI's frame and its handler's stack lie below the landing zone; the nested NMI sees
 * a kernel-half RSP and moves below it. What this relies on: the entry itself raises nothing
 * before its move (it only reads the TSS and copies nine words to a present stack), so no IRET
 * can unblock NMIs while the landing zone is in use; and a nested NMI that finds itself on an
 * IST stack does not wait (trap_can_block()).
 */
#define NMI_LANDING 128                 /* at least IST_WORDS * 8, a multiple of 16 */
LOCAL_ENTRY(nmi_entry)
    IST_MOVE nmi_hazard, nmi_move
END(nmi_entry)

LOCAL_ENTRY(nmi_hazard)
    lea (IST_WORDS * 8)(%rsp), %rax     /* the top of this CPU's NMI IST stack */
    sub $NMI_LANDING, %rax
    jmp nmi_move
END(nmi_hazard)

