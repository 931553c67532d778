#include "ds/model.h"

#include "ds/backend.h"
#include "ds/model_tf.h"
#include "ds/debugctl.h"
#include "ds/decode.h"
#include "ds/layout.h"
#include "ds/record.h"
#include "kernel/apic.h"
#include "kernel/cpu.h"
#include "kernel/panic.h"
#include "kernel/paging.h"
#include "kernel/percpu.h"
#include "kernel/recover.h"
#include "kernel/string.h"
#include "kernel/trap.h"

#define PAGE_OFFSET_MASK (PAGE_SIZE - 1)

static const struct debugctl_layout *layout = &debugctl_core;

/* The freedoms in use (model_set_freedoms), the same for every CPU. */
static struct model_freedoms freedoms = {
    .skid = 0, .offos_returns = BTS_ALWAYS, .handler_records = BTS_NEVER};
static uint64_t seed = 1;

/*
 * Decoded instructions, direct-mapped by address: a traced loop decodes each instruction
 * once, not once per step. Keyed by address and CR3 (user code of different address spaces
 * shares addresses) and emptied whenever recording starts, so code that changed while nothing
 * was recorded is decoded afresh.
 */
#define DCACHE_BITS 8
#define DCACHE_SIZE (1u << DCACHE_BITS)

struct dcache_entry {
    uint64_t rip, cr3;
    uint32_t gen; /* valid only while it equals the CPU's dcache_gen */
    uint8_t len, kind;
};

/*
 * The model's machine state, one per CPU as the registers it stands for are (kernel/percpu.h
 * points at the running CPU's): each CPU single-steps, decodes and stores on its own, and
 * raises its threshold interrupt through its own LVT PC.
 */
struct model_cpu {
    /* The shadow registers (ds/model.S stores DEBUGCTL at offset 0). The shadow DEBUGCTL
     * means what the layout says, as on a CPU of that layout: the model implements its TR,
     * BTS, BTINT, BTS_OFF_OS and BTS_OFF_USR; other bits read back as written and do
     * nothing. */
    uint64_t debugctl, ds_area;
    /* The instruction the next #DB will have executed. */
    uint64_t prev_rip;
    bool prev_valid;
    /* A PMI owed since the threshold was reached: raised after pmi_wait more records. */
    bool pmi_owed;
    unsigned pmi_wait, pmi_skid;
    uint64_t rng; /* the generator that draws each choice the freedoms leave open */
    uint32_t dcache_gen;
    struct model_stats stats;
    struct dcache_entry dcache[DCACHE_SIZE];
};
_Static_assert(__builtin_offsetof(struct model_cpu, debugctl) == 0, "ds/model.S");

static struct model_cpu model_cpus[SMP_MAX_CPUS];
#define mc (this_cpu()->model)

static uint64_t cpu_seed(unsigned cpu)
{
    uint64_t r = seed + cpu * 0x9E3779B97F4A7C15ULL; /* CPU 0 keeps the run's seed */
    return r ? r : 1;
}

void model_set_freedoms(const struct model_freedoms *f)
{
    freedoms = *f;
}

void model_get_freedoms(struct model_freedoms *f)
{
    *f = freedoms;
}

void bts_model_seed(uint64_t s)
{
    seed = s ? s : 1;
    for (unsigned i = 0; i < SMP_MAX_CPUS; i++)
        model_cpus[i].rng = cpu_seed(i);
}

/* xorshift64*: a choice in 0..n. */
static unsigned draw(unsigned n)
{
    struct model_cpu *m = mc;
    m->rng ^= m->rng >> 12;
    m->rng ^= m->rng << 25;
    m->rng ^= m->rng >> 27;
    return (unsigned)(((m->rng * 0x2545F4914F6CDD1DULL) >> 32) % (n + 1));
}

uint64_t bts_model_read_debugctl(void)
{
    return mc->debugctl;
}
uint64_t bts_model_read_ds_area(void)
{
    return mc->ds_area;
}
void bts_model_write_ds_area(uint64_t v)
{
    mc->ds_area = v;
}

void model_set_layout(const struct debugctl_layout *l)
{
    layout = l;
}

static bool recording(void)
{
    return debugctl_recording(layout, mc->debugctl);
}

static void dcache_flush(void);
static void pmi_now(void);
int bts_model_debugctl_changed(void);
int bts_model_debugctl_changed(void)
{
    if (!recording())
        pmi_now(); /* an owed PMI still comes: on hardware the skid is time, not records */
    /* Inside a trap handler RFLAGS belongs to the handler: the exit hook sets the frame's TF. */
    if (this_cpu()->trap_depth > 0)
        return TF_LEAVE;
    if (recording()) {
        dcache_flush();
        mc->prev_rip = (uint64_t)bts_model_write_ret;
        mc->prev_valid = true;
        return TF_SET;
    }
    mc->prev_valid = false;
    return TF_CLEAR;
}

const struct bts_backend bts_backend_model = {
    .name = "model",
    .read_debugctl = bts_model_read_debugctl,
    .write_debugctl = bts_model_write_debugctl,
    .read_ds_area = bts_model_read_ds_area,
    .write_ds_area = bts_model_write_ds_area,
    .write_ret = (uint64_t)bts_model_write_ret,
};

/* Raises the threshold interrupt the way the CPU does: through LVT PC, masking it. False if
 * LVT PC was masked. */
static bool raise_pmi(void)
{
    uint32_t lvt = apic_read(APIC_LVT_PC);
    if (lvt & APIC_LVT_MASKED)
        return false; /* one already delivered and not yet acknowledged, or masked by software */
    apic_write(APIC_LVT_PC, lvt | APIC_LVT_MASKED);
    if ((lvt & APIC_LVT_DM_MASK) == APIC_LVT_DM_NMI)
        apic_self_nmi();
    else
        apic_self_ipi(lvt & APIC_LVT_VECTOR);
    mc->stats.pmis++;
    return true;
}

/* The owed PMI, now: after pmi_skid records past the threshold record. */
static void pmi_now(void)
{
    if (!mc->pmi_owed)
        return;
    mc->pmi_owed = false;
    if (raise_pmi() && mc->pmi_skid) {
        mc->stats.delayed_pmis++;
        mc->stats.skid_records += mc->pmi_skid;
    }
}

/* A record was stored at or past the threshold: the PMI is owed from the first such record,
 * and comes 0..skid records later (docs/hardware.md §5, O2). */
static void pmi_threshold_reached(void)
{
    if (!mc->pmi_owed) {
        mc->pmi_owed = true;
        mc->pmi_skid = 0;
        mc->pmi_wait = draw(freedoms.skid);
    } else {
        mc->pmi_skid++;
    }
    if (mc->pmi_wait-- == 0)
        pmi_now();
}

/* Stores one record with the hardware's rules (docs/hardware.md §2-§4). */
static void store(uint64_t from, uint64_t to, unsigned cpl_after)
{
    uint64_t dbg = mc->debugctl;
    /* A return from the kernel to user code while CPL 0 is filtered: the CPL after it is 3,
     * so the model records it, unless model.offos_returns says otherwise (§6, O4). */
    if (cpl_after != 0 && (dbg & layout->bts_off_os) && !(from >= USER_BASE && from < USER_END)) {
        enum bts_maybe m = freedoms.offos_returns;
        if (m == BTS_NEVER || (m == BTS_EITHER && draw(1) == 0)) {
            mc->stats.offos_omitted++;
            return;
        }
        mc->stats.offos_returns++;
    }
    /* The CPL filter applies to the CPL after the transfer (docs/hardware.md §6). */
    if ((cpl_after == 0 && (dbg & layout->bts_off_os)) ||
        (cpl_after != 0 && (dbg & layout->bts_off_usr))) {
        mc->stats.filtered++;
        return;
    }
    struct ds_area *ds = (struct ds_area *)mc->ds_area;
    if (!ds)
        return;
    uint64_t idx = ds->bts_index;
    bool btint = dbg & layout->btint;
    if (idx >= ds->bts_abs_max && btint) {
        /* Interrupt mode and full: the PMI is overdue. What hardware does here is open
         * (docs/hardware.md §4, O1); the model drops the record and keeps the full buffer. */
        mc->stats.dropped++;
        if (!mc->pmi_owed) { /* no skid left to take: the buffer is full */
            mc->pmi_owed = true;
            mc->pmi_skid = 0;
        }
        pmi_now();
        return;
    }
    /* An index outside the buffer is undefined on hardware; the model restarts at base. */
    if (idx < ds->bts_base || idx + BTS_RECORD_SIZE > ds->bts_abs_max)
        idx = ds->bts_base;
    *(struct bts_record *)idx = (struct bts_record){from, to, 0};
    idx += BTS_RECORD_SIZE;
    if (idx >= ds->bts_abs_max && !btint)
        idx = ds->bts_base; /* circular mode wraps */
    ds->bts_index = idx;
    mc->stats.records++;
    if (btint && idx >= ds->bts_thresh)
        pmi_threshold_reached();
}

/* Copies the bytes of the instruction at rip without touching a page it does not use. */
static size_t fetch(uint64_t rip, uint8_t *buf, size_t want)
{
    size_t n = PAGE_SIZE - (rip & PAGE_OFFSET_MASK);
    if (n > want)
        n = want;
    bool user = rip >= USER_BASE && rip < USER_END;
    if (user)
        user_access_begin();
    memcpy(buf, (const void *)rip, n);
    if (user)
        user_access_end();
    return n;
}

static void dcache_flush(void)
{
    mc->dcache_gen++;
}

static struct dcache_entry *dcache_slot(uint64_t rip)
{
    return &mc->dcache[(rip ^ (rip >> DCACHE_BITS)) & (DCACHE_SIZE - 1)];
}

static bool decode(uint64_t from, struct insn *in)
{
    uint8_t buf[INSN_MAX_LEN];
    size_t have = fetch(from, buf, INSN_MAX_LEN);
    int len = insn_decode(buf, have, from, in);
    if (len == INSN_ERR_TRUNCATED && have < INSN_MAX_LEN) {
        /* It executed, so the rest of it is on the next page. */
        have += fetch(from + have, buf + have, INSN_MAX_LEN - have);
        len = insn_decode(buf, have, from, in);
    }
    if (len < 0) {
        mc->stats.undecodable++;
        return false;
    }
    return true;
}

/* The model's own code that runs while the kernel is single-stepped (its SYSCALL/SYSRET
 * hooks, in .text.model_hooks): never recorded, it is the machine, not the traced program. */
extern const char _model_hooks_start[], _model_hooks_end[];

static bool model_machinery(uint64_t a)
{
    return a >= (uint64_t)_model_hooks_start && a < (uint64_t)_model_hooks_end;
}

static void decode_and_store(uint64_t from, uint64_t to, unsigned cpl_after)
{
    if (model_machinery(from) || model_machinery(to))
        return;
    uint64_t cr3 = read_cr3();
    struct dcache_entry *e = dcache_slot(from);
    if (e->rip != from || e->cr3 != cr3 || e->gen != mc->dcache_gen) {
        struct insn in;
        if (!decode(from, &in))
            return;
        *e = (struct dcache_entry){from, cr3, mc->dcache_gen, in.len, in.kind};
    }
    struct insn in = {.len = e->len, .kind = e->kind};
    if (!insn_is_branch(&in))
        return;
    if (insn_is_conditional(&in) && to == from + in.len)
        return; /* not taken */
    store(from, to, cpl_after);
}

static void model_db(struct trap_frame *f)
{
    /* (A #DB with prev_valid false just starts the walk: see model_syscall_entry.) */
    uint64_t dr6 = read_dr6();
    write_dr6(DR6_RESET);
    if (!(dr6 & DR6_BS)) {
        if (!recover_from_trap(f, RECOVER_FAULT))
            panic_frame(f, "#DB that is not a single step");
        return;
    }
    mc->stats.steps++;
    if (!recording()) {
        f->rflags &= ~RFLAGS_TF; /* a stale TF: stop stepping */
        mc->prev_valid = false;
        return;
    }
    /* A step that did not move RIP retired nothing: a REP-string iteration, or the #DB some
     * CPUs and emulators deliver right after SYSRET/IRET loads TF=1. (A branch to itself is
     * therefore not recorded: docs/model.md.) */
    if (mc->prev_valid && f->rip != mc->prev_rip)
        decode_and_store(mc->prev_rip, f->rip, f->cs & 3);
    mc->prev_rip = f->rip;
    mc->prev_valid = true;
}

/* How far the handler walk reads before it gives up on finding a branch (isr_common pushes
 * the whole frame before its CALL: 20-odd instructions). */
#define HANDLER_WALK_INSNS 64

/*
 * The way into a handler, as CPL-0 recording on hardware would store it after the entry
 * record (docs/hardware.md §7; model.handler_records): from the vector's IDT stub on, the
 * decoder follows the code and stores each direct JMP or CALL, {branch -> target}, exactly as
 * it will execute (the stub's JMP to isr_common, its CALL of trap_dispatch(), ...). It stops
 * at the first branch whose direction or target only running it would tell (a conditional,
 * an indirect branch, a return), at an instruction it cannot decode, or after `max` records.
 * Kernel text does not change, so what it stores is what the handler then runs.
 */
static void store_handler_path(unsigned vector, unsigned max)
{
    uint64_t rip = trap_stub_address(vector);
    unsigned stored = 0;
    for (unsigned i = 0; i < HANDLER_WALK_INSNS && stored < max; i++) {
        uint8_t buf[INSN_MAX_LEN];
        struct insn in;
        size_t have = fetch(rip, buf, INSN_MAX_LEN);
        int len = insn_decode(buf, have, rip, &in);
        if (len == INSN_ERR_TRUNCATED && have < INSN_MAX_LEN) {
            have += fetch(rip + have, buf + have, INSN_MAX_LEN - have);
            len = insn_decode(buf, have, rip, &in);
        }
        if (len < 0)
            return;
        if (!insn_is_branch(&in)) {
            rip += in.len;
            continue;
        }
        if (in.kind != INSN_JMP_REL && in.kind != INSN_CALL_REL)
            return;
        uint64_t before = mc->stats.records;
        store(rip, in.target, 0);
        mc->stats.handler_records += mc->stats.records - before;
        stored++;
        rip = in.target;
    }
}

/* How many records of the way into this interrupt's handler the model stores (0 when CPL 0 is
 * filtered: the handler runs at CPL 0). */
static unsigned handler_path_records(void)
{
    if (mc->debugctl & layout->bts_off_os)
        return 0;
    switch (freedoms.handler_records) {
    case BTS_ALWAYS:
        return freedoms.handler_records_max;
    case BTS_EITHER: /* whether, then how far along the path (at least its first branch) */
        return freedoms.handler_records_max && draw(1) ? 1 + draw(freedoms.handler_records_max - 1)
                                                       : 0;
    default:
        return 0;
    }
}

/* An interrupt or exception delivered to traced code: record the transfer to its handler. */
static void model_trap_entry(struct trap_frame *f)
{
    if (f->vector == VEC_DB || !(f->rflags & RFLAGS_TF) || !recording())
        return;
    /* A trap raised by the instruction just executed (INT n, INT3, INT1) leaves RIP after it;
     * then the record's source is that instruction. Faults and external interrupts report
     * the instruction not yet executed, which is where the model expects to be. */
    uint64_t from = (mc->prev_valid && f->rip != mc->prev_rip) ? mc->prev_rip : f->rip;
    store(from, trap_stub_address((unsigned)f->vector), 0);
    store_handler_path((unsigned)f->vector, handler_path_records());
    mc->prev_valid = false;
}

/* Back to traced code: record the IRETQ and keep stepping. */
static void model_trap_exit(struct trap_frame *f)
{
    if (f->vector == VEC_DB || !(f->rflags & RFLAGS_TF))
        return;
    if (!recording()) {
        f->rflags &= ~RFLAGS_TF;
        mc->prev_valid = false;
        return;
    }
    store((uint64_t)isr_iretq, f->rip, f->cs & 3);
    mc->prev_rip = f->rip;
    mc->prev_valid = true;
}

void bts_model_tf_on(void);
void bts_model_tf_off(void);

/* SYSCALL: the transfer to the entry point (CPL 0 after it). The user side was stepped if
 * its RFLAGS had TF; the kernel side is stepped from here while recording is on. */
#define MODEL_HOOK __attribute__((section(".text.model_hooks"), noinline))

static MODEL_HOOK void model_syscall_entry(uint64_t from, uint64_t to, uint64_t user_rflags)
{
    if (!recording())
        return;
    if (user_rflags & RFLAGS_TF)
        store(from, to, 0);
    mc->prev_valid = false; /* the first step lands after bts_model_tf_on's RET */
    bts_model_tf_on();
}

/* SYSRET: stop stepping the kernel, record the return, step the user side on. */
static MODEL_HOOK void model_syscall_exit(uint64_t from, uint64_t to, uint64_t *user_rflags)
{
    /* The steps into and through tf_off are the hooks' own, never recorded; the #DB after its
     * POPFQ leaves prev_rip at its RET, which is replaced below, or unused while recording is
     * off (the next start sets prev_rip afresh). */
    bts_model_tf_off();
    if (!recording()) {
        *user_rflags &= ~RFLAGS_TF;
        return;
    }
    store(from, to, 3);
    *user_rflags |= RFLAGS_TF;
    mc->prev_rip = to;
    mc->prev_valid = true;
}

void model_cpu_init(struct percpu *cpu)
{
    struct model_cpu *m = &model_cpus[cpu->cpu];
    m->rng = cpu_seed(cpu->cpu);
    m->dcache_gen = 1;
    cpu->model = m;
}

void model_init(void)
{
    trap_set_handler(VEC_DB, model_db);
    trap_set_ap_handler(VEC_DB, model_db);
    trap_entry_hook = model_trap_entry;
    trap_exit_hook = model_trap_exit;
    syscall_entry_hook = model_syscall_entry;
    syscall_exit_hook = model_syscall_exit;
}

void model_get_stats(struct model_stats *s)
{
    *s = mc->stats;
}

void model_get_cpu_stats(unsigned cpu, struct model_stats *s)
{
    *s = cpu < SMP_MAX_CPUS ? model_cpus[cpu].stats : (struct model_stats){0};
}
