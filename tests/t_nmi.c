/*
 * nmi.*: the NMI entry (kernel/isr.S, nmi_entry) picks a stack the handler can use. NMI comes
 * in on an IST stack of its own; the entry moves the frame to the interrupted task's stack
 * when it has one, so a handler can be suspended (the stream policy does that with pmi=nmi)
 * while other tasks take NMIs; at CPL 0 on a user-half RSP (the SYSCALL window) the NMI is
 * handled on the IST stack, and the handler is told it must not wait (trap_can_block()).
 */
#include "ds/bts.h"
#include "kernel/apic.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/gdt.h"
#include "kernel/nmiwd.h"
#include "kernel/paging.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "kernel/trap.h"
#include "sched/sched.h"
#include "tests/btscheck.h"
#include "tests/test.h"
#include "tests/usertest.h"

extern uint64_t nmi_int2_regs(void);
extern void nmi_foreign_iret(uint64_t rsp);
extern const char nmi_int2_ret[], nmi_foreign_land[], nmi_foreign_land_end[];

#define NMI_WAIT_US 100000

/* Every test here puts its own NMI handler in place of the PMI's (pmi=nmi) or none. */
static trap_handler_t saved_nmi;
static bool nmi_replaced;

static void replace_nmi(trap_handler_t h)
{
    saved_nmi = trap_set_handler(VEC_NMI, h);
    nmi_replaced = true;
}

static void restore_nmi(void)
{
    if (nmi_replaced)
        trap_set_handler(VEC_NMI, saved_nmi);
    nmi_replaced = false;
}
TEST_CLEANUP(restore_nmi);

static bool on_kstack(const struct task *t, const void *p)
{
    uint64_t a = (uint64_t)p;
    return a >= t->kstack && a < t->kstack + KSTACK_PAGES * PAGE_SIZE;
}

static bool wait_count(volatile unsigned *n, unsigned want, uint64_t us)
{
    uint64_t end = rdtsc() + us * tsc_hz() / 1000000;
    while (*n < want && rdtsc() < end)
        cpu_relax();
    return *n >= want;
}

/*
 * Task A enters the NMI gate (INT 2, every register loaded with a pattern) and blocks inside
 * its handler. Task B then takes NMIS_B real self-NMIs, each entering on the same IST stack,
 * and wakes A, whose handler finds its frame as it left it and returns through it; A's code
 * checks every register. INT 2 runs the NMI entry without blocking NMIs, so B's arrive at
 * once: with the frame left on the IST stack, each of them would land on top of A's.
 */
#define NMIS_B 8

static struct task *nmi_task[2];
static struct task *volatile parked;
static volatile unsigned b_hits;
static bool a_can_block, a_on_kstack, a_intact, a_rip_ok, b_saw_parked, b_moved;
static struct trap_frame a_snap;

static void park_nmi(struct trap_frame *f)
{
    if (task_current() != nmi_task[0] || parked) {
        b_moved &= on_kstack(task_current(), f) && trap_can_block(f);
        b_hits++;
        return;
    }
    a_can_block = trap_can_block(f);
    a_on_kstack = on_kstack(nmi_task[0], f);
    a_rip_ok = f->rip == (uint64_t)nmi_int2_ret;
    a_snap = *f;
    parked = task_current();
    task_block();
    parked = NULL;
    a_intact = memcmp(f, &a_snap, sizeof(a_snap)) == 0;
}

static void nmi_task_fn(void *arg)
{
    if (arg == NULL) {
        uint64_t bad = nmi_int2_regs();
        task_exit((int)bad);
    }
    b_saw_parked = parked == nmi_task[0];
    for (unsigned i = 0; i < NMIS_B; i++) {
        apic_self_nmi();
        if (!wait_count(&b_hits, i + 1, NMI_WAIT_US))
            break;
    }
    if (parked)
        task_wake(parked);
}

TEST(nmi, switch_in_handler, "a task suspended in its NMI handler while another takes NMIs", 0)
{
    parked = NULL;
    b_hits = 0;
    a_can_block = a_on_kstack = a_intact = a_rip_ok = b_saw_parked = false;
    b_moved = true;
    replace_nmi(park_nmi);
    nmi_task[0] = task_create("nmi-park", nmi_task_fn, NULL);
    nmi_task[1] = task_create("nmi-self", nmi_task_fn, (void *)1);
    int status[2] = {-1, -1};
    for (unsigned i = 0; i < 2; i++) {
        if (!CHECK(nmi_task[i] != NULL, "cannot create task %c", 'A' + i))
            return;
        CHECK_EQ(task_join(nmi_task[i], &status[i]), 0);
    }
    restore_nmi();
    CHECK(b_saw_parked, "task B did not run while A was parked in its handler");
    CHECK(b_hits == NMIS_B, "task B took %u of its %u self-NMIs", b_hits, NMIS_B);
    CHECK(b_moved, "an NMI of task B was not handled on B's own stack");
    CHECK(a_rip_ok, "A's NMI frame does not return to nmi_int2_ret");
    CHECK(a_can_block, "A's handler was told it cannot block");
    CHECK(a_on_kstack, "A's NMI frame is not on A's kernel stack");
    CHECK(a_intact, "A's NMI frame changed while A was parked");
    CHECK(status[0] == 0, "A ended with %d: 1..15 RAX..R15, 16 RSP changed across the NMI",
          status[0]);
    CHECK_EQ(status[1], 0);
}

/*
 * The SYSCALL window, reached on every machine: a first self-NMI's handler sends a second
 * one, which stays pending (NMIs are blocked), then IRETs to nmi_foreign_land with RSP at the
 * top of the user stack, unmapped in the runner's address space (a frame pushed there would
 * fault, then #DF). The second NMI lands there, at CPL 0 on a user-half RSP: it is handled on
 * the NMI IST stack, and its handler is told it cannot block. That handler then does what a
 * #PF inside it would do: an IRET unblocks NMIs while a third one is pending. The third lands
 * on the NMI IST stack too (the classic nested NMI) and must leave the second's frame intact,
 * as the second must leave the first's.
 */
extern void nmi_unblock(void);

static volatile unsigned fs_hits;
static bool fs_first_intact, fs_second_intact, fs_can_block, fs_on_ist, fs_third_ok;
static uint64_t fs_rip, fs_rsp, fs_cs;

static void foreign_nmi(struct trap_frame *f)
{
    struct trap_frame snap = *f;
    switch (++fs_hits) {
    case 1:
        apic_self_nmi(); /* pending until the IRETQ in nmi_foreign_iret */
        nmi_foreign_iret(USER_STACK_TOP);
        fs_first_intact = memcmp(f, &snap, sizeof(snap)) == 0;
        break;
    case 2:
        fs_rip = f->rip;
        fs_rsp = f->rsp;
        fs_cs = f->cs;
        fs_can_block = trap_can_block(f);
        fs_on_ist = ist_stack_contains((uint64_t)f);
        apic_self_nmi(); /* pending until the IRETQ in nmi_unblock */
        nmi_unblock();
        fs_second_intact = memcmp(f, &snap, sizeof(snap)) == 0;
        break;
    default:
        fs_third_ok = f->rip != (uint64_t)nmi_foreign_land && ist_stack_contains((uint64_t)f) &&
                      !trap_can_block(f);
        break;
    }
}

TEST(nmi, foreign_stack, "an NMI at CPL 0 on a user-half RSP is handled on the IST stack", 0)
{
    fs_hits = 0;
    fs_first_intact = fs_second_intact = fs_can_block = fs_on_ist = fs_third_ok = false;
    fs_rip = fs_rsp = fs_cs = 0;
    replace_nmi(foreign_nmi);
    irq_disable();
    apic_self_nmi();
    bool ok = wait_count(&fs_hits, 3, NMI_WAIT_US);
    irq_enable();
    restore_nmi();
    if (!CHECK(ok, "%u of 3 NMIs arrived", fs_hits))
        return;
    CHECK_EQ(fs_rsp, USER_STACK_TOP);
    CHECK_EQ(fs_cs & 3, 0);
    CHECK(fs_rip >= (uint64_t)nmi_foreign_land && fs_rip <= (uint64_t)nmi_foreign_land_end,
          "the second NMI interrupted %#lx, not nmi_foreign_land..nmi_foreign_land_end", fs_rip);
    CHECK(fs_on_ist, "the second NMI's frame is not on an IST stack");
    CHECK(!fs_can_block, "the second NMI's handler was told it can block");
    CHECK(fs_third_ok, "the third NMI was not handled on the IST stack as one that cannot block");
    CHECK(fs_second_intact, "the second NMI's frame changed under the third");
    CHECK(fs_first_intact, "the first NMI's frame changed under the nested ones");
}

/*
 * The threshold interrupt as an NMI (pmi=nmi) in the SYSCALL window: a stream trace whose ring
 * is full and whose hardware buffer is at its threshold, and the PMI handler entered from an
 * NMI taken on a user-half RSP (as in nmi.foreign_stack). Its frame is on the IST stack, so
 * it must not suspend the task: the full callback is not called, the records stay in the
 * hardware buffer for a later drain, and nothing is counted lost.
 */
static struct bts_trace pw_trace;
static volatile unsigned pw_hits;
static unsigned pw_full_calls;
static bool pw_can_block;
static uint64_t pw_rsp;

static int pw_full(struct bts_trace *t, void *arg)
{
    (void)t;
    (void)arg;
    pw_full_calls++;
    return E_STATE; /* nobody drains here: the handler would count the rest lost */
}

static void pw_nmi(struct trap_frame *f)
{
    if (++pw_hits == 1) {
        apic_self_nmi(); /* pending until the IRETQ in nmi_foreign_iret */
        nmi_foreign_iret(USER_STACK_TOP);
        return;
    }
    pw_rsp = f->rsp;
    pw_can_block = trap_can_block(f);
    saved_nmi(f); /* the threshold interrupt's handler (ds/pmi.c) */
}

/* Puts n records numbered from *seq into the hardware buffer, from its base. */
static void pw_fill(struct bts_trace *t, uint64_t n, uint64_t *seq)
{
    for (uint64_t i = 0; i < n; i++, (*seq)++)
        t->buf[i] = (struct bts_record){0x1000 + *seq, 0x2000 + *seq, 0};
    t->ds->bts_index = t->ds->bts_base + n * BTS_RECORD_SIZE;
}

TEST(nmi, pmi_cannot_wait, "a stream PMI on the NMI IST stack keeps its records, never waits", 0)
{
    if (!bts_require())
        return;
    if ((apic_read(APIC_LVT_PC) & APIC_LVT_DM_MASK) != APIC_LVT_DM_NMI) {
        test_skip("the threshold interrupt is a fixed vector (pmi=nmi makes it an NMI)");
        return;
    }
    struct bts_config cfg =
        cfg_interrupt(16, 0, 32, BTS_POLICY_STREAM, BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace *t = &pw_trace;
    if (!trace_setup(t, &cfg))
        return;
    bts_set_callbacks(t, pw_full, NULL, NULL);
    /* Fill the ring through drains that cannot wait, then the buffer up to its threshold. */
    uint64_t at = (t->ds->bts_thresh - t->ds->bts_base) / BTS_RECORD_SIZE, seq = 0;
    struct bts_status st = {0};
    for (unsigned i = 0; i < 2 * cfg.ring_records && st.count < cfg.ring_records; i++) {
        pw_fill(t, at, &seq);
        bts_drain_hw(t, false);
        bts_status(t, &st);
    }
    CHECK_EQ(st.count, cfg.ring_records);
    uint64_t first = seq;
    pw_fill(t, at, &seq);
    uint64_t spurious = bts_spurious_pmis();
    pw_hits = pw_full_calls = 0;
    pw_can_block = true;
    pw_rsp = 0;
    replace_nmi(pw_nmi);
    irq_disable();
    apic_self_nmi();
    bool ok = wait_count(&pw_hits, 2, NMI_WAIT_US);
    irq_enable();
    restore_nmi();
    if (CHECK(ok, "%u of 2 NMIs arrived", pw_hits)) {
        CHECK_EQ(pw_rsp, USER_STACK_TOP);
        CHECK(!pw_can_block, "the PMI's frame was not on an IST stack");
        CHECK(pw_full_calls == 0, "the PMI waited for the tracer %u times on the IST stack",
              pw_full_calls);
        bts_status(t, &st);
        CHECK_EQ(st.pmis, 1);
        CHECK_EQ(st.lost, 0);
        CHECK_EQ(st.count, cfg.ring_records);
        CHECK_EQ(bts_spurious_pmis(), spurious);
        CHECK_EQ(t->ds->bts_index, t->ds->bts_base + at * BTS_RECORD_SIZE);
        CHECK_EQ(t->buf[0].from, 0x1000 + first);
        CHECK_EQ(t->buf[at - 1].from, 0x1000 + first + at - 1);
    }
    trace_teardown(t);
}

/*
 * An NMI from CPL 3: the NMI watchdog (the HPET through the I/O APIC) fires while a user task
 * spins in uc_nmi_wait. Its frame must be on that task's kernel stack (TSS RSP0), where the
 * handler may block: it parks the task there, as the stream policy would. A kernel task then
 * unblocks NMIs with an IRET (as any interrupt return would) and takes NMIS_B self-NMIs on the
 * same IST stack, and wakes the user task, whose handler finds its frame (every register of
 * the loop in it) unchanged and ends the spin through the task's data page. Without the
 * watchdog no NMI reaches user mode on every machine: skipped.
 */
#define USER_WD_US  50000           /* well ahead: the HPET comparator matches on equality */
#define USER_SPIN_N 100000000000ULL /* bounds the spin; the NMI ends it long before */
static struct task *user_spinner, *user_helper;
static volatile uint64_t *user_flag;
static volatile unsigned uw_hits, uw_b_hits;
static bool uw_on_kstack, uw_can_block, uw_intact, uw_b_moved, uw_b_saw_parked;
static uint64_t uw_cs, uw_rip;
static struct trap_frame uw_snap;

static void user_wd_fired(struct trap_frame *f)
{
    uw_hits++;
    uw_cs = f->cs;
    uw_rip = f->rip;
    uw_on_kstack = on_kstack(user_spinner, f);
    uw_can_block = trap_can_block(f);
    /* Parks even when told not to: a frame left on the IST stack is then overwritten. */
    uw_snap = *f;
    parked = task_current();
    task_block();
    parked = NULL;
    uw_intact = memcmp(f, &uw_snap, sizeof(uw_snap)) == 0;
    *user_flag = 1;
}

static void uw_self_nmi(struct trap_frame *f)
{
    uw_b_moved &= task_current() == user_helper && on_kstack(user_helper, f) && trap_can_block(f);
    uw_b_hits++;
}

static void uw_helper_fn(void *arg)
{
    (void)arg;
    while (!parked && user_spinner->state != TASK_ZOMBIE)
        task_yield(); /* the user task spins until the watchdog parks it */
    uw_b_saw_parked = parked == user_spinner;
    if (!uw_b_saw_parked)
        return;
    nmi_unblock(); /* the parked NMI handler left NMIs blocked */
    for (unsigned i = 0; i < NMIS_B; i++) {
        apic_self_nmi();
        if (!wait_count(&uw_b_hits, i + 1, NMI_WAIT_US))
            break;
    }
    task_wake(parked);
}

TEST(nmi, from_user, "a user task parked in an NMI from CPL 3 while another takes NMIs", 0)
{
    if (!nmi_watchdog_available()) {
        test_skip("%s", nmi_watchdog_describe());
        return;
    }
    parked = NULL;
    uw_hits = uw_b_hits = 0;
    uw_on_kstack = uw_can_block = uw_intact = uw_b_saw_parked = false;
    uw_b_moved = true;
    uw_cs = uw_rip = 0;
    user_spinner = user_task("nmi-wait", USER_PROG(uc_nmi_wait), USER_SPIN_N, USER_DATA_VA);
    if (!user_spinner)
        return;
    uint64_t pte = as_lookup(&user_spinner->as, USER_DATA_VA);
    if (!CHECK(pte & PTE_P, "no data page"))
        return;
    user_flag = (volatile uint64_t *)(pte & PTE_ADDR_MASK);
    *user_flag = 0;
    user_helper = task_create("nmi-helper", uw_helper_fn, NULL);
    if (!CHECK(user_helper != NULL, "cannot create the helper task"))
        return;
    replace_nmi(uw_self_nmi);
    nmi_watchdog_arm_us(USER_WD_US, user_wd_fired); /* replaces the framework's for this test */
    int status, hstatus;
    CHECK_EQ(task_join(user_spinner, &status), 0);
    CHECK_EQ(task_join(user_helper, &hstatus), 0);
    restore_nmi();
    CHECK_EQ(status, 0);
    CHECK_EQ(hstatus, 0);
    if (!CHECK(uw_hits == 1, "the watchdog NMI arrived %u times while the task ran", uw_hits))
        return;
    CHECK(uw_cs & 3, "the NMI interrupted CPL 0 at %#lx, not the user loop", uw_rip);
    CHECK(uw_rip >= USER_CODE_VA &&
              uw_rip < USER_CODE_VA + (uint64_t)(uc_nmi_wait_end - uc_nmi_wait_start),
          "the NMI interrupted %#lx, not uc_nmi_wait", uw_rip);
    CHECK(uw_on_kstack, "the NMI frame is not on the task's kernel stack");
    CHECK(uw_can_block, "the handler was told it cannot block");
    CHECK(uw_b_saw_parked, "the helper did not run while the user task was parked");
    CHECK(uw_b_hits == NMIS_B, "the helper took %u of its %u self-NMIs", uw_b_hits, NMIS_B);
    CHECK(uw_b_moved, "a self-NMI of the helper was not handled on its own stack");
    CHECK(uw_intact, "the user task's NMI frame changed while it was parked");
}
