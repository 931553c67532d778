/*
 * Tasks and switching. Interrupts are off while the run queue changes and across a switch;
 * the incoming task's saved RFLAGS turn them back on as it was.
 */
#include "sched/sched.h"

#include "boot/layout.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/gdt.h"
#include "kernel/mem.h"
#include "kernel/panic.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "kernel/trap.h"
#include "sched/internal.h"

#define SWITCH_FRAME_WORDS 7 /* r15 r14 r13 r12 rbx rbp rflags, then the return RIP */
#define IDLE_NAME          "idle"

void sched_switch_stacks(uint64_t *prev_rsp, uint64_t next_rsp);

struct task boot_task = {.name = "runner", .state = TASK_RUNNABLE};
/* The task running on each CPU is its struct percpu's `current` (current_task, set to the
 * runner by sched_init(); ds/trace.c's bts_current() is the trace loaded, a different thing),
 * and `prev` the one it switched from, which the incoming task's first code reads. */
struct task *idle_task;
static struct task *rq_head, *rq_tail;
struct task *all_tasks;
volatile bool runner_abort;
static unsigned next_id = 1;
static sched_ds_hook_t ds_hook;
static struct sched_switch_probe *switch_probes;

struct task *task_current(void)
{
    return current_task;
}
sched_ds_hook_t sched_set_ds_hook(sched_ds_hook_t hook)
{
    bool irq = irq_save();
    sched_ds_hook_t old = ds_hook;
    ds_hook = hook;
    irq_restore(irq);
    return old;
}

void sched_switch_probe_add(struct sched_switch_probe *p)
{
    bool irq = irq_save();
    sched_switch_probe_remove(p); /* at most once in the list */
    p->next = switch_probes;
    switch_probes = p;
    irq_restore(irq);
}

void sched_switch_probe_remove(struct sched_switch_probe *p)
{
    bool irq = irq_save();
    for (struct sched_switch_probe **q = &switch_probes; *q; q = &(*q)->next)
        if (*q == p) {
            *q = p->next;
            break;
        }
    irq_restore(irq);
}

static void rq_push(struct task *t)
{
    t->rq_next = NULL;
    if (rq_tail)
        rq_tail->rq_next = t;
    else
        rq_head = t;
    rq_tail = t;
}

static struct task *rq_pop(void)
{
    struct task *t = rq_head;
    if (t) {
        rq_head = t->rq_next;
        if (!rq_head)
            rq_tail = NULL;
    }
    return t;
}

static uint64_t kstack_top(const struct task *t)
{
    return t->kstack + KSTACK_PAGES * PAGE_SIZE;
}

/* Runs on the incoming task's stack, right after the stack switch. */
static void finish_switch(void)
{
    struct task *prev = this_cpu()->prev;
    if (current_task->user) {
        tss_set_rsp0(kstack_top(current_task)); /* interrupts and SYSCALL (sched/syscall_entry.S) */
        as_switch(&current_task->as);
    } else if (prev && prev->user) {
        as_switch(&kernel_as);
    }
    this_cpu()->trap_depth = current_task->trap_depth;
    struct bts_trace *out = prev ? prev->trace : NULL, *in = current_task->trace;
    if (ds_hook && ds_switch_needed(out, in))
        ds_hook(out, in);
}

/* Picks the next task and switches to it; call with interrupts off. */
void schedule(void)
{
    struct task *prev = current_task;
    if (prev->state == TASK_RUNNABLE && prev != idle_task)
        rq_push(prev);
    struct task *next = rq_pop();
    if (!next)
        next = idle_task;
    if (next == prev)
        return;
    for (struct sched_switch_probe *p = switch_probes; p; p = p->next)
        p->fn(prev, next, p->arg);
    prev->trap_depth = this_cpu()->trap_depth;
    this_cpu()->prev = prev;
    current_task = next;
    sched_switch_stacks(&prev->rsp, next->rsp);
    finish_switch();
}

void task_yield(void)
{
    bool irq = irq_save();
    schedule();
    irq_restore(irq);
}

void task_block(void)
{
    bool irq = irq_save();
    current_task->state = TASK_BLOCKED;
    schedule();
    irq_restore(irq);
}

void task_wake(struct task *t)
{
    bool irq = irq_save();
    if (t->state == TASK_BLOCKED || t->state == TASK_SLEEPING) {
        t->state = TASK_RUNNABLE;
        if (t != current_task)
            rq_push(t);
    }
    irq_restore(irq);
}

static void sleep_done(struct trap_frame *f, void *arg)
{
    (void)f;
    task_wake(arg);
}

void task_sleep_ms(unsigned ms)
{
    bool irq = irq_save();
    current_task->state = TASK_SLEEPING;
    if (timer_start_us((uint64_t)ms * 1000, sleep_done, current_task) < 0)
        current_task->state = TASK_RUNNABLE; /* no timer slot: do not sleep forever */
    schedule();
    irq_restore(irq);
}

void task_exit(int status)
{
    irq_disable();
    struct task *t = current_task;
    if (t == &boot_task)
        panic("the test runner called task_exit");
    t->exit_status = status;
    /* Recording off now (ds_switch() only turns off what records), while the task is still
     * alive: a threshold interrupt owed at that write (a late PMI, or an NMI that IF=0 does not
     * hold back) may suspend it for its tracer under the stream policy, and the task must
     * come back here to finish, not be a zombie that its tracer wakes. */
    if (t->trace && t->trace == bts_current())
        bts_disable(t->trace);
    t->state = TASK_ZOMBIE;
    if (t->tracer && t->tracer->state == TASK_BLOCKED)
        task_wake(t->tracer); /* a tracer waiting for data learns the tracee ended */
    if (t->joiner)
        task_wake(t->joiner);
    this_cpu()->trap_depth = 0; /* a fault exits from trap context: nothing returns there */
    schedule();
    panic("a finished task was scheduled again");
}

void task_free(struct task *t)
{
    for (struct task **p = &all_tasks; *p; p = &(*p)->all_next)
        if (*p == t) {
            *p = t->all_next;
            break;
        }
    if (t->release)
        t->release(t);
    pages_free(t->kstack, KSTACK_PAGES);
    kfree(t);
}

/* In the runner's waits: the watchdog asked it to give up. */
void check_runner_abort(void)
{
    if (current_task == &boot_task && runner_abort) {
        runner_abort = false;
        recover_propagate(RECOVER_TIMEOUT);
    }
}

void task_wait(struct task *t)
{
    bool irq = irq_save();
    t->joiner = current_task;
    while (t->state != TASK_ZOMBIE) {
        current_task->state = TASK_BLOCKED;
        schedule();
        if (current_task == &boot_task && runner_abort)
            t->joiner = NULL;
        check_runner_abort();
    }
    t->joiner = NULL;
    irq_restore(irq);
}

int task_join(struct task *t, int *status)
{
    if (t == current_task || t->joiner)
        return E_STATE;
    task_wait(t);
    if (status)
        *status = t->exit_status;
    task_free(t);
    return 0;
}

/* Where every task begins: on its own stack, after its first switch. */
static void task_start(void)
{
    finish_switch();
    irq_enable();
    struct task *t = current_task;
    t->entry(t->arg);
    task_exit(0);
}

struct task *task_alloc(const char *name)
{
    struct task *t = kzalloc(sizeof(*t));
    if (!t)
        return NULL;
    t->kstack = pages_alloc(KSTACK_PAGES);
    if (!t->kstack) {
        kfree(t);
        return NULL;
    }
    t->id = next_id++;
    strlcpy(t->name, name, sizeof(t->name));
    t->all_next = all_tasks;
    all_tasks = t;
    /* A stack that looks switched out just before task_start. */
    uint64_t *sp = (uint64_t *)kstack_top(t);
    *--sp = 0; /* alignment: task_start sees a call frame */
    *--sp = (uint64_t)task_start;
    *--sp = RFLAGS_FIXED; /* interrupts off until task_start */
    for (unsigned i = 0; i < SWITCH_FRAME_WORDS - 1; i++)
        *--sp = 0;
    t->rsp = (uint64_t)sp;
    return t;
}

void task_enqueue_new(struct task *t)
{
    bool irq = irq_save();
    t->state = TASK_RUNNABLE;
    rq_push(t);
    irq_restore(irq);
}

struct task *task_create(const char *name, void (*fn)(void *), void *arg)
{
    struct task *t = task_alloc(name);
    if (!t)
        return NULL;
    t->entry = fn;
    t->arg = arg;
    task_enqueue_new(t);
    return t;
}

void task_set_trace(struct task *tracee, struct task *tracer, struct bts_trace *tr)
{
    bool irq = irq_save();
    tracee->trace = tr;
    tracee->tracer = tr ? tracer : NULL;
    if (tracee == current_task)
        ds_switch(NULL, tr);
    irq_restore(irq);
}

static void idle_loop(void *arg)
{
    (void)arg;
    for (;;) {
        irq_enable();
        cpu_halt(); /* until a timer or an IPI makes something runnable */
        task_yield();
    }
}

void sched_init(void)
{
    boot_task.id = 0;
    current_task = &boot_task;
    idle_task = task_alloc(IDLE_NAME);
    if (!idle_task)
        panic("no memory for the idle task");
    idle_task->entry = idle_loop;
    idle_task->state = TASK_RUNNABLE;
}

void sched_rq_clear(void)
{
    rq_head = rq_tail = NULL;
}
