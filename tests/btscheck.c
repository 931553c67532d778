#include "tests/btscheck.h"

#include "ds/backend.h"
#include "kernel/apic.h"
#include "kernel/errno.h"
#include "kernel/mem.h"
#include "kernel/symbols.h"
#include "kernel/trap.h"
#include "tests/test.h"

bool pmi_is_nmi(void)
{
    return (apic_read(APIC_LVT_PC) & APIC_LVT_DM_MASK) == APIC_LVT_DM_NMI;
}

void exp_init(struct expect *e, struct bts_record *storage, size_t cap)
{
    *e = (struct expect){.rec = storage, .cap = cap};
}

void exp_add(struct expect *e, uint64_t from, uint64_t to)
{
    if (e->n == e->cap) {
        e->overflow = true;
        return;
    }
    e->rec[e->n++] = (struct bts_record){from, to, 0};
}

void exp_prologue(struct expect *e, const void *fn)
{
    exp_add(e, bts_backend()->write_ret, LBL(bts_run_enabled));
    exp_add(e, LBL(bts_run_call), LBL(fn));
}

void exp_return(struct expect *e, const void *ret)
{
    exp_add(e, LBL(ret), LBL(bts_run_returned));
}

void exp_epilogue(struct expect *e)
{
    exp_add(e, LBL(bts_run_disable), (uint64_t)bts_backend()->write_debugctl);
}

void exp_trap(struct expect *e, uint64_t at, unsigned vector, uint64_t back)
{
    exp_add(e, at, trap_stub_address(vector));
    exp_add(e, LBL(isr_iretq), back);
}

extern const char tc_fib[], tc_fib_jb[], tc_fib_base[], tc_fib_call1[], tc_fib_back1[],
    tc_fib_call2[];
extern const char tc_fib_back2[], tc_fib_ret1[], tc_fib_ret0[];

void exp_fib(struct expect *e, uint64_t n, uint64_t ret_to)
{
    if (n < 2) {
        exp_add(e, LBL(tc_fib_jb), LBL(tc_fib_base));
        exp_add(e, LBL(tc_fib_ret0), ret_to);
        return;
    }
    exp_add(e, LBL(tc_fib_call1), LBL(tc_fib));
    exp_fib(e, n - 1, LBL(tc_fib_back1));
    exp_add(e, LBL(tc_fib_call2), LBL(tc_fib));
    exp_fib(e, n - 2, LBL(tc_fib_back2));
    exp_add(e, LBL(tc_fib_ret1), ret_to);
}

uint64_t exp_with_pmis(const struct expect *in, struct expect *out, uint64_t n, uint64_t thresh,
                       bool nmi_mode, uint64_t *at_entry)
{
    uint64_t idx = 0, pmis = 0, seen = UINT64_MAX;
    for (size_t i = 0; i < in->n; i++) {
        const struct bts_record *r = &in->rec[i];
        exp_add(out, r->from, r->to);
        if (idx < n)
            idx++;
        if (idx < thresh)
            continue;
        /* The PMI arrives before the next instruction, which is where this transfer went. */
        if (!nmi_mode && idx < n) {
            exp_add(out, r->to, trap_stub_address(VEC_PMI));
            idx++;
        }
        seen = (seen == UINT64_MAX || seen == idx) ? idx : UINT64_MAX - 1;
        pmis++;
        idx = 0;
        if (!nmi_mode) {
            exp_add(out, LBL(isr_iretq), r->to);
            idx++;
        }
    }
    *at_entry = seen == UINT64_MAX - 1 ? UINT64_MAX : seen;
    return pmis;
}

static void show(const char *what, size_t i, const struct bts_record *r)
{
    char a[SYMBOL_TEXT_MAX], b[SYMBOL_TEXT_MAX];
    symbol_format(r->from, a, sizeof(a));
    symbol_format(r->to, b, sizeof(b));
    test_diag("  %s[%zu] %s -> %s", what, i, a, b);
}

bool exp_match(const struct bts_record *got, size_t ngot, const struct expect *e)
{
    if (e->overflow) {
        test_fail("expectation list overflow (%zu records)", e->cap);
        return false;
    }
    size_t n = ngot < e->n ? ngot : e->n;
    for (size_t i = 0; i < n; i++) {
        if (got[i].from == e->rec[i].from && got[i].to == e->rec[i].to)
            continue;
        test_fail("record %zu of %zu differs from the code's labels", i, e->n);
        for (size_t j = i >= 2 ? i - 2 : 0; j <= i + 1 && j < n; j++) {
            show("got     ", j, &got[j]);
            show("expected", j, &e->rec[j]);
        }
        return false;
    }
    if (ngot != e->n) {
        test_fail("%zu records, expected %zu", ngot, e->n);
        if (ngot > n)
            show("first extra", n, &got[n]);
        else
            show("first missing", n, &e->rec[n]);
        return false;
    }
    return true;
}

struct bts_config cfg_circular(uint32_t hw, unsigned cpl)
{
    return (struct bts_config){
        .hw_records = hw, .mode = BTS_MODE_CIRCULAR, .events = BTS_EVENTS_BRANCHES, .cpl = cpl};
}

struct bts_config cfg_interrupt(uint32_t hw, uint32_t thresh, uint32_t ring, enum bts_policy p,
                                unsigned events, unsigned cpl)
{
    return (struct bts_config){.hw_records = hw,
                               .thresh_records = thresh,
                               .mode = BTS_MODE_INTERRUPT,
                               .ring_records = ring,
                               .policy = p,
                               .events = events,
                               .cpl = cpl};
}

bool bts_require(void)
{
    const char *why;
    if (bts_available(&why))
        return true;
    test_skip("no BTS backend: %s", why);
    return false;
}

bool trace_setup(struct bts_trace *t, const struct bts_config *cfg)
{
    *t = (struct bts_trace){0};
    int err = bts_configure(t, cfg);
    if (err == 0)
        err = bts_attach(t);
    if (err) {
        test_fail("trace set-up failed: %s", err_name(err));
        return false;
    }
    return true;
}

void trace_teardown(struct bts_trace *t)
{
    bts_release(t);
}

struct bts_trace *trace_alloc(const struct bts_config *cfg)
{
    struct bts_trace *t = kzalloc(sizeof(*t));
    int err = t ? bts_configure(t, cfg) : E_NOMEM;
    if (err) {
        test_fail("trace: %s", err_name(err));
        kfree(t);
        return NULL;
    }
    return t;
}

void *test_scratch(void **slot, size_t bytes)
{
    if (!*slot) {
        uint64_t pages = (bytes + PAGE_SIZE - 1) / PAGE_SIZE, p = pages_alloc(pages);
        if (!p) {
            test_fail("no %lu free contiguous pages for the suite's arrays", pages);
            return NULL;
        }
        *slot = (void *)p;
    }
    return *slot;
}

void trace_free(struct bts_trace *t)
{
    if (t) {
        bts_release(t);
        kfree(t);
    }
}

int64_t trace_collect(struct bts_trace *t, struct bts_record *out, size_t max)
{
    int64_t n = bts_get_raw(t, 0, max, out);
    if (n < 0)
        test_fail("reading the trace: %s", err_name((int)n));
    /* One line per record, raw, for tools/btsx-trace: name, index, from, to, flags. */
    for (int64_t i = 0; test_dump_traces() && i < n; i++)
        test_diag("bts-record %s %ld %#lx %#lx %#lx", test_current_name(), i, out[i].from,
                  out[i].to, out[i].flags);
    return n;
}

extern const char _traced_code_start[], _traced_code_end[];

bool in_traced_code(uint64_t a)
{
    return a >= (uint64_t)_traced_code_start && a < (uint64_t)_traced_code_end;
}

bool pmi_can_land(uint64_t a)
{
    const struct bts_backend *be = bts_backend();
    return in_traced_code(a) || (a >= (uint64_t)be->write_debugctl && a <= be->write_ret);
}

struct ds_area *loaded_ds_area(void)
{
    return (struct ds_area *)bts_backend()->read_ds_area();
}

/* Every bound a trace test uses, in one place, derived from the guarantee profile of the
 * backend in use (bts_profile()). The PMI routine clears TR first (ds/pmi.c), so the part of
 * a handler that can be recorded is the IDT stub, the common entry and the calls down to the
 * DEBUGCTL write, and the returns after the restore: well under HANDLER_RECORDS_MAX branches.
 * Where the profile is exact (the model's default), so are the bounds. */
#define HANDLER_RECORDS_MAX 32

const struct bts_bounds *bts_bounds(void)
{
    static struct bts_bounds b;
    const struct bts_profile *p = bts_profile();
    bool handlers = p->handler_records != BTS_NEVER;
    b = (struct bts_bounds){
        .name = p->name,
        .pmi_skid = p->pmi_skid_max,
        .handler_records = handlers,
        .handler_records_max = handlers ? HANDLER_RECORDS_MAX : 0,
        .interrupt_records_exact = p->pmi_skid_max == 0 && !handlers && p->threshold_record_first,
        .fixed_pmi_entry_recorded = true,
    };
    return &b;
}

extern const char _text_start[], _text_end[];

size_t trace_split(const struct bts_record *in, size_t n, struct bts_record *code,
                   struct trace_split *s)
{
    *s = (struct trace_split){0};
    for (size_t i = 0; i < n; i++) {
        const struct bts_record *r = &in[i];
        if (r->from == BTS_ESCAPE)
            s->escapes++;
        else if (r->to == trap_stub_address(VEC_PMI) && pmi_can_land(r->from))
            s->pmi_entry++;
        else if (r->from == LBL(isr_iretq) && pmi_can_land(r->to))
            s->iretq++;
        else if (in_traced_code(r->from) || in_traced_code(r->to))
            code[s->code++] = *r;
        else if (r->from >= LBL(_text_start) && r->from < LBL(_text_end) &&
                 r->to >= LBL(_text_start) && r->to < LBL(_text_end))
            s->handler++;
        else if (s->other++ == 0)
            s->first_other = *r;
    }
    return s->code;
}

bool split_within_bounds(const struct trace_split *s, uint64_t interrupts)
{
    const struct bts_bounds *b = bts_bounds();
    bool ok = CHECK(s->other == 0, "%lu records fit nowhere, first %#lx -> %#lx", s->other,
                    s->first_other.from, s->first_other.to);
    uint64_t max = b->handler_records ? b->handler_records_max * interrupts : 0;
    ok &= CHECK(s->handler <= max, "%lu handler records, at most %lu allowed (%s)", s->handler, max,
                b->name);
    return ok;
}

static bool in_kernel_text(uint64_t a)
{
    return a >= LBL(_text_start) && a < LBL(_text_end);
}

/* The start of an interrupt stub, where the IDT points (kernel/isr.S: one per vector, all the
 * same size; the last is not padded, isr_common follows it). */
static bool in_stubs(uint64_t a)
{
    uint64_t size = trap_stub_address(1) - trap_stub_address(0);
    return a >= trap_stub_address(0) && a <= trap_stub_address(255) &&
           (a - trap_stub_address(0)) % size == 0;
}

bool handler_records_check(const struct bts_record *in, size_t n, struct handler_count *c)
{
    const struct bts_bounds *b = bts_bounds();
    uint64_t stub_size = trap_stub_address(1) - trap_stub_address(0);
    /* The innermost interrupt's stub, how deep interrupts nest (a handler's own interrupt on
     * hardware), the handler records since the innermost began. */
    uint64_t stub = 0, depth = 0, run = 0;
    bool ok = true;
    *c = (struct handler_count){0};
    for (size_t i = 0; i < n && ok; i++) {
        const struct bts_record *r = &in[i];
        if (r->from == BTS_ESCAPE)
            continue;
        if (r->from == LBL(isr_iretq)) {
            if (depth > 0 && --depth == 0)
                stub = 0;
            continue;
        }
        if (in_stubs(r->to)) { /* an entry record: an interrupt begins */
            stub = r->to;
            depth++;
            run = 0;
            c->interrupts++;
            continue;
        }
        if (in_traced_code(r->from) || in_traced_code(r->to))
            continue;
        /* Neither known code nor an interrupt's ends: it must be a handler's own branch. */
        ok &= CHECK(stub != 0, "record %zu %#lx -> %#lx: not known code, outside an interrupt", i,
                    r->from, r->to);
        ok &= CHECK(in_kernel_text(r->from) && in_kernel_text(r->to),
                    "record %zu %#lx -> %#lx: a handler record outside kernel text", i, r->from,
                    r->to);
        /* The first branch of any handler is its stub's JMP. */
        ok &= CHECK(stub == 0 || run > 0 || (r->from >= stub && r->from < stub + stub_size),
                    "record %zu %#lx -> %#lx: the first handler record is not the stub's (%#lx)", i,
                    r->from, r->to, stub);
        ok &= CHECK(++run <= b->handler_records_max,
                    "record %zu: more than %u handler records in one interrupt (%s)", i,
                    b->handler_records_max, b->name);
        c->records++;
        c->with_records += run == 1;
    }
    return ok;
}

int64_t trace_collect_code(struct bts_trace *t, struct bts_record *out, size_t max)
{
    int64_t n = trace_collect(t, out, max);
    if (n <= 0 || !bts_bounds()->handler_records)
        return n;
    /* Every record left out must be a handler's, within the bounds. */
    struct handler_count c;
    if (!handler_records_check(out, (size_t)n, &c))
        return -1;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++)
        if (in_traced_code(out[i].from) || in_traced_code(out[i].to))
            out[k++] = out[i];
    return k;
}

/* Whatever a test left behind: recording off, no trace loaded, the LVT PC entry unmasked. */
static void bts_test_cleanup(void)
{
    if (!bts_available(NULL))
        return;
    bts_backend()->write_debugctl(0); /* also for a test that wrote DEBUGCTL itself */
    struct bts_trace *t = bts_current();
    if (t)
        bts_disable(t);
    bts_detach();
    apic_write(APIC_LVT_PC, apic_read(APIC_LVT_PC) & ~APIC_LVT_MASKED);
}
TEST_CLEANUP(bts_test_cleanup);

static void bts_header(void (*line)(const char *fmt, ...))
{
    line("backend: %s (%s)", bts_available(NULL) ? bts_backend()->name : "none",
         bts_backend_reason());
    line("debugctl: %s", bts_layout_reason());
    line("pmi: %s", pmi_is_nmi() ? "nmi" : "fixed");
    line("profile: %s", bts_profile_describe());
    line("bounds: %s, skid %u records, handler records %s", bts_bounds()->name,
         bts_bounds()->pmi_skid, bts_bounds()->handler_records ? "allowed" : "none");
    if (bts_errata())
        line("errata: %s applies to this CPU model (docs/hardware.md §9)", bts_errata());
}
TEST_HEADER(bts_header);
