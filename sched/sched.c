/*
 * Tasks and switching. Each CPU has a run queue of its own tasks (a task's `cpu`) and picks
 * only from it; another CPU may wake a task into it, under the queue's lock, and sends the
 * owner a wake-up IPI. Interrupts are off while a run queue changes and across a switch; the
 * incoming task's saved RFLAGS turn them back on as it was.
 */
#include "sched/sched.h"

#include "boot/layout.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/gdt.h"
#include "kernel/mem.h"
#include "kernel/panic.h"
#include "kernel/printf.h"
#include "kernel/smp.h"
#include "kernel/spinlock.h"
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
struct task *idle_task; /* the bootstrap CPU's; an AP's idle task is its boot context */
struct task *all_tasks;
volatile bool runner_abort;
static unsigned next_id = 1;
/* all_tasks and next_id, which every CPU's task_alloc() and task_free() change. */
static struct spinlock tasks_lock;
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

/* A CPU's run queue lock, with interrupts already off; sched_locks tells a threshold
 * interrupt (an NMI is not held back) that this CPU must not schedule now. */
static void rq_lock(struct percpu *c)
{
    this_cpu()->sched_locks++;
    spin_lock(&c->rq_lock);
}

static void rq_unlock(struct percpu *c)
{
    spin_unlock(&c->rq_lock);
    this_cpu()->sched_locks--;
}

static void rq_push(struct percpu *c, struct task *t)
{
    t->rq_next = NULL;
    if (c->rq_tail)
        c->rq_tail->rq_next = t;
    else
        c->rq_head = t;
    c->rq_tail = t;
}

static struct task *rq_pop(struct percpu *c)
{
    struct task *t = c->rq_head;
    if (t) {
        c->rq_head = t->rq_next;
        if (!c->rq_head)
            c->rq_tail = NULL;
    }
    return t;
}

/* Makes a runnable task t wait in its CPU's queue, unless it is that CPU's current task
 * (then it is still on its way to schedule(), which queues it). Call with the queue locked.
 * Whether the CPU must be woken. */
static bool rq_add(struct percpu *c, struct task *t)
{
    if (c->current == t)
        return false;
    rq_push(c, t);
    return c != this_cpu();
}

static uint64_t kstack_top(const struct task *t)
{
    return t->kstack + KSTACK_PAGES * PAGE_SIZE;
}

/* The second half of task_migrate(), on the old CPU once it is off t's stack and t's trace
 * is saved: t joins its new CPU's queue. */
static void migrate_arrive(struct task *t)
{
    struct percpu *c = &percpu_all[t->migrate_to];
    rq_lock(c);
    t->cpu = t->migrate_to;
    t->state = TASK_RUNNABLE;
    bool kick = rq_add(c, t);
    rq_unlock(c);
    if (kick)
        smp_kick(t->cpu);
}

/* Runs on the incoming task's stack, right after the stack switch. */
static void finish_switch(void)
{
    struct percpu *c = this_cpu();
    struct task *prev = c->prev;
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
    if (!prev)
        return;
    /* Off its stack, and its trace saved (the departure timestamp written): from now on
     * another CPU may free it or read its trace (task_wait_off_cpu()). */
    bool migrating = prev->state == TASK_MIGRATING;
    __atomic_store_n(&prev->on_cpu, false, __ATOMIC_RELEASE);
    if (migrating)
        migrate_arrive(prev);
}

void task_wait_off_cpu(struct task *t)
{
    while (__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE))
        cpu_relax();
}

/* Picks the next task and switches to it; call with interrupts off. */
void schedule(void)
{
    struct percpu *c = this_cpu();
    struct task *prev = c->current;
    rq_lock(c);
    if (prev->state == TASK_RUNNABLE && prev != c->idle)
        rq_push(c, prev);
    struct task *next = rq_pop(c);
    if (!next)
        next = c->idle;
    if (next == prev) {
        rq_unlock(c);
        return;
    }
    for (struct sched_switch_probe *p = switch_probes; p; p = p->next)
        p->fn(prev, next, p->arg);
    prev->trap_depth = c->trap_depth;
    c->prev = prev;
    next->on_cpu = true;
    c->current = next;
    rq_unlock(c);
    sched_switch_stacks(&prev->rsp, next->rsp);
    finish_switch();
}

void task_yield(void)
{
    bool irq = irq_save();
    schedule();
    irq_restore(irq);
}

int task_migrate(unsigned cpu)
{
    struct task *t = current_task;
    if (!smp_cpu(cpu))
        return E_INVAL;
    if (t == &boot_task || sched_is_idle(t))
        return E_STATE;
    bool irq = irq_save();
    if (cpu != t->cpu) {
        t->migrate_to = cpu;
        t->state = TASK_MIGRATING;
    }
    schedule();
    irq_restore(irq);
    return 0;
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
    struct percpu *c = &percpu_all[t->cpu];
    bool kick = false;
    rq_lock(c);
    if (t->state == TASK_BLOCKED || t->state == TASK_SLEEPING) {
        t->state = TASK_RUNNABLE;
        kick = rq_add(c, t);
    }
    rq_unlock(c);
    if (kick)
        smp_kick(t->cpu);
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
    __atomic_store_n(&t->state, TASK_ZOMBIE, __ATOMIC_SEQ_CST); /* before looking for a joiner */
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
    task_wait_off_cpu(t); /* one that ended on another CPU may still be leaving it */
    bool irq = spin_lock_irqsave(&tasks_lock);
    for (struct task **p = &all_tasks; *p; p = &(*p)->all_next)
        if (*p == t) {
            *p = t->all_next;
            break;
        }
    spin_unlock_irqrestore(&tasks_lock, irq);
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
    for (;;) {
        /* Blocked first, then the check: a task ending on another CPU either is seen as a
         * zombie here or sees the joiner and wakes it (task_exit), never neither. */
        __atomic_store_n(&current_task->state, TASK_BLOCKED, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&t->state, __ATOMIC_SEQ_CST) == TASK_ZOMBIE) {
            current_task->state = TASK_RUNNABLE;
            task_wait_off_cpu(t); /* its last departure timestamp written */
            break;
        }
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
    strlcpy(t->name, name, sizeof(t->name));
    t->cpu = this_cpu()->cpu;
    bool irq = spin_lock_irqsave(&tasks_lock);
    t->id = next_id++;
    t->all_next = all_tasks;
    all_tasks = t;
    spin_unlock_irqrestore(&tasks_lock, irq);
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
    struct percpu *c = &percpu_all[t->cpu];
    rq_lock(c);
    t->state = TASK_RUNNABLE;
    bool kick = rq_add(c, t);
    rq_unlock(c);
    if (kick)
        smp_kick(t->cpu);
    irq_restore(irq);
}

struct task *task_create_on(unsigned cpu, const char *name, void (*fn)(void *), void *arg)
{
    if (!smp_cpu(cpu))
        return NULL;
    struct task *t = task_alloc(name);
    if (!t)
        return NULL;
    t->cpu = cpu;
    t->entry = fn;
    t->arg = arg;
    task_enqueue_new(t);
    return t;
}

struct task *task_create(const char *name, void (*fn)(void *), void *arg)
{
    return task_create_on(this_cpu()->cpu, name, fn, arg);
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

/* A CPU's idle loop: whatever is queued, else halt until an interrupt (a timer, a wake-up
 * IPI) may have queued something. The check is made with interrupts off, and STI's shadow
 * covers the HLT, so a wake-up cannot land between the two and be slept through. */
__attribute__((noreturn)) static void idle_loop(void *arg)
{
    (void)arg;
    for (;;) {
        irq_disable();
        if (__atomic_load_n(&this_cpu()->rq_head, __ATOMIC_ACQUIRE))
            schedule();
        else
            __asm__ volatile("sti; hlt" ::: "memory");
    }
}

void sched_init(void)
{
    boot_task.id = 0;
    boot_task.on_cpu = true;
    current_task = &boot_task;
    idle_task = task_alloc(IDLE_NAME);
    if (!idle_task)
        panic("no memory for the idle task");
    idle_task->entry = idle_loop;
    idle_task->state = TASK_RUNNABLE;
    this_cpu()->idle = idle_task;
}

/* An AP's idle task is the context it came up in (kernel/smp.c): it never ends, has no stack
 * of its own to free and is on no list. */
static struct task ap_idle[SMP_MAX_CPUS];

static void ap_idle_enter(void *arg)
{
    void (*setup)(void) = (void (*)(void))arg;
    if (setup)
        setup();
    sched_ap_idle();
}

void sched_ap_idle(void)
{
    struct percpu *c = this_cpu();
    struct task *t = &ap_idle[c->cpu];
    ksnprintf(t->name, sizeof(t->name), "%s%u", IDLE_NAME, c->cpu);
    t->cpu = c->cpu;
    t->state = TASK_RUNNABLE;
    t->on_cpu = true;
    c->idle = t;
    c->current = t;
    idle_loop(NULL);
}

void sched_init_aps(void (*setup)(void))
{
    /* Each AP leaves smp.c's idle loop for the scheduler's, for good. */
    for (unsigned i = 1; i < smp_online(); i++)
        if (smp_run(i, ap_idle_enter, (void *)setup) != 0)
            panic("cpu %u did not take its scheduler", i);
}

bool sched_is_idle(const struct task *t)
{
    return t == percpu_all[t->cpu].idle;
}

void sched_rq_clear(void)
{
    for (unsigned i = 0; i < smp_online(); i++) {
        struct percpu *c = &percpu_all[i];
        rq_lock(c);
        c->rq_head = c->rq_tail = NULL;
        rq_unlock(c);
    }
}
