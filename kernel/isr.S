/*
 * Interrupt stubs: one per vector, each normalising the stack to struct trap_frame
 * (kernel/trap.h) and entering trap_dispatch(). All gates are interrupt gates, so IF and TF
 * are clear inside; the CPU restores both with the IRETQ at isr_iretq.
 */
#define STUB_SIZE 16

/* Vectors for which the CPU pushes an error code: #DF #TS #NP #SS #GP #PF #AC #CP. */
#define HAS_ERROR(v) ((v) == 8 || ((v) >= 10 && (v) <= 14) || (v) == 17 || (v) == 21)

    .text
    .balign STUB_SIZE
    .globl isr_stubs
isr_stubs:
    vec = 0
    .rept 256
    .balign STUB_SIZE
    .if HAS_ERROR(vec)
        nop; nop                        /* every entry has the same size */
    .else
        push $0
    .endif
    push $vec
    jmp isr_common
    vec = vec + 1
    .endr
    .globl isr_stubs_end
isr_stubs_end:

isr_common:
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
    call trap_dispatch
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
    .globl isr_iretq
isr_iretq:
    iretq
