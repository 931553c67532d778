/*
 * Interrupt stubs: one per vector, each normalising the stack to struct trap_frame
 * (kernel/trap.h) and entering trap_dispatch(). All gates are interrupt gates, so IF and TF
 * are clear inside; the CPU restores both with the IRETQ at isr_iretq. #DB first goes through
 * db_entry, which picks the stack its handler runs on.
 */
#include "boot/asm.h"
#include "kernel/gdt.h"
#include "kernel/paging.h"

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
    .else
        jmp isr_common
    .endif
    vec = vec + 1
    .endr
LABEL(isr_stubs_end)
END(isr_stubs)

/* Completes struct trap_frame over the vector and error code, calls fn(frame), undoes it. */
.macro CALL_WITH_FRAME fn
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
    mov %rsp, %rdi
    mov %rsp, %rbx                      /* callee-saved: the frame, across the call */
    and $-16, %rsp                      /* ABI alignment, whatever the interrupted stack was */
    call \fn
    mov %rbx, %rsp
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
    CALL_WITH_FRAME trap_dispatch
LABEL(isr_iretq)
    iretq
END(isr_common)

/*
 * #DB arrives on an IST stack of its own, because it can be taken where the kernel has no
 * usable stack: a single step after SYSCALL, at CPL 0 with RSP still the user's, which Bochs
 * raises although IA32_FMASK cleared TF (kernel/trap.c). Pushing the frame there
 * writes the user's stack, or faults on it under SMAP and ends in #DF.
 *
 * The handler must not stay on the IST stack, though. The BTS model single-steps with TF and
 * runs in the #DB handler for every instruction; it may raise the threshold interrupt there
 * (delivered as an NMI, it arrives inside the handler), and the stream policy then suspends
 * the task inside that handler and runs another one, whose own #DB would reuse the IST stack and overwrite the suspended
 * frame. So the entry decides here, with IF and TF clear, before anything can switch:
 *   - from CPL 3: the frame moves to the task's RSP0 stack, where the CPU would have put it
 *     without IST;
 *   - from CPL 0 on a kernel stack (below USER_BASE): it moves below the interrupted RSP
 *     (aligned down to 16 as the CPU does; the kernel has no red zone);
 *   - from CPL 0 on any other stack (the SYSCALL window): trap_db_hazard() handles it right
 *     here; it never schedules, so the IST stack is free again when it returns.
 * After a move, a #DB nested in the handler or taken by the next task starts on an empty
 * IST stack again, and the moved frame returns through isr_iretq like any other. (An NMI
 * taken while this entry or trap_db_hazard() runs is on the NMI's own IST stack; the model
 * raises its NMIs only from its handler, after the move.)
 */
#define DB_WORDS 9                      /* RCX, RAX, vector, error code and the CPU's 5 words */
#define DB_CS    (5 * 8)
#define DB_RSP   (7 * 8)
LOCAL_ENTRY(db_entry)
    push %rax
    push %rcx
    testb $3, DB_CS(%rsp)
    jnz 1f
    mov DB_RSP(%rsp), %rax
    mov $USER_BASE, %rcx
    cmp %rcx, %rax
    ja db_hazard                        /* CPL 0 on a stack that is not the kernel's */
    and $-16, %rax
    jmp 2f
1:  mov kernel_tss + TSS_RSP0_OFFSET(%rip), %rax
2:  sub $(DB_WORDS * 8), %rax
    .irp i, 0, 1, 2, 3, 4, 5, 6, 7, 8
    mov \i * 8(%rsp), %rcx
    mov %rcx, \i * 8(%rax)
    .endr
    mov %rax, %rsp
    pop %rcx
    pop %rax
    jmp isr_common
END(db_entry)

LOCAL_ENTRY(db_hazard)
    pop %rcx
    pop %rax
    CALL_WITH_FRAME trap_db_hazard
    iretq
END(db_hazard)
