/*
 * bts.*: every branch class gives exactly the records its code says. Each case runs known
 * code (tests/bts_code.S) under bts_run() and compares the whole trace, record by record, with
 * the list built from that code's labels: the enabling RET, the call in, each taken transfer,
 * the return, the disabling call.
 */
#include "ds/backend.h"
#include "ds/bts.h"
#include "ds/model.h"
#include "kernel/apic.h"
#include "kernel/cpu.h"
#include "kernel/paging.h"
#include "kernel/trap.h"
#include "tests/btscheck.h"
#include "tests/test.h"

#define HW_RECORDS   1024
#define RING_RECORDS 4096
#define MAX_RECORDS  4096

extern const char tc_jmp[], tc_jmp_b8[], tc_jmp_t8[], tc_jmp_b32[], tc_jmp_t32[], tc_jmp_ret[];
extern const char tc_jcc[], tc_jcc_t8[], tc_jcc_t8_to[], tc_jcc_t32[], tc_jcc_t32_to[],
    tc_jcc_ret[];
extern const char tc_loop[], tc_loop_top[], tc_loop_insn[], tc_jrcxz_insn[], tc_jrcxz_to[],
    tc_loop_ret[];
extern const char tc_call[], tc_call_site[], tc_call_back[], tc_call_ret[], tc_callee[],
    tc_callee_ret[];
extern const char tc_ind[], tc_ind_jreg[], tc_ind_t1[], tc_ind_jmem[], tc_ind_t2[], tc_ind_creg[],
    tc_ind_creg_back[];
extern const char tc_ind_cmem[], tc_ind_cmem_back[], tc_ind_ret[], tc_ind_fn[], tc_ind_fn_ret[];
extern const char tc_jtab[], tc_jtab_jmp[], tc_jtab_c0[], tc_jtab_c1[], tc_jtab_c2[], tc_jtab_j0[],
    tc_jtab_j1[];
extern const char tc_jtab_end[], tc_jtab_ret[];
extern const char tc_retf[], tc_retimm_call[], tc_retimm_back[], tc_lret[], tc_lret_to[],
    tc_retf_ret[];
extern const char tc_retimm_fn[], tc_retimm_insn[];
extern const char tc_int[], tc_int3[], tc_int3_back[], tc_intn[], tc_intn_back[], tc_int_ret[];
extern const char tc_trap2[], tc_trap2_top[], tc_trap2_intn[], tc_trap2_int3[], tc_trap2_loop[],
    tc_trap2_ret[];
extern const char tc_loopn[], tc_loopn_top[], tc_loopn_insn[], tc_loopn_ret[];
extern const char tc_fault[], tc_ud[], tc_ud_fix[], tc_pf[], tc_pf_fix[], tc_fault_ret[];
extern const char tc_ipi_xapic[], tc_ipi_xapic_sled[], tc_ipi_xapic_ret[];
extern const char tc_ipi_x2apic[], tc_ipi_x2apic_sled[], tc_ipi_x2apic_ret[];
extern const char tc_fib[];

static struct bts_record got[MAX_RECORDS], want[MAX_RECORDS];

static const struct bts_config ring_cfg = {
    .hw_records = HW_RECORDS,
    .mode = BTS_MODE_INTERRUPT,
    .ring_records = RING_RECORDS,
    .policy = BTS_POLICY_STOP,
    .events = BTS_EVENTS_BRANCHES,
    .cpl = BTS_CPL_KERNEL | BTS_CPL_USER,
};

/* Runs fn(arg) traced and compares the trace with e. */
static void run_and_check(void *fn, void *arg, struct expect *e)
{
    struct bts_trace t;
    if (!trace_setup(&t, &ring_cfg))
        return;
    int err = bts_run(&t, (void (*)(void *))fn, arg);
    CHECK(err == 0, "bts_run: %d", err);
    int64_t n = trace_collect_code(&t, got, MAX_RECORDS);
    struct bts_status st;
    bts_status(&t, &st);
    CHECK(st.lost == 0 && !st.overflowed, "records lost: %lu", st.lost);
    if (n >= 0)
        exp_match(got, (size_t)n, e);
    test_info("%ld records", n);
    trace_teardown(&t);
}

#define EXPECT(e)                                                                                  \
    struct expect e;                                                                               \
    exp_init(&e, want, MAX_RECORDS)

TEST(bts, jmp, "jmp rel8 and rel32: one record each", 0)
{
    if (!bts_require())
        return;
    EXPECT(e);
    exp_prologue(&e, tc_jmp);
    exp_add(&e, LBL(tc_jmp_b8), LBL(tc_jmp_t8));
    exp_add(&e, LBL(tc_jmp_b32), LBL(tc_jmp_t32));
    exp_return(&e, tc_jmp_ret);
    exp_epilogue(&e);
    run_and_check((void *)tc_jmp, NULL, &e);
}

TEST(bts, jcc, "jcc taken gives one record, not taken none (rel8 and rel32)", 0)
{
    if (!bts_require())
        return;
    EXPECT(e);
    exp_prologue(&e, tc_jcc);
    exp_add(&e, LBL(tc_jcc_t8), LBL(tc_jcc_t8_to));
    exp_add(&e, LBL(tc_jcc_t32), LBL(tc_jcc_t32_to));
    exp_return(&e, tc_jcc_ret);
    exp_epilogue(&e);
    run_and_check((void *)tc_jcc, (void *)1, &e);
}

TEST(bts, loop_jrcxz, "loop taken twice then not; jrcxz taken on RCX=0 only", 0)
{
    if (!bts_require())
        return;
    EXPECT(e);
    exp_prologue(&e, tc_loop);
    exp_add(&e, LBL(tc_loop_insn), LBL(tc_loop_top));
    exp_add(&e, LBL(tc_loop_insn), LBL(tc_loop_top));
    exp_add(&e, LBL(tc_jrcxz_insn), LBL(tc_jrcxz_to));
    exp_return(&e, tc_loop_ret);
    exp_epilogue(&e);
    run_and_check((void *)tc_loop, NULL, &e);
}

TEST(bts, call_ret, "a direct call and its ret", 0)
{
    if (!bts_require())
        return;
    EXPECT(e);
    exp_prologue(&e, tc_call);
    exp_add(&e, LBL(tc_call_site), LBL(tc_callee));
    exp_add(&e, LBL(tc_callee_ret), LBL(tc_call_back));
    exp_return(&e, tc_call_ret);
    exp_epilogue(&e);
    run_and_check((void *)tc_call, NULL, &e);
}

TEST(bts, indirect, "indirect jmp and call through a register and through memory", 0)
{
    if (!bts_require())
        return;
    EXPECT(e);
    exp_prologue(&e, tc_ind);
    exp_add(&e, LBL(tc_ind_jreg), LBL(tc_ind_t1));
    exp_add(&e, LBL(tc_ind_jmem), LBL(tc_ind_t2));
    exp_add(&e, LBL(tc_ind_creg), LBL(tc_ind_fn));
    exp_add(&e, LBL(tc_ind_fn_ret), LBL(tc_ind_creg_back));
    exp_add(&e, LBL(tc_ind_cmem), LBL(tc_ind_fn));
    exp_add(&e, LBL(tc_ind_fn_ret), LBL(tc_ind_cmem_back));
    exp_return(&e, tc_ind_ret);
    exp_epilogue(&e);
    run_and_check((void *)tc_ind, NULL, &e);
}

TEST(bts, jump_table, "a jump table: each case's path", 0)
{
    if (!bts_require())
        return;
    const char *const cases[] = {tc_jtab_c0, tc_jtab_c1, tc_jtab_c2};
    const char *const exits[] = {tc_jtab_j0, tc_jtab_j1, NULL};
    for (uint64_t i = 0; i < 3 && !test_failed(); i++) {
        EXPECT(e);
        exp_prologue(&e, tc_jtab);
        exp_add(&e, LBL(tc_jtab_jmp), LBL(cases[i]));
        if (exits[i])
            exp_add(&e, LBL(exits[i]), LBL(tc_jtab_end));
        exp_return(&e, tc_jtab_ret);
        exp_epilogue(&e);
        run_and_check((void *)tc_jtab, (void *)i, &e);
    }
}

TEST(bts, ret_imm_far, "ret imm16 and a far return", 0)
{
    if (!bts_require())
        return;
    EXPECT(e);
    exp_prologue(&e, tc_retf);
    exp_add(&e, LBL(tc_retimm_call), LBL(tc_retimm_fn));
    exp_add(&e, LBL(tc_retimm_insn), LBL(tc_retimm_back));
    exp_add(&e, LBL(tc_lret), LBL(tc_lret_to));
    exp_return(&e, tc_retf_ret);
    exp_epilogue(&e);
    run_and_check((void *)tc_retf, NULL, &e);
}

static void ignore_trap(struct trap_frame *f)
{
    (void)f;
}

TEST(bts, int3_intn, "int3 and int n: the transfer to the handler and the iretq back", 0)
{
    if (!bts_require())
        return;
    trap_handler_t old3 = trap_set_handler(VEC_BP, ignore_trap);
    trap_handler_t oldn = trap_set_handler(VEC_TEST_SOFTINT, ignore_trap);
    EXPECT(e);
    exp_prologue(&e, tc_int);
    exp_trap(&e, LBL(tc_int3), VEC_BP, LBL(tc_int3_back));
    exp_trap(&e, LBL(tc_intn), VEC_TEST_SOFTINT, LBL(tc_intn_back));
    exp_return(&e, tc_int_ret);
    exp_epilogue(&e);
    run_and_check((void *)tc_int, NULL, &e);
    trap_set_handler(VEC_BP, old3);
    trap_set_handler(VEC_TEST_SOFTINT, oldn);
}

/*
 * The handlers' own records (docs/hardware.md §7). With CPL 0 recorded an implementation may
 * record the branches of the interrupt handlers themselves; the profile says whether it does
 * (handler_records). Wherever they appear they must sit inside an interrupt, start at its
 * stub and stay within the bounds (handler_records_check()), and the known code's records
 * around them stay exactly what the labels say. With CPL 0 filtered, nothing of this kernel
 * code may appear, handlers included: the handlers run at CPL 0 too.
 */
#define HANDLER_RUNS 8

static void handler_case(unsigned cpl, const struct expect *e)
{
    struct bts_config cfg = ring_cfg;
    cfg.cpl = cpl;
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    for (unsigned i = 0; i < HANDLER_RUNS; i++)
        bts_run(&t, (void (*)(void *))tc_int, NULL);
    int64_t n = trace_collect(&t, got, MAX_RECORDS);
    trace_teardown(&t);
    if (!(cpl & BTS_CPL_KERNEL)) {
        CHECK(n == 0, "CPL 0 filtered: %ld records of kernel code%s", n, n > 0 ? ", first:" : "");
        if (n > 0)
            test_diag("  %#lx -> %#lx", got[0].from, got[0].to);
        return;
    }
    struct handler_count c;
    enum bts_maybe m = bts_profile()->handler_records;
    if (n < 0 || !handler_records_check(got, (size_t)n, &c))
        return;
    test_diag("cpl %#x: handler records: %lu, in %lu of %lu interrupts (profile: %s)", cpl,
              c.records, c.with_records, c.interrupts,
              m == BTS_NEVER    ? "never"
              : m == BTS_ALWAYS ? "always"
                                : "either");
    CHECK_EQ(c.interrupts, 2 * HANDLER_RUNS);
    CHECK(m != BTS_NEVER || c.records == 0, "profile: never, yet %lu handler records", c.records);
    CHECK(m != BTS_ALWAYS || c.with_records == c.interrupts,
          "profile: always, yet %lu of %lu interrupts without handler records",
          c.interrupts - c.with_records, c.interrupts);
    /* The known code's records, with the handlers' left out. */
    size_t k = 0;
    for (size_t i = 0; i < (size_t)n; i++)
        if (in_traced_code(got[i].from) || in_traced_code(got[i].to))
            got[k++] = got[i];
    CHECK_EQ(k + c.records, (size_t)n);
    exp_match(got, k, e);
}

TEST(bts, handler_records,
     "the handlers' own records appear as the profile says, inside each interrupt, within the "
     "bounds, and never with CPL 0 filtered",
     0)
{
    if (!bts_require())
        return;
    trap_handler_t old3 = trap_set_handler(VEC_BP, ignore_trap);
    trap_handler_t oldn = trap_set_handler(VEC_TEST_SOFTINT, ignore_trap);
    EXPECT(e);
    for (unsigned i = 0; i < HANDLER_RUNS; i++) {
        exp_prologue(&e, tc_int);
        exp_trap(&e, LBL(tc_int3), VEC_BP, LBL(tc_int3_back));
        exp_trap(&e, LBL(tc_intn), VEC_TEST_SOFTINT, LBL(tc_intn_back));
        exp_return(&e, tc_int_ret);
        exp_epilogue(&e);
    }
    handler_case(BTS_CPL_KERNEL | BTS_CPL_USER, &e);
    handler_case(BTS_CPL_KERNEL, &e);
    handler_case(BTS_CPL_USER, &e);
    trap_set_handler(VEC_BP, old3);
    trap_set_handler(VEC_TEST_SOFTINT, oldn);
}

TEST(bts, trap_pair, "int n then int3 back to back, twice round a loop: each trap's records", 0)
{
    if (!bts_require())
        return;
    trap_handler_t old3 = trap_set_handler(VEC_BP, ignore_trap);
    trap_handler_t oldn = trap_set_handler(VEC_TEST_SOFTINT, ignore_trap);
    EXPECT(e);
    exp_prologue(&e, tc_trap2);
    for (int pass = 0; pass < 2; pass++) {
        exp_trap(&e, LBL(tc_trap2_intn), VEC_TEST_SOFTINT, LBL(tc_trap2_int3));
        exp_trap(&e, LBL(tc_trap2_int3), VEC_BP, LBL(tc_trap2_loop));
        if (pass == 0)
            exp_add(&e, LBL(tc_trap2_loop), LBL(tc_trap2_top));
    }
    exp_return(&e, tc_trap2_ret);
    exp_epilogue(&e);
    run_and_check((void *)tc_trap2, NULL, &e);
    trap_set_handler(VEC_BP, old3);
    trap_set_handler(VEC_TEST_SOFTINT, oldn);
}

TEST(bts, loop_count, "loop as a counted loop: n - 1 taken records for n passes, none after", 0)
{
    if (!bts_require())
        return;
    static const uint64_t passes[] = {1, 2, 7};
    for (unsigned i = 0; i < sizeof(passes) / sizeof(passes[0]); i++) {
        EXPECT(e);
        exp_prologue(&e, tc_loopn);
        for (uint64_t k = 1; k < passes[i]; k++)
            exp_add(&e, LBL(tc_loopn_insn), LBL(tc_loopn_top));
        exp_return(&e, tc_loopn_ret);
        exp_epilogue(&e);
        run_and_check((void *)tc_loopn, (void *)passes[i], &e);
    }
}

TEST(bts, exceptions, "#UD from ud2 and #PF: delivery from the faulting instruction", 0)
{
    if (!bts_require())
        return;
    EXPECT(e);
    exp_prologue(&e, tc_fault);
    exp_trap(&e, LBL(tc_ud), VEC_UD, LBL(tc_ud_fix));
    exp_trap(&e, LBL(tc_pf), VEC_PF, LBL(tc_pf_fix));
    exp_return(&e, tc_fault_ret);
    exp_epilogue(&e);
    run_and_check((void *)tc_fault, (void *)8, &e);
}

static volatile unsigned ipi_hits;
static void count_ipi(struct trap_frame *f)
{
    (void)f;
    ipi_hits++;
    apic_eoi();
}

TEST(bts, self_ipi, "a self-IPI arriving inside traced code is recorded where it lands", 0)
{
    if (!bts_require())
        return;
    trap_handler_t old = trap_set_handler(VEC_TEST_IPI, count_ipi);
    ipi_hits = 0;
    bool x2 = apic_is_x2apic();
    const char *fn = x2 ? tc_ipi_x2apic : tc_ipi_xapic;
    const char *sled = x2 ? tc_ipi_x2apic_sled : tc_ipi_xapic_sled;
    const char *ret = x2 ? tc_ipi_x2apic_ret : tc_ipi_xapic_ret;
    /* xAPIC: RDI = ICR low, RSI = value; x2APIC: RSI = vector (RDI unused). */
    uint64_t icr = (rdmsr(MSR_IA32_APIC_BASE) & APIC_BASE_ADDR_MASK) + APIC_ICR_LO;
    uint64_t val = x2 ? VEC_TEST_IPI : (APIC_ICR_SELF | APIC_ICR_ASSERT | VEC_TEST_IPI);

    uint64_t args[2] = {icr, val};
    struct bts_trace t;
    if (trace_setup(&t, &ring_cfg)) {
        int err = bts_run(&t, (void (*)(void *))fn, args);
        CHECK(err == 0, "bts_run: %d", err);
        int64_t n = trace_collect_code(&t, got, MAX_RECORDS);
        CHECK(ipi_hits == 1, "IPI delivered %u times", ipi_hits);
        /* The interrupt lands at the first instruction after the send on the model; real
         * hardware may take a few more, so the landing point is read from the trace and must
         * be inside the NOP sled. */
        uint64_t at = 0;
        for (int64_t i = 0; i < n; i++)
            if (got[i].to == trap_stub_address(VEC_TEST_IPI))
                at = got[i].from;
        CHECK(at >= LBL(sled) && at < LBL(ret), "IPI landed at %#lx, outside the sled", at);
        if (bts_profile()->irq_lands_exactly)
            CHECK_EQ(at, LBL(sled));
        EXPECT(e);
        exp_prologue(&e, fn);
        exp_trap(&e, at, VEC_TEST_IPI, at);
        exp_return(&e, ret);
        exp_epilogue(&e);
        if (n >= 0)
            exp_match(got, (size_t)n, &e);
        trace_teardown(&t);
    }
    trap_set_handler(VEC_TEST_IPI, old);
}

#define FIB_N         10
#define FIB_N_RECORDS 442 /* 88 inner calls x 3 + 89 leaves x 2, worked out by hand */

TEST(bts, fib, "recursive fib(10): exact record count and sequence", 0)
{
    if (!bts_require())
        return;
    EXPECT(e);
    exp_prologue(&e, tc_fib);
    size_t before = e.n;
    exp_fib(&e, FIB_N, LBL(bts_run_returned));
    CHECK_EQ(e.n - before, FIB_N_RECORDS);
    exp_epilogue(&e);
    run_and_check((void *)tc_fib, (void *)FIB_N, &e);
}

/*
 * The differential test: on a CPU whose probe passed, the same known code under the hardware
 * and under the model, record by record. The enabling and disabling records name each
 * backend's own write function, so those two are compared by position only. Cases with
 * interrupts are left out: with CPL-0 recording the hardware also records the handlers, which
 * the model by design does not (docs/model.md).
 */
struct diff_case {
    const char *name;
    const void *fn;
    uint64_t arg;
};

static int64_t run_on(const struct bts_backend *b, const struct diff_case *c,
                      struct bts_record *out)
{
    if (bts_use_backend(b) != 0)
        return -1;
    struct bts_trace t;
    if (!trace_setup(&t, &ring_cfg))
        return -1;
    bts_run(&t, (void (*)(void *))c->fn, (void *)c->arg);
    int64_t n = trace_collect_code(&t, out, MAX_RECORDS);
    trace_teardown(&t);
    return n;
}

TEST(bts, differential, "hardware BTS and the model record the same branches", 0)
{
    const char *why;
    if (!bts_hw_probe_passed(&why)) {
        test_skip("no hardware BTS: %s", why);
        return;
    }
    const struct diff_case cases[] = {
        {"jmp", tc_jmp, 0},      {"jcc", tc_jcc, 1},   {"loop", tc_loop, 0}, {"call", tc_call, 0},
        {"indirect", tc_ind, 0}, {"jtab", tc_jtab, 1}, {"retf", tc_retf, 0}, {"fib", tc_fib, 7},
    };
    const struct bts_backend *orig = bts_backend();
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t nh = run_on(&bts_backend_hw, &cases[i], got);
        int64_t nm = run_on(&bts_backend_model, &cases[i], want);
        if (!CHECK(nh > 2 && nm > 2, "%s: %ld hardware, %ld model records", cases[i].name, nh, nm))
            continue;
        CHECK(nh == nm, "%s: %ld hardware records, %ld model records", cases[i].name, nh, nm);
        for (int64_t k = 1; k < nh - 1 && k < nm - 1; k++)
            if (!CHECK(got[k].from == want[k].from && got[k].to == want[k].to,
                       "%s record %ld: hw %#lx->%#lx, model %#lx->%#lx", cases[i].name, k,
                       got[k].from, got[k].to, want[k].from, want[k].to))
                break;
    }
    bts_use_backend(orig);
}

/* Interrupt mode with the buffer full while the PMI is still masked (LVT PC masked, as between
 * a delivery and its handler's unmasking): the model keeps what it has and drops each further
 * record (docs/hardware.md §4, O1). fib(8) overruns a 16-record buffer by far. */
#define DROP_HW     16
#define DROP_THRESH 8
#define DROP_FIB    8

static void model_drops(void)
{
    struct bts_config cfg = cfg_interrupt(DROP_HW, DROP_THRESH, RING_RECORDS, BTS_POLICY_STOP,
                                          BTS_EVENTS_BRANCHES, BTS_CPL_KERNEL);
    struct bts_trace t;
    if (!trace_setup(&t, &cfg))
        return;
    EXPECT(e);
    exp_prologue(&e, tc_fib);
    exp_fib(&e, DROP_FIB, LBL(bts_run_returned));
    exp_epilogue(&e);
    size_t all = e.n;
    e.n = DROP_HW; /* the oldest DROP_HW are kept */
    struct model_stats s0, s1;
    uint32_t lvt = apic_read(APIC_LVT_PC);
    apic_write(APIC_LVT_PC, lvt | APIC_LVT_MASKED);
    model_get_stats(&s0);
    bts_run(&t, (void (*)(void *))tc_fib, (void *)DROP_FIB);
    model_get_stats(&s1);
    apic_write(APIC_LVT_PC, lvt);
    CHECK(s1.dropped - s0.dropped == all - DROP_HW,
          "a full buffer with the PMI masked: %lu records dropped, expected %zu",
          s1.dropped - s0.dropped, all - DROP_HW);
    CHECK_EQ(s1.records - s0.records, DROP_HW);
    CHECK_EQ(s1.pmis - s0.pmis, 0); /* masked: none raised */
    struct bts_status st;
    if (CHECK_EQ(bts_status(&t, &st), 0))
        CHECK_EQ(st.pmis, 0);
    int64_t n = trace_collect(&t, got, MAX_RECORDS);
    if (n >= 0)
        exp_match(got, (size_t)n, &e);
    trace_teardown(&t);
}

TEST(bts, model_counters,
     "the model decodes every traced instruction, drops nothing with room, and drops exactly "
     "what a full buffer with the PMI masked cannot hold",
     0)
{
    if (!bts_backend_is_model()) {
        test_skip("the model is not the backend in use");
        return;
    }
    struct model_stats s0, s1;
    model_get_stats(&s0);
    struct bts_trace t;
    if (!trace_setup(&t, &ring_cfg))
        return;
    trap_handler_t old3 = trap_set_handler(VEC_BP, ignore_trap);
    trap_handler_t oldn = trap_set_handler(VEC_TEST_SOFTINT, ignore_trap);
    bts_run(&t, (void (*)(void *))tc_fib, (void *)8);
    bts_run(&t, (void (*)(void *))tc_ind, NULL);
    for (unsigned i = 0; i < HANDLER_RUNS; i++)
        bts_run(&t, (void (*)(void *))tc_int, NULL);
    trap_set_handler(VEC_BP, old3);
    trap_set_handler(VEC_TEST_SOFTINT, oldn);
    int64_t n = trace_collect(&t, got, MAX_RECORDS);
    trace_teardown(&t);
    model_get_stats(&s1);
    CHECK_EQ(s1.undecodable - s0.undecodable, 0);
    CHECK_EQ(s1.dropped - s0.dropped, 0);
    /* Every record the model stored is in the trace, and nothing else is. */
    CHECK_EQ(s1.records - s0.records, (uint64_t)n);
    test_info("%lu steps, %lu records, %lu filtered", s1.steps - s0.steps, s1.records - s0.records,
              s1.filtered - s0.filtered);
    /* The handler records the model says it stored are the ones the trace shows, and it took
     * its model.handler_records freedom as set. */
    struct handler_count c;
    struct model_freedoms f;
    model_get_freedoms(&f);
    uint64_t handler = s1.handler_records - s0.handler_records;
    if (n >= 0 && handler_records_check(got, (size_t)n, &c)) {
        test_diag("model: %lu handler records, in %lu of %lu interrupts", handler, c.with_records,
                  c.interrupts);
        CHECK_EQ(c.records, handler);
        CHECK(f.handler_records != BTS_NEVER || handler == 0, "never, yet %lu handler records",
              handler);
        CHECK(f.handler_records != BTS_ALWAYS || c.with_records == c.interrupts,
              "always, yet %lu of %lu interrupts without", c.interrupts - c.with_records,
              c.interrupts);
        CHECK(f.handler_records != BTS_EITHER ||
                  (c.with_records > 0 && c.with_records < c.interrupts),
              "either, yet %lu of %lu interrupts with handler records", c.with_records,
              c.interrupts);
    }
    model_drops();
}
