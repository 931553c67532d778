/*
 * The scheduler's supervision of tasks: the stream policy's tracer/tracee hand-over, faults
 * of tasks (contained, with the crash report), and the test watchdog's ways of ending a hang.
 */
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/printf.h"
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

void sched_supervise_init(void)
{
    trap_fault_hook = sched_task_fault;
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
