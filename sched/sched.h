/*
 * The cooperative scheduler: kernel tasks and user (CPL 3) tasks, round-robin among the
 * runnable ones, with yield, exit/join, block/wake and sleep. A task switches only when it
 * asks to (or, for the stream policy, when its trace's threshold interrupt suspends it).
 * Every switch runs the DS hook (sched_set_ds_hook()), so each traced task records into its own DS
 * area and nothing else.
 */
#ifndef BTSX_SCHED_SCHED_H
#define BTSX_SCHED_SCHED_H

#include <stdbool.h>
#include <stdint.h>

#include "ds/bts.h"
#include "kernel/paging.h"
#include "kernel/recover.h"

#define TASK_NAME_LEN  24
#define KSTACK_PAGES   4
#define USER_MAX_PAGES 16
#define CRASH_BRANCHES 16

/* User address space layout (inside USER_BASE..USER_END). */
#define USER_CODE_VA   USER_BASE
#define USER_DATA_VA   (USER_BASE + 0x100000)
#define USER_STACK_VA  (USER_BASE + 0x200000)
#define USER_STACK_TOP (USER_STACK_VA + PAGE_SIZE)

/* TASK_MIGRATING: switched out by task_migrate(), on its way to its new CPU's queue. */
enum task_state { TASK_RUNNABLE, TASK_BLOCKED, TASK_SLEEPING, TASK_ZOMBIE, TASK_MIGRATING };

struct task {
    uint64_t rsp; /* saved by sched/switch.S: keep first */
    unsigned id;
    char name[TASK_NAME_LEN];
    volatile enum task_state state;
    unsigned cpu;         /* the CPU it runs on: only that CPU's scheduler picks it */
    unsigned migrate_to;  /* task_migrate()'s target, while TASK_MIGRATING */
    volatile bool on_cpu; /* running, or still switching off its stack, on its CPU */
    struct task *rq_next;
    struct task *all_next; /* every task but the runner, for the cleanup */
    struct task *joiner;   /* blocked in task_join() on this task */
    int exit_status;
    uint64_t kstack;     /* KSTACK_PAGES of kernel stack */
    unsigned trap_depth; /* trap nesting at the moment it switched out */
    void (*entry)(void *);
    void *arg;
    void (*release)(struct task *t); /* frees what its creator added (user pages), or NULL */
    /* User tasks. */
    bool user;
    struct addr_space as;
    uint64_t pages[USER_MAX_PAGES];
    unsigned npages;
    uint64_t user_entry, user_arg, user_arg2;
    uint64_t code_src, code_len; /* where the code came from: symbolises user addresses */
    /* Tracing, set by the tracer (a tracer/tracee pair, as with ptrace). */
    struct bts_trace *trace;
    struct task *tracer;
    volatile bool drain_wait; /* stream: suspended until the tracer drains */
    /* A contained fault: what happened and the last branches before it. */
    bool faulted;
    struct fault_info fault;
    struct bts_record crash[CRASH_BRANCHES];
    unsigned ncrash;
};

void sched_init(void);
/* Hands every online AP over to the scheduler: each runs setup() (the per-CPU set-up of what
 * its tasks need: SYSCALL's MSRs), then its own tasks from then on. */
void sched_init_aps(void (*setup)(void));
struct task *task_current(void);
/* A kernel task running fn(arg) on the calling CPU; it ends when fn returns (status 0) or
 * calls task_exit. */
struct task *task_create(const char *name, void (*fn)(void *), void *arg);
/* The same on CPU `cpu` (NULL if it is not online); the CPU is woken if it idles. */
struct task *task_create_on(unsigned cpu, const char *name, void (*fn)(void *), void *arg);
/* An AP becomes its own idle task and runs its scheduler from here on (kernel/smp.c). */
__attribute__((noreturn)) void sched_ap_idle(void);
/* Whether t is some CPU's idle task. */
bool sched_is_idle(const struct task *t);
/* A user task: `len` bytes of code copied to USER_CODE_VA, entered at code + entry_offset
 * with RDI = arg and RSI = arg2, a stack page and a data page of its own. */
struct task *task_create_user(const char *name, const void *code, uint64_t len,
                              uint64_t entry_offset, uint64_t arg, uint64_t arg2);
/* The same on CPU `cpu`, not started: task_launch() makes it runnable there, once its tracer
 * has set up what must be in place before it runs (another CPU may run it at once). NULL if
 * the CPU is not online or on failure. */
struct task *task_create_user_on(unsigned cpu, const char *name, const void *code, uint64_t len,
                                 uint64_t entry_offset, uint64_t arg, uint64_t arg2);
void task_launch(struct task *t);
void task_yield(void);
/* Yield, and run on from CPU `cpu` (the caller's task moves there for good; its own CPU: a
 * yield). The old CPU switches away first, its DS switch saving the task's trace (the
 * departure timestamp there), and only then queues the task on the new CPU, whose switch to
 * it loads the trace (the arrival): one DS area is never loaded on two CPUs. 0; E_INVAL for a
 * CPU that is not online; E_STATE for the test runner and idle tasks, which stay. */
int task_migrate(unsigned cpu);
__attribute__((noreturn)) void task_exit(int status);
/* Waits for t to end without freeing it (its pages can still be inspected). */
void task_wait(struct task *t);
/* Waits for t to end, frees it, returns its status (E_STATE if t is the caller). */
int task_join(struct task *t, int *status);
void task_block(void);
void task_wake(struct task *t);
void task_sleep_ms(unsigned ms);
/* Makes `tracer` the tracer of `tracee` with trace `tr` (NULL detaches). */
void task_set_trace(struct task *tracee, struct task *tracer, struct bts_trace *tr);

/* The switch tracepoint: every probe's fn(prev, next, arg) runs at each switch, in
 * schedule() with interrupts off, before the stacks change (and so before the DS hook writes
 * the departure and arrival timestamps). It must not schedule. A probe stays registered,
 * once at most, until it is removed. */
struct sched_switch_probe {
    void (*fn)(const struct task *prev, const struct task *next, void *arg);
    void *arg;
    struct sched_switch_probe *next;
};
void sched_switch_probe_add(struct sched_switch_probe *p);
void sched_switch_probe_remove(struct sched_switch_probe *p);
/* The DS context switch that every switch runs with the outgoing and incoming tasks' traces,
 * right after the stacks change (only when ds_switch_needed() says the DS registers must
 * change, so an untraced switch makes no call). kmain installs ds_switch_traces() once the DS
 * layer is up; NULL runs none. Returns the hook it replaces, so that whoever swaps it can put
 * it back. */
typedef void (*sched_ds_hook_t)(struct bts_trace *prev, struct bts_trace *next);
sched_ds_hook_t sched_set_ds_hook(sched_ds_hook_t hook);

/* Stream policy: the trace callback that suspends the tracee until its tracer drains. */
int sched_stream_full(struct bts_trace *t, void *arg);
/* The tracer's side: wait until a tracee is suspended on a full ring, or has ended. */
void sched_wait_tracee(struct task *tracee);
void sched_release_tracee(struct task *tracee);

/* Contained faults of tasks other than the test runner: report, last branches, exit.
 * sched_supervise_init() installs it as the trap layer's fault hook (after sched_init()). */
bool sched_task_fault(struct trap_frame *f);
void sched_supervise_init(void);

/* The test watchdog's side (from the timer interrupt). */
bool sched_in_runner(void);
bool sched_in_idle(void);
/* Ends the current task (not the runner or idle), which the watchdog found still running. */
__attribute__((noreturn)) void sched_abort_current(const char *why);
/* The runner is blocked and nothing can run: wake it so that its wait gives up (the test
 * then ends as timed out). */
void sched_abort_runner(void);
/* The watchdog on the other CPUs, from the bootstrap CPU (sched/supervise.c): asks each AP
 * running a task of the test to end it (a fixed IPI) and returns how many run one; */
unsigned sched_watchdog_ask(void);
/* sends an NMI to each AP asked that has not answered (interrupts off there); */
void sched_watchdog_nmi(void);
/* and after a timed-out test, in the runner: waits until no AP runs a task of the test, asking
 * one not asked yet, sending the NMI to one that has not answered after lag_us, and giving up
 * (said) on one still running it after lag_us + grace_us. */
void sched_watchdog_collect(uint64_t lag_us, uint64_t grace_us);
/* After a test: ends and frees every task it left behind; returns how many. */
unsigned sched_kill_others(void);

#endif
