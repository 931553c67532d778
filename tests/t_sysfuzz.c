/*
 * sys.fuzz: the system-call boundary under random arguments. A user task (uc_fuzz in
 * tests/user_code.S) makes one call at a time, the number and six argument registers written
 * by this test into a block on the task's stack page; after each call the test checks the
 * result against the call's documented ABI (sched/syscall.h), then writes the next one.
 *
 * Numbers: every number below the kernel's SYS_COUNT (the size of sched/syscall.c's table, so
 * a new call is fuzzed without a change here), and numbers past it. Arguments are drawn from
 * classes: small, edge and large integers, negative ones, lengths that overflow, pointers into
 * kernel text, kernel data (the stack protector's canary among them), the task's own kernel
 * stack, another task's DS area and trace buffer, other tasks' structures and (through the
 * kernel's identity map) their pages, unmapped user pages, non-canonical addresses, ranges
 * straddling a mapped/unmapped boundary, the read-only code page and the task's own data page.
 *
 * The oracle, per call: the result is one of the kernel's E_* codes or the documented success;
 * a pointer argument is accepted exactly when a reference walk of the task's page tables says
 * [ptr, ptr+len) is user memory with the access the call needs (len 0 is always accepted; an
 * overflowing ptr+len or len*size never is); the task did not fault (a fault at CPL 0 is a
 * kernel fault, contained by the scheduler's supervision: the test fails and the next test
 * runs) and did not end unless it called SYS_EXIT, whose status it must carry; the task's user
 * memory changed only where a successful call says it wrote; a kernel canary array and the
 * stack protector's canary are unchanged. Alongside, a traced bystander task (uc_iso) runs a
 * round between every two calls; each bystander's trace must hold exactly its own branches.
 * At the end the frame allocator and the heap have what they had before.
 *
 * Options: sysfuzz.calls=N calls (default FUZZ_CALLS, a tenth with volume=quick). The calls
 * are drawn from seed=, from a generator of this test's own, so `tests=sys.fuzz seed=S`
 * repeats the sequence of numbers and argument classes; a failure prints the seed, the call's
 * index, number, arguments with their classes, and the result.
 */
#include "ds/bts.h"
#include "kernel/cmdline.h"
#include "kernel/errno.h"
#include "kernel/mem.h"
#include "kernel/paging.h"
#include "kernel/printf.h"
#include "kernel/smp.h"
#include "kernel/stackprot.h"
#include "kernel/string.h"
#include "kernel/trap.h"
#include "kernel/user.h"
#include "sched/sched.h"
#include "sched/syscall.h"
#include "tests/btscheck.h"
#include "tests/test.h"
#include "tests/usertest.h"

#define FUZZ_CALLS     2000
#define FUZZ_SALT      0x5c5f7a2ull /* this test's stream of seed= */
#define NARGS          6
#define CALL_YIELDS    64   /* the runner's yields before a call must have returned */
#define BY_ROUNDS      24   /* each bystander's rounds */
#define BY_HW          512  /* records: 24 rounds of at most 8 + 3, below the threshold */
#define OWN_HW         256  /* the fuzz task's DS buffer, circular or interrupt mode */
#define OWN_RING       1024 /* and its ring in interrupt mode */
#define MAX_RECORDS    1024
#define CANARY_BYTES   256
#define NELEM(a)       (sizeof(a) / sizeof((a)[0]))
/* The records at most between the runner's count of the fuzz task's trace and the call it
 * writes: the SYSRETQ of the previous yield (to uc_fuzz_jmp), that JMP, the call's SYSCALL,
 * and in interrupt mode a threshold interrupt's IRETQ back to user code. */
#define WINDOW_RECORDS 4

static uint64_t calls_opt = FUZZ_CALLS;
static bool calls_given;
OPTION_U64("sysfuzz.calls", calls_opt, calls_given);

/* The call block uc_fuzz reads: keep in step with tests/user_code.S. */
struct fuzz_block {
    uint64_t nr, a[NARGS], result, done;
};
#define BLOCK_VA USER_STACK_VA

/* What an argument is, in the documented ABI: the draw favours the classes that reach past
 * the first check (a pointer is mostly a pointer, an operation mostly a small number). */
enum role {
    R_ANY,
    R_INT, /* a number: any class */
    R_OP,
    R_PTR,
    R_LEN,  /* of the pointer before it, in bytes */
    R_NREC, /* of the pointer before it, in records (struct bts_record) */
    R_CPU,  /* a CPU number: the task's own, or none online (see arg()) */
};
struct call_spec {
    const char *name;
    enum role role[NARGS];
    bool ends; /* ends the task: drawn a quarter as often, the task is made anew after it */
};
/* The calls of sched/syscall.h. A number below SYS_COUNT without an entry here is still
 * fuzzed (every argument of any class, the generic oracle) but fails the test until its
 * documented results are described here and in check_call(). */
static const struct call_spec specs[] = {
    [SYS_YIELD] = {"SYS_YIELD", {R_ANY}, false},
    [SYS_EXIT] = {"SYS_EXIT", {R_INT}, true},
    [SYS_WRITE] = {"SYS_WRITE", {R_PTR, R_LEN}, false},
    [SYS_TRACE] = {"SYS_TRACE", {R_OP, R_PTR, R_NREC}, false},
    [SYS_MIGRATE] = {"SYS_MIGRATE", {R_CPU}, false},
};

enum cls {
    C_SMALL,
    C_EDGE,
    C_LARGE,
    C_NEG,
    C_OVERFLOW,
    C_KTEXT,
    C_KDATA,
    C_KSTACK,
    C_DS,
    C_TASK,
    C_ALIAS,
    C_UNMAPPED,
    C_NONCANON,
    C_STRADDLE,
    C_RO,
    C_OWN,
    C_WRAP, /* a length that takes the pointer before it past 2^64, or to just below */
    C_COUNT
};
static const char *const cls_name[C_COUNT] = {
    [C_SMALL] = "small",
    [C_EDGE] = "edge",
    [C_LARGE] = "large",
    [C_NEG] = "negative",
    [C_OVERFLOW] = "overflow",
    [C_KTEXT] = "ktext",
    [C_KDATA] = "kdata",
    [C_KSTACK] = "kstack",
    [C_DS] = "ds",
    [C_TASK] = "task",
    [C_ALIAS] = "alias",
    [C_UNMAPPED] = "unmapped",
    [C_NONCANON] = "noncanonical",
    [C_STRADDLE] = "straddle",
    [C_RO] = "ro",
    [C_OWN] = "own",
    [C_WRAP] = "wrap",
};

static uint8_t kcanary[CANARY_BYTES]; /* kernel data the calls are pointed at */
static uint8_t data_want[PAGE_SIZE];
static struct bts_record got[MAX_RECORDS], want[MAX_RECORDS];

struct fuzz {
    uint64_t seed, rng, index, calls;
    struct task *tk;
    struct bts_trace *tr; /* the fuzz task's own trace, or NULL */
    struct fuzz_block *blk;
    uint8_t *data; /* the task's data page, through the identity map */
    uint64_t code_sum;
    struct task *by;
    struct bts_trace *by_tr;
    unsigned by_k;
    uint8_t cls[NARGS];
    uint64_t last_ptr; /* the call's latest pointer argument: what C_WRAP wraps */
    bool traced;       /* a BTS backend is there */
    /* Tallies for the summary line. */
    uint64_t per_nr[SYS_COUNT + 1], ok, errs, efault, tasks, bystanders, drained;
    uint64_t ptr_seen[C_COUNT], ptr_taken[C_COUNT]; /* pointer arguments, and those accepted */
};

static uint64_t next(struct fuzz *f)
{
    f->rng ^= f->rng >> 12;
    f->rng ^= f->rng << 25;
    f->rng ^= f->rng >> 27;
    return f->rng * 0x2545F4914F6CDD1DULL;
}

static uint64_t below(struct fuzz *f, uint64_t n)
{
    return next(f) % n;
}

static uint64_t page_alias(const struct task *t, uint64_t va)
{
    return as_lookup(&t->as, va) & PTE_ADDR_MASK;
}

static uint64_t draw(struct fuzz *f, enum cls c)
{
    static const uint64_t edges[] = {
        SYS_WRITE_MAX - 1, SYS_WRITE_MAX, SYS_WRITE_MAX + 1, PAGE_SIZE - 1, PAGE_SIZE,
        PAGE_SIZE + 1,     0x7fffffff,    0x80000000,        0xffffffff,    0x100000000,
    };
    static const uint64_t overflows[] = {
        UINT64_MAX,
        UINT64_MAX / sizeof(struct bts_record),
        UINT64_MAX / sizeof(struct bts_record) + 1,
        (UINT64_MAX / sizeof(struct bts_record)) * 2 + 1, /* records whose bytes wrap twice */
        1ull << 60,
        1ull << 63,
        UINT64_MAX - PAGE_SIZE + 1,
        USER_END - USER_DATA_VA, /* the data page to the end of the user half */
        (USER_END - USER_DATA_VA) / sizeof(struct bts_record) + 1,
        USER_END - USER_BASE + 1,
    };
    uint64_t r = next(f);
    switch (c) {
    case C_SMALL:
        return r % 17;
    case C_EDGE:
        return edges[r % NELEM(edges)];
    case C_LARGE:
        return next(f);
    case C_NEG:
        return r & 1 ? -(r % 4097) - 1 : (uint64_t)INT64_MIN + (r % 3);
    case C_OVERFLOW:
        return overflows[r % NELEM(overflows)];
    case C_KTEXT:
        return (uint64_t)syscall_entry + r % 256;
    case C_KDATA:
        return r & 1 ? (uint64_t)kcanary + (r >> 1) % CANARY_BYTES
                     : (uint64_t)&__stack_chk_guard - 8 + (r >> 1) % 16;
    case C_KSTACK:
        return f->tk->kstack + r % (KSTACK_PAGES * PAGE_SIZE);
    case C_DS: {
        struct bts_trace *t = f->by_tr ? f->by_tr : f->tr;
        if (!t) /* no backend, no DS area: the frame allocator, kernel data all the same */
            return (uint64_t)&kernel_frames + r % sizeof(kernel_frames);
        return r & 1 ? (uint64_t)t->ds + (r >> 1) % 64 : (uint64_t)t->buf + (r >> 1) % 256;
    }
    case C_TASK:
        return (r & 1 ? (uint64_t)f->by : (uint64_t)task_current()) + (r >> 1) % 128;
    case C_ALIAS:
        /* The same frames as user pages, by their kernel addresses: the bystander's data
         * page and the task's own. */
        return (r & 1 ? page_alias(f->by, USER_DATA_VA) : page_alias(f->tk, USER_DATA_VA)) +
               (r >> 1) % PAGE_SIZE;
    case C_UNMAPPED:
        return USER_BASE + 0x400000 + (r % 0x10000) * PAGE_SIZE + (r >> 32) % PAGE_SIZE;
    case C_NONCANON: {
        static const uint64_t bases[] = {1ull << 47, 0x8000000000000000ull, 0xdead000000000000ull,
                                         (1ull << 47) - 8, 0xffff7fffffffff00ull};
        return bases[r % NELEM(bases)] + (r >> 32) % 16;
    }
    case C_STRADDLE: {
        /* A few bytes before a boundary: mapped to unmapped (the end of the data and code
         * pages), unmapped to mapped (the start of the data page), kernel to user and user
         * to the end of the user half. */
        static const uint64_t edge_va[] = {USER_DATA_VA + PAGE_SIZE, USER_DATA_VA,
                                           USER_CODE_VA + PAGE_SIZE, USER_BASE, USER_END};
        return edge_va[r % NELEM(edge_va)] - 1 - (r >> 32) % 64;
    }
    case C_RO:
        return USER_CODE_VA + r % PAGE_SIZE;
    case C_OWN:
        return USER_DATA_VA + r % PAGE_SIZE;
    default:
        return 0;
    }
}

static uint64_t arg(struct fuzz *f, enum role role, unsigned i)
{
    /* The task's own pages four times over, its read-only one and the straddling ranges
     * three times: a call must get past its first checks often. */
    static const enum cls ptr[] = {C_KTEXT,    C_KDATA,    C_KSTACK, C_DS,  C_TASK, C_ALIAS,
                                   C_UNMAPPED, C_NONCANON, C_RO,     C_RO,  C_RO,   C_STRADDLE,
                                   C_STRADDLE, C_STRADDLE, C_OWN,    C_OWN, C_OWN,  C_OWN};
    static const enum cls len[] = {C_SMALL, C_SMALL,    C_SMALL, C_EDGE, C_LARGE,
                                   C_NEG,   C_OVERFLOW, C_WRAP,  C_WRAP};
    /* The harness drives its task from the task's CPU (the task loops: call, yield), so a
     * migration may not move it: the number is the task's own CPU, or any other value that is
     * not an online CPU. Moves are bts.smp.migrate's. */
    if (role == R_CPU) {
        uint64_t v = arg(f, R_ANY, i);
        if (below(f, 2) || (v < SMP_MAX_CPUS && smp_cpu((unsigned)v)))
            v = f->tk->cpu;
        return v;
    }
    enum cls c;
    /* An operation: half the time the one that takes the pointer (the drain), else any of
     * them or the first unknown one. */
    if (role == R_OP && below(f, 4) != 0) {
        f->cls[i] = C_SMALL;
        return below(f, 2) ? TRACE_OP_DRAIN : below(f, TRACE_OP_DRAIN + 2);
    }
    if (role == R_PTR && below(f, 5) != 0)
        c = ptr[below(f, NELEM(ptr))];
    else if ((role == R_LEN || role == R_NREC) && below(f, 5) != 0)
        c = len[below(f, NELEM(len))];
    else
        c = (enum cls)below(f, C_COUNT);
    f->cls[i] = (uint8_t)c;
    if (c == C_WRAP) {
        uint64_t size = role == R_NREC ? sizeof(struct bts_record) : 1;
        return (0 - f->last_ptr) / size + below(f, 3);
    }
    uint64_t v = draw(f, c);
    if (role == R_PTR)
        f->last_ptr = v;
    return v;
}

/* The reference check, written apart from the kernel's: [p, p+len) lies in the user half,
 * without wrapping, and every page of it is a present user page, writable if asked. */
static bool ref_ok(const struct task *t, uint64_t p, uint64_t len, bool write)
{
    if (len == 0)
        return true;
    uint64_t last = p + (len - 1);
    if (last < p || p < USER_BASE || last >= USER_END)
        return false;
    for (uint64_t pg = p / PAGE_SIZE; pg <= last / PAGE_SIZE; pg++) {
        uint64_t e = as_lookup(&t->as, pg * PAGE_SIZE);
        if (!(e & PTE_P) || !(e & PTE_U) || (write && !(e & PTE_W)))
            return false;
    }
    return true;
}

static bool is_errno(int64_t r)
{
    switch (r) {
#define ERR_CASE(name, value, msg) case name:
        BTSX_ERRORS(ERR_CASE)
#undef ERR_CASE
        return true;
    default:
        return false;
    }
}

static uint64_t checksum(const uint8_t *p, uint64_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (uint64_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* The failure, with all it takes to repeat it. */
static void report(struct fuzz *f, uint64_t nr, const uint64_t *a, int64_t r, const char *what)
{
    const char *name = nr < NELEM(specs) && specs[nr].name ? specs[nr].name : "no such call";
    test_diag("sysfuzz: seed=%#lx call %lu: nr=%#lx (%s) args %#lx %#lx %#lx %#lx %#lx %#lx",
              f->seed, f->index, nr, name, a[0], a[1], a[2], a[3], a[4], a[5]);
    test_diag("sysfuzz: classes %s %s %s %s %s %s -> %#lx (%s)", cls_name[f->cls[0]],
              cls_name[f->cls[1]], cls_name[f->cls[2]], cls_name[f->cls[3]], cls_name[f->cls[4]],
              cls_name[f->cls[5]], (uint64_t)r, r < 0 ? err_name((int)r) : "ok");
    test_fail("sysfuzz: call %lu %s: %s (repeat: tests=sys.fuzz seed=%lu sysfuzz.calls=%lu)",
              f->index, name, what, f->seed, f->index + 1);
}

/* Every record a user-only trace of the fuzz task holds: a branch of its program within it,
 * or a kernel-to-user return into it. The records may lie at any alignment (a drain into a
 * user buffer): each is copied out before it is read. */
static bool own_records_ok(const void *records, uint64_t n)
{
    uint64_t lo = USER_CODE_VA, hi = USER_CODE_VA + (uint64_t)(uc_fuzz_end - uc_fuzz_start);
    for (uint64_t i = 0; i < n; i++) {
        struct bts_record r;
        memcpy(&r, (const uint8_t *)records + i * sizeof(r), sizeof(r));
        bool from_ok = (r.from >= lo && r.from < hi) || kernel_to_user_return(&r);
        if (!from_ok || r.to < lo || r.to >= hi)
            return false;
    }
    return true;
}

/* A new fuzz task: traced (user branches, recording on until it says otherwise) every other
 * time when there is a backend, so that SYS_TRACE meets both states; the traces take turns
 * between a circular buffer and a ring with the stop policy, the drain's two ways. */
static bool fuzz_start(struct fuzz *f)
{
    f->tk = user_task("fuzz", USER_PROG(uc_fuzz), BLOCK_VA, 0);
    if (!f->tk)
        return false;
    f->tasks++;
    f->tr = NULL;
    if (f->traced && (f->tasks & 1)) {
        struct bts_config cfg = f->tasks & 2 ? cfg_circular(OWN_HW, BTS_CPL_USER)
                                             : cfg_interrupt(OWN_HW, 0, OWN_RING, BTS_POLICY_STOP,
                                                             BTS_EVENTS_BRANCHES, BTS_CPL_USER);
        f->tr = trace_alloc(&cfg);
        if (!f->tr)
            return false;
        task_set_trace(f->tk, task_current(), f->tr);
        bts_enable(f->tr);
    }
    f->blk = (struct fuzz_block *)page_alias(f->tk, BLOCK_VA);
    f->data = (uint8_t *)page_alias(f->tk, USER_DATA_VA);
    for (unsigned i = 0; i < PAGE_SIZE; i++)
        f->data[i] = (uint8_t)next(f);
    memcpy(data_want, f->data, PAGE_SIZE);
    f->code_sum = checksum((const uint8_t *)page_alias(f->tk, USER_CODE_VA), PAGE_SIZE);
    return true;
}

/* The fuzz task has ended: its code and stack pages and its trace are as they must be; it
 * goes. */
static void fuzz_end(struct fuzz *f)
{
    CHECK(checksum((const uint8_t *)page_alias(f->tk, USER_CODE_VA), PAGE_SIZE) == f->code_sum,
          "the fuzz task's read-only code page changed");
    /* Nothing writes its stack page but the runner, in the block: uc_fuzz never pushes. */
    const uint8_t *stack = (const uint8_t *)f->blk;
    for (uint64_t i = sizeof(struct fuzz_block); i < PAGE_SIZE; i++)
        if (!CHECK(stack[i] == 0, "the fuzz task's stack page changed at %#lx", i))
            break;
    if (f->tr) {
        int64_t n = trace_collect(f->tr, got, MAX_RECORDS);
        CHECK(n >= 0 && own_records_ok(got, (uint64_t)n),
              "the fuzz task's trace holds a record that is not its own (%ld records)", n);
    }
    task_join(f->tk, NULL);
    trace_free(f->tr);
    f->tk = NULL;
    f->tr = NULL;
}

static bool bystander_start(struct fuzz *f)
{
    f->by_k = 1 + (unsigned)below(f, 8);
    f->by = user_task("bystander", USER_PROG(uc_iso), f->by_k, BY_ROUNDS);
    if (!f->by)
        return false;
    f->by_tr = NULL;
    if (f->traced) {
        struct bts_config cfg =
            cfg_interrupt(BY_HW, 0, BY_HW, BTS_POLICY_STOP, BTS_EVENTS_BRANCHES, BTS_CPL_USER);
        f->by_tr = trace_alloc(&cfg);
        if (!f->by_tr)
            return false;
        task_set_trace(f->by, task_current(), f->by_tr);
        bts_enable(f->by_tr);
    }
    return true;
}

/* A bystander that has ended: it exited normally, its data page is as it left it (uc_iso
 * never writes it: all zero) and its trace holds exactly its own branches. */
static void bystander_end(struct fuzz *f)
{
    task_wait(f->by);
    CHECK(!f->by->faulted && f->by->exit_status == (int)f->by_k,
          "bystander %u: faulted %d, exit status %d", f->by->id, f->by->faulted,
          f->by->exit_status);
    const uint8_t *d = (const uint8_t *)page_alias(f->by, USER_DATA_VA);
    for (unsigned i = 0; i < PAGE_SIZE; i++)
        if (!CHECK(d[i] == 0, "bystander %u: its data page changed at %#x", f->by->id, i))
            break;
    if (f->by_tr && !test_failed()) {
        struct expect e;
        exp_init(&e, want, MAX_RECORDS);
        iso_expect(&e, f->by_k, BY_ROUNDS);
        int64_t n = trace_collect(f->by_tr, got, MAX_RECORDS);
        if (!match_user(got, n, &e))
            test_diag("^ in the trace of bystander %u (k=%u)", f->by->id, f->by_k);
    }
    f->bystanders++;
    task_join(f->by, NULL);
    trace_free(f->by_tr);
    f->by = NULL;
    f->by_tr = NULL;
}

/* The documented result of call nr(a) (sched/syscall.h, sched/syscall.c): NULL if r is it,
 * else what is wrong. before/after: the fuzz task's trace's count around the call. *wrote:
 * the bytes of the data page a successful call wrote. */
static const char *check_call(struct fuzz *f, uint64_t nr, const uint64_t *a, int64_t r,
                              uint64_t before, uint64_t after, uint64_t *w_off, uint64_t *w_len)
{
    *w_len = 0;
    if (nr >= SYS_COUNT)
        return r == E_INVAL ? NULL : "a number past SYS_COUNT must give E_INVAL";
    switch (nr) {
    case SYS_YIELD:
        return r == 0 ? NULL : "SYS_YIELD returns 0";
    case SYS_MIGRATE:
        if (a[0] < SMP_MAX_CPUS && smp_cpu((unsigned)a[0]))
            return r == 0 ? NULL : "a migration to an online CPU returns 0";
        return r == E_INVAL ? NULL : "a number that is no online CPU must give E_INVAL";
    case SYS_WRITE:
        if (a[1] > SYS_WRITE_MAX)
            return r == E_RANGE ? NULL : "a length over SYS_WRITE_MAX must give E_RANGE";
        if (!ref_ok(f->tk, a[0], a[1], false))
            return r == E_FAULT ? NULL
                                : "a buffer outside the task's readable pages was not "
                                  "refused with E_FAULT";
        return r == (int64_t)a[1] ? NULL : "a readable buffer must be written whole";
    case SYS_TRACE:
        if (!f->tr)
            return r == E_STATE ? NULL : "without a trace the answer is E_STATE";
        switch (a[0]) {
        case TRACE_OP_ENABLE:
        case TRACE_OP_DISABLE:
            return r == 0 || is_errno(r) ? NULL : "enable/disable give 0 or an error";
        case TRACE_OP_COUNT:
            return r >= 0 && (uint64_t)r >= before && (uint64_t)r <= after
                       ? NULL
                       : "the count is not between the counts before and after the call";
        case TRACE_OP_DRAIN:
            if (a[2] > UINT64_MAX / sizeof(struct bts_record) ||
                !ref_ok(f->tk, a[1], a[2] * sizeof(struct bts_record), true))
                return r == E_FAULT ? NULL
                                    : "a buffer outside the task's writable pages was "
                                      "not refused with E_FAULT";
            if (r < 0 || (uint64_t)r > a[2] || (uint64_t)r > before + WINDOW_RECORDS)
                return "a drain returns 0..max records, at most those the trace held";
            /* Nothing lost: what it returned and what is left are what there was. */
            /* (A full circular buffer overwrites its oldest; a stop ring drops nothing.) */
            if ((f->tr->cfg.mode != BTS_MODE_CIRCULAR || before < OWN_HW) &&
                (uint64_t)r + after < before)
                return "the drain removed records it did not return";
            if (r > 0 && (a[1] < USER_DATA_VA || a[1] + (uint64_t)r * sizeof(struct bts_record) >
                                                     USER_DATA_VA + PAGE_SIZE))
                return "a drain wrote outside the pages the fuzzer can check";
            *w_off = a[1] - USER_DATA_VA;
            *w_len = (uint64_t)r * sizeof(struct bts_record);
            if (r > 0 && !own_records_ok(f->data + *w_off, (uint64_t)r))
                return "a drained record is not one of the task's own branches";
            f->drained += (uint64_t)r;
            return NULL;
        default:
            return r == E_INVAL ? NULL : "an unknown operation gives E_INVAL";
        }
    default:
        return "this call has no documented results in tests/t_sysfuzz.c's check_call()";
    }
}

/* One call: written to the block, made by the task, checked. false: stop (a failure). */
static bool fuzz_call(struct fuzz *f)
{
    uint64_t nr, a[NARGS];
    uint64_t pick = below(f, 8 * SYS_COUNT + SYS_COUNT);
    if (pick < 8 * SYS_COUNT) {
        nr = pick % SYS_COUNT;
        if (nr < NELEM(specs) && specs[nr].ends && below(f, 4) != 0)
            nr = below(f, SYS_COUNT);
    } else {
        static const uint64_t bad[] = {SYS_COUNT, SYS_COUNT + 1, 0x100000000ull | SYS_WRITE,
                                       UINT64_MAX, 1ull << 63};
        nr = pick & 1 ? bad[below(f, NELEM(bad))] : next(f);
    }
    const struct call_spec *s = nr < NELEM(specs) && specs[nr].name ? &specs[nr] : NULL;
    f->last_ptr = 0;
    for (unsigned i = 0; i < NARGS; i++)
        a[i] = arg(f, s ? s->role[i] : R_ANY, i);
    /* A write that succeeds is a console line, and a line costs a scroll of the framebuffer
     * (a third of a second under TCG on a loaded machine): only one in eight of them is
     * made, the others become the same call with a length just over SYS_WRITE_MAX. */
    if (nr == SYS_WRITE && a[1] <= SYS_WRITE_MAX && ref_ok(f->tk, a[0], a[1], false) &&
        below(f, 8) != 0) {
        a[1] = SYS_WRITE_MAX + 1 + below(f, 8);
        f->cls[1] = C_EDGE;
    }
    f->per_nr[nr < SYS_COUNT ? nr : SYS_COUNT]++;

    struct task *tk = f->tk;
    uint64_t before = f->tr ? bts_count(f->tr) : 0;
    uint64_t done = f->blk->done;
    f->blk->nr = nr;
    memcpy(f->blk->a, a, sizeof(a));
    f->blk->result = 0;
    for (unsigned y = 0; f->blk->done == done && tk->state != TASK_ZOMBIE; y++) {
        if (y == CALL_YIELDS) {
            report(f, nr, a, 0, "the call did not return");
            return false;
        }
        task_yield();
        if (f->by && f->by->state == TASK_ZOMBIE) {
            bystander_end(f);
            if (test_failed() || !bystander_start(f))
                return false;
        }
    }
    uint64_t after = f->tr ? bts_count(f->tr) : 0;
    int64_t r = (int64_t)f->blk->result;

    if (tk->state == TASK_ZOMBIE) {
        if (tk->faulted) {
            report(f, nr, a, 0,
                   tk->fault.user ? "the task faulted in user mode after the call"
                                  : "kernel fault at CPL 0 inside the call");
            test_diag("fault: vector %u at %#lx, address %#lx, error code %#lx", tk->fault.vector,
                      tk->fault.rip, tk->fault.cr2, tk->fault.error_code);
            return false;
        }
        if (nr != SYS_EXIT) {
            report(f, nr, a, 0, "the task ended, but only SYS_EXIT ends it");
            return false;
        }
        if (tk->exit_status != (int)a[0]) {
            report(f, nr, a, tk->exit_status, "SYS_EXIT's status is not the task's exit status");
            return false;
        }
        fuzz_end(f);
        f->ok++;
        return !test_failed() && fuzz_start(f);
    }
    if (f->blk->done != done + 1 || f->blk->nr != nr || memcmp(f->blk->a, a, sizeof(a))) {
        report(f, nr, a, r, "the call block on the task's stack page changed");
        return false;
    }
    if (nr == SYS_EXIT) {
        report(f, nr, a, r, "SYS_EXIT returned");
        return false;
    }
    if (r < 0 && !is_errno(r)) {
        report(f, nr, a, r, "a negative result that is no E_* code");
        return false;
    }
    uint64_t w_off = 0, w_len = 0;
    const char *bad = check_call(f, nr, a, r, before, after, &w_off, &w_len);
    if (bad) {
        report(f, nr, a, r, bad);
        if (f->tr)
            test_diag("sysfuzz: the task's trace held %lu records before the call, %lu after",
                      before, after);
        return false;
    }
    /* The task's data page: unchanged but for what the call says it wrote. */
    const uint64_t *now = (const uint64_t *)f->data, *was = (const uint64_t *)data_want;
    for (uint64_t i = 0; i < PAGE_SIZE; i++) {
        if (i % 8 == 0 && now[i / 8] == was[i / 8]) { /* a word at a time while equal */
            i += 7;
            continue;
        }
        if (f->data[i] != data_want[i] && !(i >= w_off && i < w_off + w_len)) {
            report(f, nr, a, r, "the call changed the task's memory where it was not asked to");
            test_diag("first changed byte: data page + %#lx", i);
            return false;
        }
    }
    if (w_len)
        memcpy(data_want + w_off, f->data + w_off, w_len);
    for (unsigned i = 0; s && i < NARGS; i++) {
        if (s->role[i] == R_PTR) {
            f->ptr_seen[f->cls[i]]++;
            f->ptr_taken[f->cls[i]] += r >= 0;
        }
    }
    for (unsigned i = 0; i < CANARY_BYTES; i++) {
        if (kcanary[i] != (uint8_t)(i * 7 + 1)) {
            report(f, nr, a, r, "the call changed kernel data (the test's canary array)");
            return false;
        }
    }
    if (r < 0) {
        f->errs++;
        f->efault += r == E_FAULT;
    } else {
        f->ok++;
    }
    return true;
}

TEST(sys, fuzz, "random system calls from a user task: errors, never kernel faults or corruption",
     60000)
{
    static struct fuzz f;
    const char *why;
    f = (struct fuzz){0};
    f.seed = test_seed();
    /* A splitmix64 step: seeds that differ in one bit start far apart (never at 0). */
    uint64_t z = f.seed ^ FUZZ_SALT;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    f.rng = (z ^ (z >> 31)) | 1;
    f.calls = calls_given ? calls_opt : test_volume(calls_opt);
    f.traced = bts_available(&why);
    if (!CHECK(f.calls > 0, "sysfuzz.calls=0: no call to make"))
        return;
    for (unsigned i = 0; i < NELEM(specs); i++)
        CHECK(specs[i].name, "system call %u has no entry in tests/t_sysfuzz.c's specs", i);
    CHECK(NELEM(specs) == SYS_COUNT,
          "the kernel has %u system calls, tests/t_sysfuzz.c describes %lu", SYS_COUNT,
          NELEM(specs));
    if (!f.traced)
        test_diag("no BTS backend (%s): no trace to check, the calls are fuzzed all the same", why);
    for (unsigned i = 0; i < CANARY_BYTES; i++)
        kcanary[i] = (uint8_t)(i * 7 + 1);
    uint64_t guard = __stack_chk_guard;
    uint64_t frames = frames_free_count(&kernel_frames);
    size_t heap = heap_free_bytes();

    if (bystander_start(&f) && fuzz_start(&f)) {
        for (f.index = 0; f.index < f.calls && !test_failed(); f.index++) {
            if (!fuzz_call(&f))
                break;
            if ((f.index & 255) == 255) /* a long run (sysfuzz.calls) is progress */
                test_progress();
        }
    }
    /* The last fuzz task ends by a call of its own; the bystander runs its rounds out. */
    if (f.tk && !test_failed()) {
        memset(f.blk->a, 0, sizeof(f.blk->a));
        f.blk->nr = SYS_EXIT;
        task_wait(f.tk);
        CHECK(!f.tk->faulted && f.tk->exit_status == 0, "the last fuzz task did not exit(0)");
        fuzz_end(&f);
    }
    if (f.by && !test_failed())
        bystander_end(&f);
    if (f.tk || f.by) { /* a failure: the cleanup ends the tasks; their traces go first */
        sched_kill_others();
        trace_free(f.tr);
        trace_free(f.by_tr);
        return;
    }
    CHECK(__stack_chk_guard == guard, "the stack protector's canary changed");
    CHECK(frames_free_count(&kernel_frames) == frames, "free frames: %lu before, %lu after", frames,
          frames_free_count(&kernel_frames));
    CHECK(heap_free_bytes() == heap, "free heap bytes: %lu before, %lu after", heap,
          heap_free_bytes());
    test_diag("sysfuzz: seed=%#lx %lu calls (yield %lu, exit %lu, write %lu, trace %lu, "
              "no such call %lu): %lu ok, %lu errors (%lu E_FAULT), %lu records drained; "
              "%lu fuzz tasks, %lu bystanders checked",
              f.seed, f.index, f.per_nr[SYS_YIELD], f.per_nr[SYS_EXIT], f.per_nr[SYS_WRITE],
              f.per_nr[SYS_TRACE], f.per_nr[SYS_COUNT], f.ok, f.errs, f.efault, f.drained, f.tasks,
              f.bystanders);
    /* Two lines of classes: a line stays within a KTAP diagnostic's width. */
    for (unsigned half = 0; half < 2; half++) {
        char line[256];
        size_t len = 0;
        for (unsigned c = half * (C_COUNT + 1) / 2;
             c < (half + 1) * (C_COUNT + 1) / 2 && c < C_COUNT; c++)
            if (len < sizeof(line))
                len += (size_t)ksnprintf(line + len, sizeof(line) - len, " %s %lu/%lu", cls_name[c],
                                         f.ptr_taken[c], f.ptr_seen[c]);
        test_diag("sysfuzz: pointer arguments accepted (a result >= 0)/made by class:%s", line);
    }
}
