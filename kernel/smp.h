/*
 * The other CPUs: found in the ACPI MADT, started with INIT-SIPI-SIPI through a real-mode
 * trampoline (boot/ap.S), each on its own stacks, GDT, TSS and struct percpu (kernel/percpu.h),
 * its LAPIC in the bootstrap CPU's mode and its timer on the bootstrap CPU's calibration.
 *
 * The application processors prove that they work and then idle with interrupts on, running
 * what smp_run() hands them: after boot, the scheduler's own loop (sched_init_aps()), so each
 * runs the tasks of its run queue. The tests stay on the bootstrap CPU, which alone receives
 * the I/O APIC's interrupts (the watchdog's NMI among them). Each CPU has its own DS layer
 * state (its idle DS area, its loaded trace, the BTS model's registers, its LVT PC:
 * kernel/percpu.h), so each traces its own tasks, and its threshold interrupt is its own. An
 * AP takes what is sent to it: its own timer, smp_call() as a fixed IPI or an NMI, the wake-up
 * IPI (smp_kick()), the test watchdog's request as a fixed IPI or an NMI (smp_signal()), the
 * spurious vector, and what the DS layer installs on every CPU (the model's #DB, the threshold
 * interrupt); kernel/trap.c dispatches an AP's interrupts apart.
 *
 * smp=N|all (default all) limits how many CPUs run, the bootstrap CPU included: smp=1 is the
 * kernel of one CPU, which never touches the MADT's other entries.
 */
#ifndef BTSX_KERNEL_SMP_H
#define BTSX_KERNEL_SMP_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/percpu.h"

struct trap_frame;

/* What became of a CPU the MADT lists. */
enum smp_state {
    SMP_ONLINE,      /* running: the bootstrap CPU, or an AP that passed its checks */
    SMP_NOT_STARTED, /* smp=N left it out */
    SMP_DISABLED,    /* the MADT marks it neither enabled nor online-capable */
    SMP_HOTPLUG,     /* online-capable but not enabled at boot: left for a hot-add */
    SMP_DUPLICATE,   /* its APIC ID appeared earlier in the MADT */
    SMP_OVER_LIMIT,  /* beyond SMP_MAX_CPUS */
    SMP_NO_ANSWER,   /* never ran the trampoline after INIT-SIPI-SIPI */
    SMP_STUCK,       /* ran the trampoline but never reported from the kernel */
    SMP_NO_TIMER,    /* reached the kernel, but its LAPIC timer never interrupted */
    SMP_FAST_TIMER,  /* its LAPIC timer fired early: the bootstrap CPU's rates do not apply */
    SMP_UNUSABLE,    /* nothing to start it with: no free page below 1 MiB, page tables or
                        x2APIC ID out of reach (the reason is in smp_note()) */
};

struct smp_cpu {
    uint32_t apic_id, uid; /* the MADT's APIC ID and ACPI processor UID */
    bool x2apic_entry;     /* from a Local x2APIC entry (type 9) rather than a Local APIC one */
    uint32_t flags;        /* the MADT entry's: bit 0 enabled, bit 1 online capable */
    enum smp_state state;
    int cpu;           /* its CPU number (percpu_all[]) if online, else -1 */
    uint64_t start_us; /* from the first INIT to reporting online (APs) */
};

#define SMP_MADT_MAX 64 /* MADT processor entries kept; more are named in smp_note() */

/* Sets up the bootstrap CPU's struct percpu and GS, right after gdt_init(). */
void smp_init_bsp(void);
/* Reads the MADT and starts the CPUs smp= allows; after apic_init() and before the DS layer. */
void smp_init(void);

unsigned smp_online(void);     /* CPUs running, the bootstrap CPU included */
unsigned smp_madt_count(void); /* processor entries the MADT listed (kept) */
const struct smp_cpu *smp_madt_cpu(unsigned i);
const char *smp_state_name(enum smp_state s);
/* Why the MADT could not be used or APs could not be started, or "". */
const char *smp_note(void);
/* The CPU number's struct percpu, or NULL if it is not online. */
struct percpu *smp_cpu(unsigned cpu);

/* Runs fn(arg) on an online application processor, in its interrupt handler for a fixed IPI
 * (nmi false) or in its NMI handler (nmi true), and waits for it to finish. 0, E_INVAL for a
 * CPU that is not an online AP, E_STATE when not called on the bootstrap CPU, E_TIMEDOUT (then
 * the AP may still run it later: arg must outlive the call, and the AP is not to be trusted). */
int smp_call(unsigned cpu, void (*fn)(void *arg), void *arg, bool nmi);
/* Runs fn(arg) on an online application processor in its idle loop: outside any interrupt
 * handler, with interrupts on. Returns at once: 0, E_INVAL for a CPU that is not an online AP,
 * E_STATE when not called on the bootstrap CPU, E_BUSY while the AP still runs the previous
 * one. The scheduler hands each AP its own loop this way (sched_init_aps(), which never
 * returns), so after boot an AP is reached through its run queue (task_create_on()). */
int smp_run(unsigned cpu, void (*fn)(void *arg), void *arg);
/* Sends an online AP the fixed IPI `vector`, or an NMI (nmi true), and returns at once; what
 * it runs there is the vector's AP handler (trap_set_ap_handler()) or the NMI's hooks. The test
 * watchdog's requests (sched/supervise.c), which must not wait for an AP that may be hung. 0, or
 * E_INVAL for a CPU that is not an online AP. */
int smp_signal(unsigned cpu, unsigned vector, bool nmi);
/* Sends CPU `cpu` the wake-up IPI, which ends an idle HLT (not to the calling CPU). */
void smp_kick(unsigned cpu);
/* Another source of an AP's NMIs (the threshold interrupt with pmi=nmi): called for every NMI
 * an AP takes, after smp_call()'s, with whether smp_call() had a call pending or the watchdog
 * sent one. */
typedef void (*smp_nmi_hook_t)(struct trap_frame *f, bool claimed);
void smp_set_nmi_hook(smp_nmi_hook_t hook);
/* The test watchdog's part of an AP's NMI handler (sched/supervise.c), called last for an NMI
 * that arrives while the CPU's struct percpu says the watchdog sent one (wd_nmi), after the
 * other sources were asked; it may not return (it ends the task the NMI interrupted). */
void smp_set_watchdog_nmi(void (*fn)(struct trap_frame *f));
/* Arms the calling AP's LAPIC one-shot timer `us` from now, on the bootstrap CPU's timer rate;
 * the interrupt counts in this_cpu()->timer_irqs, and timer_armed_tsc and timer_fired_tsc say
 * how long it took. (The bootstrap CPU's timer belongs to kernel/timer.c.) */
void smp_timer_oneshot_us(uint64_t us);

#endif
