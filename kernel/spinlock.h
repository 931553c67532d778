/*
 * A spinlock for state that several CPUs share (run queues, the task list, the frame allocator
 * and heap, the console). Callers that can be interrupted by code taking the same lock on the
 * same CPU turn interrupts off first (spin_lock_irqsave); an NMI cannot be turned off, so what
 * an NMI handler may reach (the console, through a panic or a diagnostic) has its own way
 * around it (kernel/console.c).
 */
#ifndef BTSX_KERNEL_SPINLOCK_H
#define BTSX_KERNEL_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/cpu.h"

struct spinlock {
    volatile uint32_t locked;
};

static inline void spin_lock(struct spinlock *l)
{
    while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
            cpu_relax();
}

static inline bool spin_trylock(struct spinlock *l)
{
    return !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
}

static inline void spin_unlock(struct spinlock *l)
{
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

/* Interrupts off, then the lock; returns whether interrupts were on, for the unlock. */
static inline bool spin_lock_irqsave(struct spinlock *l)
{
    bool irq = irq_save();
    spin_lock(l);
    return irq;
}

static inline void spin_unlock_irqrestore(struct spinlock *l, bool irq)
{
    spin_unlock(l);
    irq_restore(irq);
}

#endif
