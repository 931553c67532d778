/*
 * db.*: the #DB entry (kernel/isr.S, db_entry) picks a stack the handler can use. #DB comes in
 * on an IST stack of its own; the entry moves the frame to the task's stack when the
 * interrupted code has one, so a handler can be suspended and another task can take #DBs
 * meanwhile; at CPL 0 on a user-half stack (the SYSCALL window) it is handled on the IST
 * stack. The SYSCALL-with-TF case reaches that path only where the CPU gets it wrong (Bochs
 * 2.7); db.foreign_stack reaches the same path on every machine.
 */
#include "kernel/cpu.h"
#include "kernel/paging.h"
#include "kernel/string.h"
#include "kernel/trap.h"
#include "sched/sched.h"
#include "tests/test.h"
#include "tests/usertest.h"

extern uint64_t db_foreign_step(uint64_t rsp);
extern uint64_t db_step_loop(uint64_t n);
extern const char db_foreign_trap[];

/* Below the user's RSP at its SYSCALL: the PUSHFQ's word, then what a #DB frame pushed on
 * that stack would cover (the CPU's five words, vector, error code, 15 registers). */
#define SYSTF_GUARD_BYTES 256
#define SYSTF_OWN_BYTES   8
#define SYSTF_PATTERN     0x5A

/* Named in the header: traces of user tasks under such a CPU are read in that light. */
static void db_header(void (*line)(const char *fmt, ...))
{
    if (trap_syscall_tf_quirk())
        line("quirk: emulator raised #DB after SYSCALL despite FMASK.TF (ignored: not a step of "
             "any code)");
}
TEST_HEADER(db_header);

TEST(db, syscall_tf, "SYSCALL with TF set from CPL 3: no #DB on the user's stack, task exits", 0)
{
    struct db_hazard_stats before, after;
    trap_db_hazard_stats(&before);
    struct task *t = user_task("systf", USER_PROG(uc_systf), 0, 0);
    if (!t)
        return;
    /* The task has not run yet: mark the bytes below its initial RSP. */
    uint64_t pte = as_lookup(&t->as, USER_STACK_VA);
    if (!CHECK(pte & PTE_P, "no stack page"))
        return;
    uint8_t *top = (uint8_t *)(pte & PTE_ADDR_MASK) + PAGE_SIZE;
    memset(top - SYSTF_GUARD_BYTES, SYSTF_PATTERN, SYSTF_GUARD_BYTES);
    task_wait(t);
    trap_db_hazard_stats(&after);
    CHECK(!t->faulted, "the task faulted (vector %u at %#lx)", t->fault.vector, t->fault.rip);
    CHECK_EQ(t->exit_status, 0);
    unsigned dirty = 0;
    for (unsigned i = SYSTF_OWN_BYTES; i < SYSTF_GUARD_BYTES; i++)
        dirty += top[-(int)i - 1] != SYSTF_PATTERN;
    CHECK(dirty == 0, "%u bytes below the user's RSP were written by the kernel", dirty);
    /* One #DB at the entry exactly where the boot probe saw the quirk, none elsewhere. */
    uint64_t quirks = after.syscall_tf - before.syscall_tf;
    CHECK(quirks == (trap_syscall_tf_quirk() ? 1 : 0),
          "%lu #DBs at the SYSCALL entry, but the "
          "boot probe %s the quirk",
          quirks, trap_syscall_tf_quirk() ? "saw" : "did not see");
    CHECK_EQ(after.foreign_steps, before.foreign_steps);
    test_diag("syscall_tf: %lu single step(s) at the SYSCALL entry (%s)", quirks,
              quirks ? "the emulator quirk" : "FMASK.TF honoured");
    int status;
    CHECK_EQ(task_join(t, &status), 0);
}

TEST(db, foreign_stack, "a single step at CPL 0 on a user-half RSP is handled on the IST stack", 0)
{
    struct db_hazard_stats before, after;
    trap_db_hazard_stats(&before);
    /* Unmapped in the runner's address space: a frame pushed there would fault, then #DF. */
    db_foreign_step(USER_STACK_TOP);
    trap_db_hazard_stats(&after);
    CHECK_EQ(after.foreign_steps - before.foreign_steps, 1);
    CHECK_EQ(after.foreign_rip, (uint64_t)db_foreign_trap);
    CHECK_EQ(after.syscall_tf, before.syscall_tf);
    CHECK(!(read_rflags() & RFLAGS_TF), "TF still set after the step");
}

/* The tests below put their own #DB handler in place of the model's (not recording). */
static trap_handler_t saved_db;
static bool db_replaced;

static void restore_db(void)
{
    if (db_replaced)
        trap_set_handler(VEC_DB, saved_db);
    db_replaced = false;
}
TEST_CLEANUP(restore_db);

/* A #DB inside the #DB handler: the handler sets TF and executes one instruction, so a
 * second #DB comes through the same gate and the CPU loads the IST stack pointer again. Only
 * because the entry moved the first frame off the IST stack does the inner #DB leave it
 * intact. Each handler clears TF in its frame: one step per level. */
static volatile unsigned nest_depth, nest_max, nest_calls;

static void nested_db(struct trap_frame *f)
{
    write_dr6(DR6_RESET);
    nest_calls++;
    if (++nest_depth > nest_max)
        nest_max = nest_depth;
    if (nest_depth == 1)
        __asm__ volatile("pushfq; orq %0, (%%rsp); popfq; nop" : : "i"(RFLAGS_TF) : "memory", "cc");
    f->rflags &= ~RFLAGS_TF; /* each level steps one instruction only */
    nest_depth--;
}

TEST(db, nested, "a #DB raised inside the #DB handler returns to it intact", 0)
{
    nest_depth = nest_max = nest_calls = 0;
    saved_db = trap_set_handler(VEC_DB, nested_db);
    db_replaced = true;
    volatile uint64_t canary = 0x0123456789ABCDEFULL;
    /* One step of the test's own code (the trap after the NOP), then one of the handler's. */
    __asm__ volatile("pushfq; orq %0, (%%rsp); popfq; nop; pushfq; andq %1, (%%rsp); popfq"
                     :
                     : "i"(RFLAGS_TF), "i"(~RFLAGS_TF)
                     : "memory", "cc");
    restore_db();
    CHECK_EQ(nest_calls, 2);
    CHECK_EQ(nest_max, 2);
    CHECK_EQ(nest_depth, 0);
    CHECK_EQ(canary, 0x0123456789ABCDEFULL);
}

/* Task A blocks inside its own #DB handler at its PARK_AT-th step; task B, a kernel task,
 * then single-steps its whole loop, every #DB of it entering on the same IST stack, and wakes
 * A, whose handler returns through its frame (moved by the entry to A's kernel stack) and
 * steps on. A is a kernel task or a user task (its #DBs come from CPL 3). */
#define STEP_N    40
#define PARK_AT   5
#define STEPS_MIN (3 * STEP_N + 2)
#define STEPS_MAX (3 * STEP_N + 3)
#define STEP_SUM  (STEP_N * (STEP_N + 1) / 2)

static struct task *stepper[2];
static struct task *volatile parked;
static volatile unsigned steps[2];
static uint64_t sums[2];
static bool b_saw_parked;

static void switch_db(struct trap_frame *f)
{
    (void)f;
    write_dr6(DR6_RESET);
    unsigned who = task_current() == stepper[0] ? 0 : 1;
    if (++steps[who] == PARK_AT && who == 0) {
        parked = task_current();
        task_block();
        parked = NULL;
    }
}

static void stepper_fn(void *arg)
{
    unsigned who = (unsigned)(uintptr_t)arg;
    if (who == 1)
        b_saw_parked = parked == stepper[0];
    sums[who] = db_step_loop(STEP_N);
    if (who == 1 && parked)
        task_wake(parked);
}

static void switch_in_handler(bool user_a)
{
    steps[0] = steps[1] = 0;
    sums[0] = sums[1] = 0;
    parked = NULL;
    b_saw_parked = false;
    saved_db = trap_set_handler(VEC_DB, switch_db);
    db_replaced = true;
    stepper[0] = user_a ? user_task("ustepper", USER_PROG(uc_step), STEP_N, 0)
                        : task_create("stepper", stepper_fn, (void *)0);
    stepper[1] = task_create("stepper", stepper_fn, (void *)1);
    int status[2] = {-1, -1};
    for (unsigned i = 0; i < 2; i++) {
        if (!CHECK(stepper[i] != NULL, "cannot create task %c", 'A' + i))
            return;
        CHECK_EQ(task_join(stepper[i], &status[i]), 0);
    }
    restore_db();
    if (user_a)
        sums[0] = (uint64_t)status[0]; /* the user program exits with its sum */
    else
        CHECK_EQ(status[0], 0);
    CHECK_EQ(status[1], 0);
    CHECK(b_saw_parked, "task B did not run while A was parked in its handler");
    for (unsigned i = 0; i < 2; i++) {
        CHECK_EQ(sums[i], STEP_SUM);
        CHECK(steps[i] >= STEPS_MIN && steps[i] <= STEPS_MAX, "task %c: %u steps, expected %u..%u",
              'A' + i, steps[i], STEPS_MIN, STEPS_MAX);
    }
}

TEST(db, switch_in_handler, "a kernel task suspended in its #DB handler while another steps", 0)
{
    switch_in_handler(false);
}

TEST(db, switch_in_user_handler, "a user task suspended in its #DB handler while another steps", 0)
{
    switch_in_handler(true);
}
