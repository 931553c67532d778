/* What sched/sched.c shares with sched/supervise.c and sched/uspace.c (both above it: they
 * call into sched.c, never the other way), and nothing outside sched/ uses. */
#ifndef BTSX_SCHED_INTERNAL_H
#define BTSX_SCHED_INTERNAL_H

#include <stdbool.h>

#include "kernel/percpu.h"
#include "sched/sched.h"

extern struct task boot_task; /* the test runner: the context kmain ran in */
extern struct task *idle_task, *all_tasks;
/* The task running on this CPU (kernel/percpu.h). */
#define current_task (this_cpu()->current)
extern volatile bool runner_abort;

/* Picks the next task and switches to it; call with interrupts off. */
void schedule(void);
void task_free(struct task *t);
/* In the runner's waits: give up (to the test's recovery point) if the watchdog asked. */
void check_runner_abort(void);
void sched_rq_clear(void);
/* A task with its kernel stack, on the list of all tasks, not yet runnable (task_free()
 * undoes it); task_enqueue_new() makes it runnable. */
struct task *task_alloc(const char *name);
void task_enqueue_new(struct task *t);
/* Waits until t, ended or switched out, is off its CPU: its stack free, its last DS switch (the
 * departure timestamp) done. A task ending on another CPU wakes its joiner before that. */
void task_wait_off_cpu(struct task *t);

#endif
