/*
 * The scheduler's supervision of tasks: the stream policy's tracer/tracee hand-over, faults
 * of tasks (contained, with the crash report), and the test watchdog's ways of ending a hang.
 */
#include "kernel/apic.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/printf.h"
#include "kernel/smp.h"
#include "kernel/symbols.h"
#include "kernel/trap.h"
#include "sched/internal.h"
#include "sched/sched.h"

int sched_stream_full(struct bts_trace *t, void *arg)
{
    (void)t;
    struct task *tracee = arg;
    /* Only a running task can be suspended: one that has finished (a threshold interrupt
     * arriving after its exit disabled recording, as hardware's may) would be woken as if
     * alive. Nobody can drain then: the caller counts the loss. */
    if (tracee != current_task || !tracee->tracer || tracee->state != TASK_RUNNABLE)
        return E_STATE;
    /* Suspended inside the threshold interrupt, mid-loop if need be; the tracee's registers
     * stay in the interrupted frame on its own stack and it resumes only after the drain. */
    /* Blocked before the tracer can know: a tracer on another CPU may drain and release it
     * before this CPU gets to schedule(), and that wake-up must not be lost. */
    __atomic_store_n(&current_task->state, TASK_BLOCKED, __ATOMIC_SEQ_CST);
    __atomic_store_n(&tracee->drain_wait, true, __ATOMIC_SEQ_CST);
    task_wake(tracee->tracer);
    schedule();
    return 0;
}

void sched_wait_tracee(struct task *tracee)
{
    bool irq = irq_save();
    for (;;) {
        /* Blocked first, then the check (the tracee may run on another CPU: task_wait()). */
        __atomic_store_n(&current_task->state, TASK_BLOCKED, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&tracee->drain_wait, __ATOMIC_SEQ_CST) ||
            __atomic_load_n(&tracee->state, __ATOMIC_SEQ_CST) == TASK_ZOMBIE) {
            current_task->state = TASK_RUNNABLE;
            /* Suspended or ended, it is still leaving its CPU if that is another: its DS
             * switch (a departure timestamp goes into the ring) must be done first. */
            task_wait_off_cpu(tracee);
            break;
        }
        schedule();
        check_runner_abort();
    }
    irq_restore(irq);
}

void sched_release_tracee(struct task *tracee)
{
    bool irq = irq_save();
    tracee->drain_wait = false;
    task_wake(tracee);
    irq_restore(irq);
}

/* User code is a copy of kernel-image bytes: name a user address by the kernel symbol of
 * the byte it was copied from, marked "user:". */
static void task_symbol(const struct task *t, uint64_t a, char *buf, size_t len)
{
    if (t->user && a >= USER_CODE_VA && a < USER_CODE_VA + t->code_len) {
        char s[SYMBOL_TEXT_MAX];
        symbol_format(t->code_src + (a - USER_CODE_VA), s, sizeof(s));
        ksnprintf(buf, len, "user:%s @%#lx", s, a);
        return;
    }
    symbol_format(a, buf, len);
}

static void watchdog_ipi(struct trap_frame *f);
static void watchdog_nmi(struct trap_frame *f);

void sched_supervise_init(void)
{
    trap_fault_hook = sched_task_fault;
    trap_set_ap_handler(VEC_WATCHDOG, watchdog_ipi);
    smp_set_watchdog_nmi(watchdog_nmi);
}

/* The debugging use case: a traced task crashes, and the report shows how it got there. */
bool sched_task_fault(struct trap_frame *f)
{
    struct task *t = current_task;
    if (t == &boot_task || sched_is_idle(t))
        return false; /* the test runner's faults end its test instead */
    t->faulted = true;
    t->fault = fault_info_from(f);
    kprintf_diag("task %u (%s) ended by a fault, the run goes on:", t->id, t->name);
    trap_report(f, kprintf_diag);
    struct bts_trace *tr = t->trace;
    if (tr && tr->configured) {
        bts_disable(tr);
        uint64_t n = bts_count(tr);
        uint64_t first = n > CRASH_BRANCHES ? n - CRASH_BRANCHES : 0;
        int64_t got = bts_get_raw(tr, first, CRASH_BRANCHES, t->crash);
        t->ncrash = got > 0 ? (unsigned)got : 0;
        kprintf_diag("last %u branches, oldest first:", t->ncrash);
        for (unsigned i = 0; i < t->ncrash; i++) {
            char a[SYMBOL_TEXT_MAX], b[SYMBOL_TEXT_MAX];
            task_symbol(t, t->crash[i].from, a, sizeof(a));
            task_symbol(t, t->crash[i].to, b, sizeof(b));
            kprintf_diag("  %2u: %s -> %s", i, a, b);
        }
    }
    task_exit(E_FAULT);
}

bool sched_in_runner(void)
{
    return current_task == &boot_task;
}
bool sched_in_idle(void)
{
    return sched_is_idle(current_task);
}

void sched_abort_current(const char *why)
{
    kprintf_diag("task %u (%s) %s", current_task->id, current_task->name, why);
    task_exit(E_TIMEDOUT);
}

/*
 * The watchdog on the application processors. The bootstrap CPU keeps the clock (its LAPIC
 * timer, its NMI watchdog) and sends nothing to an AP before a test's deadline: the BTS model
 * records every interrupt that reaches traced code, so an AP's exact traces stay exact. At the
 * deadline each AP that runs a task of the test (any but its idle task: the runner's are the
 * only others) is asked by a fixed IPI to end it, as the bootstrap CPU ends its own: the task
 * exits timed out and its joiner is woken. An AP that has not answered after the NMI
 * watchdog's lag spins with interrupts off, and gets an NMI; its NMI handler knows the NMI for
 * the watchdog's only by wd_nmi, set before it was sent. The CPU clears its request when it
 * answers, so a request that arrives twice (the fixed IPI held back until the NMI's end of the
 * task turned interrupts on) ends nothing the second time. That late IPI also ends the NMI
 * blocking: task_exit() from the NMI handler never IRETs, and the next IRET on the CPU (this
 * handler's, as soon as its idle loop enables interrupts) is what lets the next NMI in.
 */
static bool runs_test_task(const struct percpu *c)
{
    const struct task *t = __atomic_load_n(&c->current, __ATOMIC_ACQUIRE);
    return t && t != c->idle && __atomic_load_n(&t->state, __ATOMIC_SEQ_CST) != TASK_ZOMBIE;
}

static void ask(struct percpu *c)
{
    __atomic_store_n(&c->wd_asked, true, __ATOMIC_SEQ_CST);
    smp_signal(c->cpu, VEC_WATCHDOG, false);
}

static void ask_nmi(struct percpu *c)
{
    __atomic_store_n(&c->wd_nmi, true, __ATOMIC_SEQ_CST);
    smp_signal(c->cpu, 0, true);
}

/* On the AP: end the task running here, if it is still a task of the test. */
static void watchdog_stop(struct trap_frame *f, bool nmi)
{
    struct percpu *c = this_cpu();
    struct task *t = c->current;
    __atomic_store_n(&c->wd_nmi, false, __ATOMIC_SEQ_CST);
    __atomic_store_n(&c->wd_asked, false, __ATOMIC_SEQ_CST);
    if (t == c->idle || t->state == TASK_ZOMBIE)
        return; /* it ended by itself meanwhile */
    if (c->sched_locks) {
        /* Interrupted inside the scheduler (an NMI is not held back): ending the task here
         * would never release the lock. The bootstrap CPU gives up on it and says so. */
        kprintf_diag("watchdog: task %u (%s) holds a scheduler lock on cpu %u: not stopped", t->id,
                     t->name, c->cpu);
        return;
    }
    if (nmi) {
        char sym[SYMBOL_TEXT_MAX];
        task_symbol(t, f->rip, sym, sizeof(sym));
        kprintf_diag("NMI watchdog: task %u (%s) overdue with interrupts %s on cpu %u, at %s (RIP "
                     "%#lx, RFLAGS %#lx)",
                     t->id, t->name, (f->rflags & RFLAGS_IF) ? "on" : "off", c->cpu, sym, f->rip,
                     f->rflags);
        if (!trap_from_user(f))
            backtrace_from(f->rbp, kprintf_diag);
    }
    c->wd_stopped++;
    c->wd_stopped_nmi += nmi;
    kprintf_diag("task %u (%s) stopped by the watchdog on cpu %u", t->id, t->name, c->cpu);
    /* As on the bootstrap CPU (sched_abort_current()), from the interrupt: nothing returns to
     * the interrupted context, so an NMI's frame on the IST stack is simply abandoned. */
    task_exit(E_TIMEDOUT);
}

static void watchdog_ipi(struct trap_frame *f)
{
    apic_eoi(); /* first: task_exit() never comes back to it */
    if (__atomic_load_n(&this_cpu()->wd_asked, __ATOMIC_SEQ_CST))
        watchdog_stop(f, false);
}

static void watchdog_nmi(struct trap_frame *f)
{
    watchdog_stop(f, true);
}

unsigned sched_watchdog_ask(void)
{
    unsigned n = 0;
    for (unsigned i = 1; i < smp_online(); i++) {
        struct percpu *c = smp_cpu(i);
        if (!runs_test_task(c))
            continue;
        if (!__atomic_load_n(&c->wd_asked, __ATOMIC_SEQ_CST))
            ask(c);
        n++;
    }
    return n;
}

void sched_watchdog_nmi(void)
{
    for (unsigned i = 1; i < smp_online(); i++) {
        struct percpu *c = smp_cpu(i);
        if (__atomic_load_n(&c->wd_asked, __ATOMIC_SEQ_CST) && !c->wd_nmi && runs_test_task(c))
            ask_nmi(c);
    }
}

void sched_watchdog_collect(uint64_t lag_us, uint64_t grace_us)
{
    uint64_t t0 = rdtsc();
    for (bool waiting = true; waiting; cpu_relax()) {
        bool late = tsc_to_us(rdtsc() - t0) >= lag_us;
        bool given_up = tsc_to_us(rdtsc() - t0) >= lag_us + grace_us;
        waiting = false;
        for (unsigned i = 1; i < smp_online(); i++) {
            struct percpu *c = smp_cpu(i);
            if (!runs_test_task(c))
                continue;
            if (given_up) {
                struct task *t = c->current;
                kprintf_diag("watchdog: cpu %u did not stop task %u (%s) in %lu ms", i, t->id,
                             t->name, (unsigned long)((lag_us + grace_us) / 1000));
                continue;
            }
            waiting = true;
            /* Asked again also when it answered but has not yet made the task a zombie: the
             * second request finds nothing to end. */
            if (!__atomic_load_n(&c->wd_asked, __ATOMIC_SEQ_CST))
                ask(c);
            else if (late && !c->wd_nmi)
                ask_nmi(c);
        }
    }
    /* A request still on its way (asked twice, or given up on) must not end a later test's
     * task: once the flags are clear it finds nothing asked. */
    for (unsigned i = 1; i < smp_online(); i++) {
        __atomic_store_n(&smp_cpu(i)->wd_nmi, false, __ATOMIC_SEQ_CST);
        __atomic_store_n(&smp_cpu(i)->wd_asked, false, __ATOMIC_SEQ_CST);
    }
}

void sched_abort_runner(void)
{
    runner_abort = true;
    task_wake(&boot_task);
}

unsigned sched_kill_others(void)
{
    bool irq = irq_save();
    unsigned n = 0;
    sched_rq_clear(); /* only the runner runs now here; idle tasks are never queued */
    for (struct task *t = all_tasks, *next; t; t = next) {
        next = t->all_next;
        if (t == idle_task)
            continue;
        if (t->on_cpu && t->state != TASK_ZOMBIE && t->cpu != this_cpu()->cpu) {
            /* Running on another CPU: it cannot be freed under it. Said, and left. */
            kprintf_diag("task %u (%s) still runs on cpu %u: left", t->id, t->name, t->cpu);
            continue;
        }
        if (t->state != TASK_ZOMBIE || !t->joiner)
            n++;
        task_free(t);
    }
    runner_abort = false;
    irq_restore(irq);
    return n;
}
