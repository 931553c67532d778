#include "kernel/timer.h"

#include <stdbool.h>

#include "kernel/apic.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"

struct soft_timer {
    bool armed;
    uint64_t deadline; /* TSC */
    timer_fn_t fn;
    void *arg;
};

static struct soft_timer timers[TIMER_SLOTS];

static void timer_fire(struct trap_frame *f);

/* Programs the LAPIC for the earliest armed deadline. Called with interrupts off. */
static void reprogram(void)
{
    uint64_t now = rdtsc(), first = UINT64_MAX;
    for (unsigned i = 0; i < TIMER_SLOTS; i++)
        if (timers[i].armed && timers[i].deadline < first)
            first = timers[i].deadline;
    if (first == UINT64_MAX) {
        apic_timer_cancel();
        return;
    }
    apic_timer_oneshot_us(first > now ? tsc_to_us(first - now) + 1 : 1, timer_fire);
}

static void timer_fire(struct trap_frame *f)
{
    uint64_t now = rdtsc();
    for (unsigned i = 0; i < TIMER_SLOTS; i++) {
        struct soft_timer *t = &timers[i];
        if (t->armed && t->deadline <= now) {
            t->armed = false;
            t->fn(f, t->arg); /* may not return (the watchdog abandons the test) */
        }
    }
    reprogram();
}

int timer_start_us(uint64_t us, timer_fn_t fn, void *arg)
{
    bool irq = irq_save();
    int id = E_BUSY;
    for (unsigned i = 0; i < TIMER_SLOTS; i++)
        if (!timers[i].armed) {
            timers[i] = (struct soft_timer){true, rdtsc() + us * tsc_hz() / 1000000, fn, arg};
            id = (int)i;
            break;
        }
    if (id >= 0)
        reprogram();
    irq_restore(irq);
    return id;
}

void timer_cancel(int id)
{
    if (id < 0 || id >= TIMER_SLOTS)
        return;
    bool irq = irq_save();
    timers[id].armed = false;
    reprogram();
    irq_restore(irq);
}

void timer_cancel_all(void)
{
    for (unsigned i = 0; i < TIMER_SLOTS; i++)
        timers[i].armed = false;
    apic_timer_cancel();
}
