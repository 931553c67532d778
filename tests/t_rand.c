/*
 * rand.*: random programs (tests/randprog.c) run traced, each trace compared
 * with the transfers the generator built the program to make: exactly under the model's exact
 * profile, within bts_bounds() otherwise (the trace_split() accounting the other suites use).
 * A program's int3 and int n go to handlers that return, its #UD and #PF to a handler that
 * resumes it at the next instruction; the records of all four are the trap's entry and the
 * IRETQ back.
 *
 *   rand.kernel     one trace per program, held whole in a circular buffer; every
 *                   CIRC_EVERY-th in a CIRC_SMALL-record one, which keeps the newest
 *   rand.interrupt  small hardware buffers drained by the threshold interrupt, so that PMIs
 *                   land inside the programs
 *   rand.stream     a quarter as many, SIZE_MAX_K bytes long, through the same small buffer
 *                   and a STREAM_RING-record ring that the tracer drains whenever it fills
 *   rand.timer      a quarter as many, with a software timer firing every TIMER_US: each
 *                   tick inside a program is its entry record and the IRETQ back to the very
 *                   instruction it interrupted
 *   rand.user       the same classes in a user task at CPL 3, with SYSCALL (a yield) too, the
 *                   CPL filter rotating (user, kernel, both): int3 and int n through DPL-3
 *                   gates to the same handlers, #UD and #PF resumed by the same handler
 *
 * Options: rand.programs=N programs per test (default RAND_PROGRAMS, scaled by volume=),
 * rand.size=BYTES each program's buffer (default RAND_SIZE); a value out of range fails. Programs
 * are drawn from seed=: program i of a test is index i of the set (seed ^ the test's salt). A
 * failure prints the seed and index, the first differing record with its neighbours, and the
 * program's bytes in the lines tools/btsx-rand reads back (build/btsx-rand --log LOG).
 */
#include "ds/bts.h"
#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/msr-index.h"
#include "kernel/string.h"
#include "kernel/timer.h"
#include "kernel/trap.h"
#include "kernel/errno.h"
#include "kernel/mem.h"
#include "kernel/user.h"
#include "sched/syscall.h"
#include "tests/btscheck.h"
#include "tests/ktap.h"
#include "tests/rand_area.h"
#include "tests/randprog.h"
#include "tests/test.h"
#include "tests/usertest.h"

#define RAND_PROGRAMS   80
#define RAND_SIZE       8192
#define SIZE_MAX_K      16384
#define XFER_CAP        8192
#define REC_CAP         16384
#define FAULT_ADDR      8      /* in the NULL page, which the kernel leaves unmapped */
#define HW_SMALL        64     /* rand.interrupt: a PMI every few dozen records */
#define THRESH_SMALL    40     /* headroom for any skid the profiles allow (as ds.pmi_count) */
#define REPORTS_MAX     1      /* programs whose bytes a test prints */
#define TIMER_US        400    /* rand.timer: about 15 ticks inside each program here */
#define STREAM_RING     96     /* rand.stream: records the ring holds before the tracer drains */
#define CIRC_EVERY      4      /* rand.kernel: every 4th program in a small circular buffer */
#define CIRC_SMALL      100    /* records: less than almost any program's trace */
#define PAGE_OFFSET_MAX 0x1000 /* prog_base() starts programs below this into rand_area */
#define USER_FAULT_ADDR (USER_BASE + 0x400000) /* in no user mapping (sched/sched.h) */

static uint64_t programs_opt = RAND_PROGRAMS, size_opt = RAND_SIZE;
static bool programs_given, size_given;
OPTION_U64("rand.programs", programs_opt, programs_given);
OPTION_U64("rand.size", size_opt, size_given);

extern const char rand_area[];

static uint8_t stage[SIZE_MAX_K];
/* REC_CAP records each (XFER_CAP, SIZE_MAX_K for xfer and insn), from arrays() */
static struct rp_transfer *xfer;
static struct rp_insn *insn;
static struct bts_record *got, *want, *plain, *code, *code_want, *sys_want;
static uint64_t *sysret_to;
static struct rp_prog prog;
static struct rp_hist hist;
static unsigned reports;

/* ------------------------------------------------------------------ loading */

/* Writes a program into the read-only text of rand_area: CR0.WP clear lets CPL 0 write
 * read-only pages (SDM Vol. 3A, 2.5 Control Registers), interrupts off so that nothing else
 * runs meanwhile. Only the words that change are stored (the int3 padding mostly stays): under
 * QEMU's TCG each store into a page it has translated code from (the previous program's)
 * costs a search of that page's translations, and this copy was most of the suite's time. */
typedef uint64_t __attribute__((may_alias)) text_word;

static void text_write(uint8_t *dst, const uint8_t *src, size_t n)
{
    bool irq = irq_save();
    uint64_t cr0 = read_cr0();
    write_cr0(cr0 & ~CR0_WP);
    uint64_t lo = (uint64_t)dst, hi = lo + n;
    for (uint64_t a = lo & ~7ull; a < hi; a += 8) {
        union {
            uint64_t w;
            uint8_t b[8];
        } v = {.w = *(const text_word *)a};
        for (unsigned k = 0; k < 8; k++)
            if (a + k >= lo && a + k < hi)
                v.b[k] = src[a + k - lo];
        if (v.w != *(const text_word *)a)
            *(text_word *)a = v.w;
    }
    write_cr0(cr0);
    irq_restore(irq);
}

/* rand.size, which start() has checked. */
static uint32_t prog_size(void)
{
    return (uint32_t)size_opt;
}

/* Programs start at varying offsets into a page so that they cross page boundaries at varying
 * places. */
static uint64_t prog_base(uint64_t idx)
{
    return (uint64_t)rand_area + 0x800 + ((idx * 0x1d1) & 0x7ff);
}

/* Builds program idx of the set into stage, to run at base. */
static bool build(uint64_t set, uint64_t idx, uint64_t base, const struct rp_params *par)
{
    prog = (struct rp_prog){.code = stage,
                            .base = base,
                            .xfer = xfer,
                            .xfer_cap = XFER_CAP,
                            .insn = insn,
                            .insn_cap = SIZE_MAX_K};
    int err = rp_generate(&prog, set, idx, par);
    if (!CHECK(err == 0, "seed %#lx index %lu: rp_generate: %d", set, idx, err))
        return false;
    rp_hist_add(&hist, &prog);
    return true;
}

/* Builds program idx of the set, `size` bytes, and writes it into rand_area. */
static bool load(uint64_t set, uint64_t idx, uint32_t size)
{
    struct rp_params par = {
        .size = size, .mix = RP_MIX_ALL, .fault_addr = FAULT_ADDR, .intn_vector = VEC_TEST_SOFTINT};
    uint64_t base = prog_base(idx);
    if (!build(set, idx, base, &par))
        return false;
    text_write((uint8_t *)base, stage, par.size);
    return true;
}

/* ------------------------------------------------------------------ traps */

static trap_handler_t old_ud, old_pf, old_bp, old_intn;

/* A #UD or #PF the program provoked resumes where the generator said; any other goes on to
 * the default handling. */
static void resume_fault(struct trap_frame *f)
{
    for (uint32_t i = 0; i < prog.nxfer; i++) {
        const struct rp_transfer *t = &prog.xfer[i];
        if ((t->cls == RP_C_UD || t->cls == RP_C_PF) && t->from == f->rip &&
            t->vector == f->vector) {
            f->rip = t->to;
            return;
        }
    }
    (f->vector == VEC_UD ? old_ud : old_pf)(f);
}

static void return_trap(struct trap_frame *f)
{
    (void)f;
}

static void handlers_install(void)
{
    old_ud = trap_set_handler(VEC_UD, resume_fault);
    old_pf = trap_set_handler(VEC_PF, resume_fault);
    old_bp = trap_set_handler(VEC_BP, return_trap);
    old_intn = trap_set_handler(VEC_TEST_SOFTINT, return_trap);
}

static void handlers_remove(void)
{
    trap_set_handler(VEC_UD, old_ud);
    trap_set_handler(VEC_PF, old_pf);
    trap_set_handler(VEC_BP, old_bp);
    trap_set_handler(VEC_TEST_SOFTINT, old_intn);
}

/* ------------------------------------------------------------------ expectations */

static bool is_trap(unsigned cls)
{
    return cls == RP_C_INT3 || cls == RP_C_INTN || cls == RP_C_UD || cls == RP_C_PF;
}

static bool is_conditional(unsigned cls)
{
    return cls == RP_C_JCC8 || cls == RP_C_JCC32 || cls == RP_C_LOOP || cls == RP_C_LOOPE ||
           cls == RP_C_LOOPNE || cls == RP_C_JRCXZ;
}

/* The whole trace bts_run() gives for the program (full), and the same without the traps'
 * IRETQ records (code: what trace_split() keeps as the known code's). Returns the traps. */
static uint64_t expect_program(struct expect *full, struct expect *codes)
{
    bool cond_next = bts_profile()->cond_next_recorded;
    uint64_t traps = 0;
    exp_prologue(full, (const void *)prog.entry);
    exp_prologue(codes, (const void *)prog.entry);
    for (uint32_t i = 0; i < prog.nxfer; i++) {
        const struct rp_transfer *t = &prog.xfer[i];
        if (is_trap(t->cls)) {
            exp_trap(full, t->from, t->vector, t->to);
            exp_add(codes, t->from, trap_stub_address(t->vector));
            traps++;
        } else if (t->next && is_conditional(t->cls) && !cond_next) {
            continue; /* taken to the next instruction: invisible to this backend */
        } else {
            uint64_t to = t->to == RP_RETURN ? LBL(bts_run_returned) : t->to;
            exp_add(full, t->from, to);
            exp_add(codes, t->from, to);
        }
    }
    exp_epilogue(full);
    exp_epilogue(codes);
    return traps;
}

static bool is_trap_entry(const struct bts_record *r)
{
    static const unsigned vectors[] = {VEC_BP, VEC_UD, VEC_PF, VEC_TEST_SOFTINT};
    for (unsigned v = 0; v < sizeof(vectors) / sizeof(vectors[0]); v++)
        if (r->to == trap_stub_address(vectors[v]))
            return true;
    return false;
}

/* exp_with_pmis() for programs with traps. Their handlers run behind interrupt gates (IF=0),
 * so a fixed-delivery PMI that comes due at a trap's entry record waits for the trap's IRETQ
 * (whose record is stored first) and is taken at the instruction the trap returns to. An NMI
 * is not held back by IF: that mode is exp_with_pmis()'s. */
static uint64_t expect_pmis(const struct expect *in, struct expect *out, uint64_t n,
                            uint64_t thresh)
{
    uint64_t idx = 0, pmis = 0;
    bool due = false, in_trap = false;
    for (size_t i = 0; i < in->n; i++) {
        const struct bts_record *r = &in->rec[i];
        exp_add(out, r->from, r->to);
        if (idx < n)
            idx++;
        if (is_trap_entry(r))
            in_trap = true;
        else if (r->from == LBL(isr_iretq))
            in_trap = false;
        due |= idx >= thresh;
        if (!due || in_trap)
            continue;
        due = false;
        if (idx < n)
            exp_add(out, r->to, trap_stub_address(VEC_PMI));
        pmis++;
        exp_add(out, LBL(isr_iretq), r->to);
        idx = 1;
    }
    return pmis;
}

/* The newest m records of e, as an expectation of their own. */
static struct expect newest(const struct expect *e, size_t m)
{
    struct expect t = *e;
    if (m < t.n) {
        t.rec += t.n - m;
        t.n = m;
    }
    return t;
}

/* The failing program, for tools/btsx-rand. */
static void report(void)
{
    test_diag("rand: seed %#lx index %lu fails: rebuild it with build/btsx-rand --log LOG",
              prog.seed, prog.index);
    if (reports++ >= REPORTS_MAX)
        return;
    char line[RP_LINE_MAX];
    for (uint32_t n = 0; rp_report_line(&prog, n, line); n++)
        test_diag("%s", line);
}

/* ------------------------------------------------------------------ running */

static uint64_t set_seed(uint64_t salt)
{
    return test_seed() ^ salt;
}

/* Each program is progress: a soak (rand.programs in the millions, on hardware) runs as long
 * as it keeps going, and says how far it got every RAND_PROGRESS programs, so a long run
 * streams its results instead of keeping them. */
#define RAND_PROGRESS 10000

static void progress(uint64_t done, uint64_t records)
{
    test_progress();
    if (done && done % RAND_PROGRESS == 0)
        test_diag("rand: %lu programs, %lu records so far", done, records);
}

static uint64_t count(void)
{
    return test_volume(programs_opt);
}

/* The classes' counts from `first` to `last`, " name=count" each. */
static void hist_classes(char *buf, size_t size, unsigned first, unsigned last)
{
    size_t n = 0;
    buf[0] = 0;
    for (unsigned c = first; c <= last && n < size; c++)
        if (hist.made[c])
            n += (size_t)ksnprintf(buf + n, size - n, " %s=%lu", rp_class_name(c), hist.made[c]);
}

/* Three lines, each within a KTAP line: the totals, the branches by class, the traps and
 * system calls by class. */
static void hist_line(uint64_t records, uint32_t size)
{
    char buf[KTAP_LINE_MAX - 32];
    test_diag("rand: %lu programs of %u bytes, %lu records", hist.programs, size, records);
    hist_classes(buf, sizeof(buf), RP_C_JMP8, RP_C_LRET);
    test_diag("rand: branches by class:%s", buf);
    hist_classes(buf, sizeof(buf), RP_C_INT3, RP_C_SYSCALL);
    test_diag("rand: traps and system calls by class:%s", buf);
}

/* Checks the options (a bad value fails the test: nothing is clamped) and installs the trap
 * handlers. */
struct rand_arrays {
    struct bts_record got[REC_CAP], want[REC_CAP], plain[REC_CAP], code[REC_CAP],
        code_want[REC_CAP], sys_want[REC_CAP];
    uint64_t sysret_to[REC_CAP];
    struct rp_transfer xfer[XFER_CAP];
    struct rp_insn insn[SIZE_MAX_K];
};

static bool arrays(void)
{
    static void *mem;
    struct rand_arrays *a = test_scratch(&mem, sizeof(struct rand_arrays));
    if (!a)
        return false;
    got = a->got, want = a->want, plain = a->plain, code = a->code, code_want = a->code_want;
    sys_want = a->sys_want, sysret_to = a->sysret_to, xfer = a->xfer, insn = a->insn;
    return true;
}

static bool start(void)
{
    _Static_assert(SIZE_MAX_K + PAGE_OFFSET_MAX <= RAND_AREA_BYTES, "rand_area holds the largest");
    if (size_opt < RP_SIZE_MIN || size_opt > SIZE_MAX_K) {
        test_fail("rand.size=%lu: must be %u..%u", size_opt, RP_SIZE_MIN, SIZE_MAX_K);
        return false;
    }
    if (programs_opt == 0) {
        test_fail("rand.programs=0: no program to run");
        return false;
    }
    if (!arrays())
        return false;
    hist = (struct rp_hist){0};
    reports = 0;
    handlers_install();
    return true;
}

TEST(rand, kernel, "random kernel-mode programs: each trace is the generator's list", 60000)
{
    if (!bts_require())
        return;
    if (!start())
        return;
    uint64_t set = set_seed(0x6b65726e), records = 0, failed = 0;
    for (uint64_t i = 0; i < count() && failed < 3; i++) {
        progress(i, records);
        if (!load(set, i, prog_size()))
            break;
        struct expect full, codes;
        exp_init(&full, want, REC_CAP);
        exp_init(&codes, code_want, REC_CAP);
        uint64_t traps = expect_program(&full, &codes);
        if (!CHECK(!full.overflow, "seed %#lx index %lu: over %u records", set, i, REC_CAP))
            break;
        /* Room for every record, the handlers' the bounds allow included: nothing may wrap;
         * except every CIRC_EVERY-th program, whose small buffer keeps the newest records. */
        bool small = i % CIRC_EVERY == CIRC_EVERY - 1;
        uint64_t room =
            small ? CIRC_SMALL : full.n + traps * bts_bounds()->handler_records_max + 64;
        struct bts_config cfg = cfg_circular((uint32_t)room, BTS_CPL_KERNEL);
        struct bts_trace t;
        if (!trace_setup(&t, &cfg))
            break;
        int err = bts_run(&t, (void (*)(void *))prog.entry, NULL);
        int64_t k = trace_collect(&t, got, REC_CAP);
        trace_teardown(&t);
        bool ok = CHECK(err == 0 && k >= 0, "bts_run %d, collect %ld", err, k);
        if (ok) {
            records += (uint64_t)k;
            if (bts_bounds()->interrupt_records_exact) {
                struct expect want_k = newest(&full, room);
                ok = exp_match(got, (size_t)k, &want_k);
            } else {
                /* A small buffer: whatever it kept is the newest of each kind. */
                struct trace_split sp;
                size_t nc = trace_split(got, (size_t)k, code, &sp);
                ok = split_within_bounds(&sp, traps);
                ok &= CHECK(small ? sp.iretq <= traps : sp.iretq == traps,
                            "%lu IRETQ records for %lu traps", sp.iretq, traps);
                struct expect codes_k = small ? newest(&codes, nc) : codes;
                ok &= exp_match(code, nc, &codes_k);
                if (small)
                    ok &= CHECK(k == CIRC_SMALL || (uint64_t)k >= full.n,
                                "a circular buffer of %u records holds %ld", CIRC_SMALL, k);
            }
        }
        if (!ok) {
            failed++;
            report();
        }
    }
    handlers_remove();
    hist_line(records, prog_size());
}

/* Where the profile is not exact: the known code's records are the program's; each PMI adds
 * at most its entry and its IRETQ, every trap exactly its IRETQ. A PMI that comes due at the
 * last records is taken in bts_run()'s epilogue, outside the known code: its entry and IRETQ
 * records count as a handler's, so one fixed-delivery entry record may be missing. */
static bool within_bounds(int64_t k, uint64_t traps, const struct bts_status *st,
                          const struct expect *codes)
{
    const struct bts_bounds *b = bts_bounds();
    bool ok = true;
    struct trace_split sp;
    size_t nc = trace_split(got, (size_t)k, code, &sp);
    ok &= split_within_bounds(&sp, traps + st->pmis);
    ok &= CHECK(sp.pmi_entry <= st->pmis && sp.iretq >= traps && sp.iretq <= traps + st->pmis,
                "%lu PMI entry and %lu IRETQ records for %lu PMIs and %lu traps", sp.pmi_entry,
                sp.iretq, st->pmis, traps);
    if (!pmi_is_nmi() && b->fixed_pmi_entry_recorded)
        ok &= CHECK(sp.pmi_entry + 1 >= st->pmis,
                    "%lu PMI entry records for %lu fixed-delivery PMIs", sp.pmi_entry, st->pmis);
    ok &= exp_match(code, nc, codes);
    return ok;
}

/* The stream policy's tracer: each time the ring is full, its records move on to got[]. */
static size_t streamed;
static int stream_out(struct bts_trace *t, void *arg)
{
    (void)arg;
    int64_t n = bts_drain_raw(t, got + streamed, REC_CAP - streamed);
    if (n < 0)
        return (int)n;
    streamed += (size_t)n;
    return 0;
}

/* n programs of `size` bytes through a HW_SMALL-record buffer with its threshold at
 * THRESH_SMALL, drained into a ring of `ring` records under `policy` (with stream, the ring
 * passes its records on to got[] whenever it fills). */
static void small_buffers(uint64_t salt, uint64_t n, uint32_t size, enum bts_policy policy,
                          uint32_t ring)
{
    const struct bts_bounds *b = bts_bounds();
    uint64_t set = set_seed(salt), records = 0, failed = 0, pmis_total = 0, waits = 0;
    for (uint64_t i = 0; i < n && failed < 3; i++) {
        progress(i, records);
        if (!load(set, i, size))
            break;
        struct expect full, codes, with_pmis;
        exp_init(&full, plain, REC_CAP);
        exp_init(&codes, code_want, REC_CAP);
        exp_init(&with_pmis, want, REC_CAP);
        uint64_t traps = expect_program(&full, &codes);
        uint64_t at_entry, pmis;
        if (pmi_is_nmi())
            pmis = exp_with_pmis(&full, &with_pmis, HW_SMALL, THRESH_SMALL, true, &at_entry);
        else
            pmis = expect_pmis(&full, &with_pmis, HW_SMALL, THRESH_SMALL);
        if (!CHECK(!with_pmis.overflow, "seed %#lx index %lu: over %u records", set, i, REC_CAP))
            break;
        struct bts_config cfg = cfg_interrupt(HW_SMALL, THRESH_SMALL, ring, policy,
                                              BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
        struct bts_trace t;
        if (!trace_setup(&t, &cfg))
            break;
        streamed = 0;
        if (policy == BTS_POLICY_STREAM)
            bts_set_callbacks(&t, stream_out, NULL, NULL);
        int err = bts_run(&t, (void (*)(void *))prog.entry, NULL);
        /* The tracer's last drain, as ds.stream's: what the hardware buffer still holds too
         * (an NMI-delivered PMI leaves its records there rather than wait for the tracer). */
        if (policy == BTS_POLICY_STREAM && err == 0)
            err = stream_out(&t, NULL);
        struct bts_status st;
        bts_status(&t, &st);
        int64_t k = trace_collect(&t, got + streamed, REC_CAP - streamed);
        trace_teardown(&t);
        bool ok = CHECK(err == 0 && k >= 0, "bts_run %d, collect %ld", err, k);
        ok &= CHECK(st.lost == 0 && !st.overflowed, "records lost: %lu", st.lost);
        if (ok) {
            k += (int64_t)streamed;
            records += (uint64_t)k;
            pmis_total += st.pmis;
            waits += st.stream_waits;
            if (b->interrupt_records_exact) {
                ok &= CHECK(st.pmis == pmis, "%lu PMIs, expected %lu", st.pmis, pmis);
                ok &= exp_match(got, (size_t)k, &with_pmis);
            } else {
                ok &= within_bounds(k, traps, &st, &codes);
            }
        }
        if (!ok) {
            failed++;
            report();
        }
    }
    hist_line(records, size);
    test_diag("rand: %lu PMIs inside the programs, %lu tracer drains", pmis_total, waits);
}

TEST(rand, interrupt, "random programs, small buffers: PMIs land inside them", 60000)
{
    if (!bts_require() || !start())
        return;
    small_buffers(0x696e7472, count(), prog_size(), BTS_POLICY_STOP, REC_CAP);
    handlers_remove();
}

TEST(rand, stream, "long random programs streamed through a small ring, none lost", 60000)
{
    if (!bts_require() || !start())
        return;
    small_buffers(0x73747265, count() / CIRC_EVERY ? count() / CIRC_EVERY : 1, SIZE_MAX_K,
                  BTS_POLICY_STREAM, STREAM_RING);
    handlers_remove();
}

/* ------------------------------------------------------------------ timer ticks */

static volatile bool ticking;
static volatile uint64_t ticks;

static void tick(struct trap_frame *f, void *arg)
{
    (void)f;
    ticks++;
    if (ticking)
        timer_start_us(TIMER_US, tick, arg);
}

/* Whether a is where one of the program's instructions starts. */
static bool insn_start(uint64_t a)
{
    for (uint32_t i = 0; i < prog.ninsn; i++)
        if (prog.insn[i].addr == a)
            return true;
    return false;
}

/* Takes the ticks out of a trace: each {X -> the timer's stub} and its IRETQ back to X. Under
 * an exact profile the IRETQ is the next record; otherwise handler records may sit between
 * (trace_split() counts them later). A tick inside the program must land where one of its
 * instructions starts. Returns the records left, or -1 (the test failed). */
static int64_t remove_ticks(struct bts_record *r, size_t n, uint64_t *nticks)
{
    bool exact = bts_bounds()->interrupt_records_exact;
    uint64_t stub = trap_stub_address(VEC_TIMER), open = 0;
    bool pending = false;
    size_t k = 0;
    *nticks = 0;
    for (size_t i = 0; i < n; i++) {
        if (r[i].to == stub) {
            if (!CHECK(!pending, "record %zu: a tick inside a tick", i))
                return -1;
            if (exact &&
                !CHECK(i + 1 < n && r[i + 1].from == LBL(isr_iretq) && r[i + 1].to == r[i].from,
                       "record %zu: tick at %#lx without its IRETQ back", i, r[i].from))
                return -1;
            if (r[i].from >= prog.base && r[i].from < prog.base + prog.code_len &&
                !CHECK(insn_start(r[i].from), "record %zu: tick at %#lx, inside an instruction", i,
                       r[i].from))
                return -1;
            pending = true;
            open = r[i].from;
            (*nticks)++;
        } else if (pending && r[i].from == LBL(isr_iretq) && r[i].to == open) {
            pending = false;
        } else {
            r[k++] = r[i];
        }
    }
    if (!CHECK(!pending, "a tick at %#lx never returned", open))
        return -1;
    return (int64_t)k;
}

TEST(rand, timer, "random kernel-mode programs with timer ticks landing inside them", 60000)
{
    if (!bts_require())
        return;
    if (!start())
        return;
    uint64_t set = set_seed(0x74696d65), records = 0, failed = 0, inside = 0;
    uint64_t programs = count() / CIRC_EVERY ? count() / CIRC_EVERY : 1;
    ticks = 0;
    ticking = true;
    int id = timer_start_us(TIMER_US, tick, NULL);
    if (!CHECK(id >= 0, "no timer slot: %d", id))
        programs = 0;
    for (uint64_t i = 0; i < programs && failed < 3; i++) {
        progress(i, records);
        if (!load(set, i, prog_size()))
            break;
        struct expect full, codes;
        exp_init(&full, want, REC_CAP);
        exp_init(&codes, code_want, REC_CAP);
        uint64_t traps = expect_program(&full, &codes);
        if (!CHECK(!full.overflow, "seed %#lx index %lu: over %u records", set, i, REC_CAP))
            break;
        struct bts_config cfg = cfg_circular(REC_CAP, BTS_CPL_KERNEL);
        struct bts_trace t;
        if (!trace_setup(&t, &cfg))
            break;
        int err = bts_run(&t, (void (*)(void *))prog.entry, NULL);
        int64_t k = trace_collect(&t, got, REC_CAP);
        trace_teardown(&t);
        bool ok = CHECK(err == 0 && k >= 0 && k < REC_CAP, "bts_run %d, collect %ld", err, k);
        uint64_t n_ticks = 0;
        if (ok) {
            records += (uint64_t)k;
            k = remove_ticks(got, (size_t)k, &n_ticks);
            ok = k >= 0;
            inside += n_ticks;
        }
        if (ok) {
            if (bts_bounds()->interrupt_records_exact) {
                ok = exp_match(got, (size_t)k, &full);
            } else {
                struct trace_split sp;
                size_t nc = trace_split(got, (size_t)k, code, &sp);
                ok = split_within_bounds(&sp, traps + n_ticks);
                ok &= CHECK(sp.iretq == traps, "%lu IRETQ records for %lu traps", sp.iretq, traps);
                ok &= exp_match(code, nc, &codes);
            }
        }
        if (!ok) {
            failed++;
            report();
        }
    }
    ticking = false;
    timer_cancel(id);
    handlers_remove();
    hist_line(records, prog_size());
    test_diag("rand: %lu timer ticks inside the traces (%lu in all)", inside, ticks);
    CHECK(programs == 0 || inside > 0, "no tick landed inside a traced program");
}

/* ------------------------------------------------------------------ user mode */

/* The user image: a stub at USER_CODE_VA that calls the program and exits, the program at
 * USER_PROG_OFF + (0..0x7ff) so that it too crosses pages at varying places. */
#define USER_PROG_OFF 0x800
static uint8_t image[USER_PROG_OFF + 0x800 + SIZE_MAX_K];

#define STUB_SYSCALL 12 /* the stub's SYSCALL */
/* call entry; xor edi, edi; mov eax, SYS_EXIT; syscall; ud2. Returns the call's return
 * address. */
static uint64_t user_stub(uint64_t entry)
{
    uint8_t *p = image;
    int32_t rel = (int32_t)(entry - (USER_CODE_VA + 5));
    *p++ = 0xE8;
    memcpy(p, &rel, 4);
    p += 4;
    static const uint8_t tail[] = {0x31, 0xFF, 0xB8, SYS_EXIT, 0, 0, 0, 0x0F, 0x05, 0x0F, 0x0B};
    memcpy(p, tail, sizeof(tail));
    return USER_CODE_VA + 5;
}

static bool in_user(uint64_t a)
{
    return a >= USER_BASE && a < USER_END;
}

/* What a user program's trace must hold, besides its own transfers: */
struct user_expect {
    struct expect *u;       /* user to user: the stub's call, the program's branches, the return */
    struct expect *kin;     /* user to kernel: each int3/int n/#UD/#PF entry */
    struct expect *sys;     /* user to kernel: each SYSCALL's {SYSCALL -> syscall_entry}, the
                             * exit's last */
    const uint64_t *sysret; /* where each of the program's SYSRETs returns, in order */
    size_t nsysret;
    uint64_t returns; /* kernel-to-user returns: the task's entry, each trap's IRETQ and each
                       * SYSRET */
};

static bool in_syscall_entry(uint64_t a)
{
    return a >= LBL(syscall_entry) && a <= LBL(syscall_sysretq);
}

/*
 * A user program's trace under a CPL filter, each record sorted by where it starts and lands:
 *  - user to user: the program's own transfers (x->u, exactly), recorded with CPL 3 recorded;
 *  - kernel to user: the kernel-to-user returns (x->returns: the task's entry, each trap's
 *    IRETQ, each SYSRET, whose records must land where the program's SYSCALLs return, in order;
 *    and the IRETQ of each PMI taken in user code: with CPL 0 recorded, one per PMI entry from
 *    user code, as a PMI can also come due on the task's way out; with CPL 3 only, every PMI's,
 *    but none under an exact profile with NMI delivery, which records nothing). With CPL 0
 *    recorded too they land at CPL 3 and are all there (exact) or at most that many; with
 *    BTS_OFF_OS the profile's offos_user_returns says (docs/hardware.md §6, O4): always, never
 *    or either;
 *  - user to kernel, with CPL 0 recorded: the traps' entries (x->kin, exactly) and the PMIs'
 *    entries (at most `pmis`); the SYSCALLs' records (x->sys) follow the CPL after the
 *    transfer under the model (CPL 0: recorded with CPL 0 recorded, never with CPL 3 only,
 *    store() in ds/model.c); on hardware which CPL counts is open (§6, char.syscall_cpl_filter),
 *    so with one CPL recorded they are all there or none, with both all there;
 *  - kernel to kernel: the task's own kernel code before its first record from user code
 *    (its way in: task_start, uspace_enter) and after the exit's SYSCALL (syscall_dispatch,
 *    task_exit, bts_disable) are the task's and not checked; so are those inside a system
 *    call (from its SYSCALL record, or the first record from syscall_entry's own code when
 *    hardware filtered the SYSCALL out, to the next record from or into user code: the
 *    scheduler's yield); elsewhere only handler records, where the bounds allow them.
 */
static bool match_cpl(struct bts_record *r, size_t n, const struct user_expect *x, uint64_t pmis,
                      unsigned cpl)
{
    const struct bts_bounds *b = bts_bounds();
    bool user = cpl & BTS_CPL_USER, kernel = cpl & BTS_CPL_KERNEL, ok = true;
    size_t nu = 0, nk = 0, ns = 0, nret = 0;
    uint64_t ret = 0, pmi_in = 0, handler = 0, in_calls = 0, returns = x->returns;
    bool started = false, exited = false, in_sys = false, sysret_order = true;
    struct bts_record *sysin = plain; /* rand.user does not use it otherwise */
    for (size_t i = 0; i < n; i++) {
        const struct bts_record *y = &r[i];
        bool way = !started || exited; /* the task's own kernel code, in or out */
        started |= in_user(y->from);
        exited |= y->from == USER_CODE_VA + STUB_SYSCALL;
        if (in_user(y->from) || in_user(y->to))
            in_sys = false;
        if (in_user(y->to) && in_user(y->from)) {
            r[nu++] = *y;
        } else if (in_user(y->to) && y->from == LBL(syscall_sysretq)) {
            ret++;
            /* The program's SYSRETs in order; one may go unrecorded (offos_user_returns). */
            while (nret < x->nsysret && x->sysret[nret] != y->to)
                nret++;
            sysret_order &= nret < x->nsysret;
            nret++;
        } else if (in_user(y->to) &&
                   (y->from == LBL(user_enter_iretq) || y->from == LBL(isr_iretq))) {
            ret++;
        } else if (in_user(y->to)) {
            ok &= CHECK(false, "record %zu %#lx -> %#lx: into user code from nowhere known", i,
                        y->from, y->to);
        } else if (in_user(y->from) && y->to == trap_stub_address(VEC_PMI)) {
            pmi_in++;
        } else if (in_user(y->from) && y->to == LBL(syscall_entry)) {
            sysin[ns++] = *y;
            in_sys = !exited;
        } else if (in_user(y->from)) {
            code[nk++] = *y;
        } else if (way) {
            continue;
        } else if (in_sys || in_syscall_entry(y->from)) {
            in_sys = true;
            in_calls++;
        } else {
            handler++;
        }
    }
    ok &= CHECK(sysret_order, "a SYSRET record lands where no SYSCALL of the program returns, or "
                              "out of order");
    if (kernel)
        returns += pmi_in;
    else if (!(pmi_is_nmi() && b->interrupt_records_exact))
        returns += pmis;
    /* The SYSCALL records: the model's filter takes the CPL after the transfer (0). */
    bool model = bts_backend_is_model();
    if ((kernel && (user || model)) || ns)
        ok &= exp_match(sysin, ns, x->sys);
    if (!kernel && model)
        ok &= CHECK(ns == 0, "%zu SYSCALL records with only CPL 3 recorded", ns);
    if (kernel) {
        ok &= exp_match(code, nk, x->kin);
        ok &= CHECK(pmi_in <= pmis, "%lu PMI entries for %lu PMIs", pmi_in, pmis);
        uint64_t max = b->handler_records ? b->handler_records_max * (returns + 1) : 0;
        ok &= CHECK(handler <= max, "%lu handler records, at most %lu (%s)", handler, max, b->name);
    } else {
        ok &= CHECK(nk == 0 && pmi_in == 0 && handler == 0 && in_calls == 0,
                    "%zu, %lu, %lu and %lu records landing at CPL 0 with only CPL 3 recorded", nk,
                    pmi_in, handler, in_calls);
    }
    if (!user) {
        ok &= CHECK(nu == 0 && ret == 0, "%zu and %lu records landing at CPL 3 with only CPL 0", nu,
                    ret);
        return ok;
    }
    enum bts_maybe m = kernel ? BTS_ALWAYS : bts_profile()->offos_user_returns;
    if (m == BTS_ALWAYS && b->interrupt_records_exact)
        ok &= CHECK(ret == returns, "%lu kernel-to-user returns recorded, expected %lu", ret,
                    returns);
    else
        ok &=
            CHECK(ret <= (m == BTS_NEVER ? 0 : returns),
                  "%lu kernel-to-user returns recorded, %lu happened (%s)", ret, returns, b->name);
    return ok & exp_match(r, nu, x->u);
}

/* Whether a far return at CPL 3 works here. QEMU's TCG pops the far return's stack with
 * supervisor-mode accesses, which SMAP refuses with a #PF (error code 1) at the LRETQ: the
 * probe runs `mov eax, cs; push rax; lea rax, [rip+3]; push rax; lretq` then exits. */
static bool user_lret_works(void)
{
    static const uint8_t probe[] = {0x8C,     0xC8, 0x50, 0x48, 0x8D, 0x05, 0x03, 0x00,
                                    0x00,     0x00, 0x50, 0x48, 0xCB, 0x31, 0xFF, 0xB8,
                                    SYS_EXIT, 0x00, 0x00, 0x00, 0x0F, 0x05, 0x0F, 0x0B};
    struct task *tk = user_task("lret-probe", (const char *)probe, sizeof(probe), 0, 0);
    int status = -1;
    if (tk)
        task_join(tk, &status);
    return status == 0;
}

/* The system call the programs make: a yield, which returns to the next instruction and
 * changes no state the program sees (sched/syscall.h); with nothing else runnable it comes
 * straight back. */
#define USER_SYSCALL SYS_YIELD

TEST(rand, user, "random user-mode programs in a user task under each CPL filter", 60000)
{
    if (!bts_require())
        return;
    uint32_t mix = RP_MIX_ALL;
    if (!user_lret_works()) {
        mix &= ~RP_MIX(RP_C_LRET);
        test_diag("rand.user: lretq left out: a far return at CPL 3 faults here (#PF with a "
                  "supervisor-mode error code at the LRETQ: QEMU TCG with SMAP does this)");
    }
    if (!start())
        return;
    uint64_t set = set_seed(0x75736572), records = 0, failed = 0;
    for (uint64_t i = 0; i < count() && failed < 3; i++) {
        progress(i, records);
        struct rp_params par = {.size = prog_size(),
                                .mix = mix,
                                .fault_addr = USER_FAULT_ADDR,
                                .intn_vector = VEC_TEST_SOFTINT,
                                .syscall = true,
                                .syscall_nr = USER_SYSCALL};
        uint64_t off = USER_PROG_OFF + ((i * 0x1d1) & 0x7ff);
        if (!build(set, i, USER_CODE_VA + off, &par))
            break;
        memset(image, 0xCC, off);
        memcpy(image + off, stage, par.size);
        uint64_t back = user_stub(prog.entry);
        /* The records within user code: the stub's call, the program's branches, the return to
         * the stub; those into the kernel: the traps' entries, the SYSCALLs' (the exit's
         * last). The CPL filter rotates: CPL 3, CPL 0, both. */
        static const unsigned cpls[] = {BTS_CPL_USER, BTS_CPL_KERNEL,
                                        BTS_CPL_USER | BTS_CPL_KERNEL};
        unsigned cpl = cpls[i % 3];
        struct expect e, kin, sys;
        exp_init(&e, want, REC_CAP);
        exp_init(&kin, code_want, REC_CAP);
        exp_init(&sys, sys_want, REC_CAP);
        exp_add(&e, USER_CODE_VA, prog.entry);
        bool cond_next = bts_profile()->cond_next_recorded;
        uint64_t traps = 0;
        size_t nsys = 0;
        for (uint32_t k = 0; k < prog.nxfer; k++) {
            const struct rp_transfer *t = &prog.xfer[k];
            if (is_trap(t->cls)) {
                traps++;
                exp_add(&kin, t->from, trap_stub_address(t->vector));
            } else if (t->cls == RP_C_SYSCALL) {
                exp_add(&sys, t->from, LBL(syscall_entry));
                sysret_to[nsys++] = t->to;
            } else if (!(t->next && is_conditional(t->cls) && !cond_next)) {
                exp_add(&e, t->from, t->to == RP_RETURN ? back : t->to);
            }
        }
        exp_add(&sys, USER_CODE_VA + STUB_SYSCALL, LBL(syscall_entry));
        if (!CHECK(!e.overflow && !sys.overflow, "seed %#lx index %lu: over %u records", set, i,
                   REC_CAP))
            break;
        struct bts_trace *tr = kzalloc(sizeof(*tr));
        struct bts_config cfg =
            cfg_interrupt(512, 0, REC_CAP, BTS_POLICY_STOP, BTS_EVENTS_BRANCHES, cpl);
        int err = tr ? bts_configure(tr, &cfg) : E_NOMEM;
        if (!CHECK(err == 0, "trace: %s", err_name(err))) {
            kfree(tr);
            break;
        }
        struct task *tk = user_task("rand", (const char *)image, off + par.size, 0, 0);
        if (!tk) {
            bts_release(tr);
            kfree(tr);
            break;
        }
        task_set_trace(tk, task_current(), tr);
        bts_enable(tr);
        int status = -1;
        task_join(tk, &status);
        int64_t n = trace_collect(tr, got, REC_CAP);
        struct bts_status st;
        bts_status(tr, &st);
        bts_release(tr);
        kfree(tr);
        bool ok = CHECK(status == 0, "the task ended with %d", status);
        ok &= CHECK(n >= 0, "collect: %ld", n);
        if (ok) {
            records += (uint64_t)n;
            struct user_expect x = {.u = &e,
                                    .kin = &kin,
                                    .sys = &sys,
                                    .sysret = sysret_to,
                                    .nsysret = nsys,
                                    .returns = 1 + traps + nsys};
            ok = match_cpl(got, (size_t)n, &x, st.pmis, cpl);
            if (!ok)
                test_diag("rand.user: CPL filter %s", cpl == BTS_CPL_USER     ? "user"
                                                      : cpl == BTS_CPL_KERNEL ? "kernel"
                                                                              : "both");
        }
        if (!ok) {
            failed++;
            report();
        }
    }
    handlers_remove();
    hist_line(records, prog_size());
}
