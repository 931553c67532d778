/*
 * The DS/BTS layer and its tracer API (the 2007 review's design): a trace owns a DS area, a
 * small hardware buffer and a larger ring; the threshold interrupt drains the one into the
 * other under an overflow policy. One trace at a time is loaded on the CPU (bts_attach, or the
 * scheduler's ds_switch at every context switch); the untraced state is a per-CPU DS area
 * with recording off.
 *
 *   configure -> attach -> enable ... [PMI: drain] ... disable -> count/get/drain/clear
 */
#ifndef BTSX_DS_BTS_H
#define BTSX_DS_BTS_H

#include <stdbool.h>
#include <stdint.h>

#include "ds/layout.h"
#include "ds/record.h"
#include "ds/ring.h"
#include "kernel/percpu.h"
#include "kernel/spinlock.h"

struct bts_backend;
struct debugctl_layout;

/* What to record. */
#define BTS_EVENTS_BRANCHES   (1u << 0)
#define BTS_EVENTS_TIMESTAMPS (1u << 1) /* arrival/departure records at context switches */
#define BTS_CPL_KERNEL        (1u << 0) /* record transfers that land at CPL 0 */
#define BTS_CPL_USER          (1u << 1) /* ... at CPL 3 */

/* Memory one trace may use (DS page + hardware buffer + ring). */
#define BTS_QUOTA_BYTES_DEFAULT (32ULL << 20)

struct bts_config {
    uint32_t hw_records;     /* hardware buffer, >= BTS_MIN_RECORDS */
    uint32_t thresh_records; /* interrupt mode: threshold from base; 0 = Linux's default */
    enum bts_buf_mode mode;  /* circular: records stay in the hardware buffer */
    uint32_t ring_records;   /* interrupt mode: the ring the PMI drains into */
    enum bts_policy policy;  /* interrupt mode: wrap, stop or stream */
    unsigned events;         /* BTS_EVENTS_* */
    unsigned cpl;            /* BTS_CPL_*; 0 records nothing (both OFF bits set) */
};

struct bts_trace;
/* Stream policy: the ring is full and records are waiting. The tracer must drain (return 0);
 * the scheduler's version suspends the traced task until its tracer has drained. */
typedef int (*bts_full_fn)(struct bts_trace *t, void *arg);
/* Stop policy: recording stopped on a full ring. */
typedef void (*bts_stop_fn)(struct bts_trace *t, void *arg);

struct bts_trace {
    struct bts_config cfg;
    bool configured;
    bool enabled;  /* the tracer asked for recording */
    bool stopped;  /* the stop policy ended recording */
    bool draining; /* inside bts_drain_hw(): the tracer's callback must not flush */
    struct ds_area *ds;
    struct bts_record *buf;
    struct bts_ring ring;
    uint64_t bytes;                  /* memory charged to the quota */
    uint64_t pmis;                   /* threshold interrupts taken for this trace */
    uint64_t pmi_at_min, pmi_at_max; /* records pending when a PMI came, extremes */
    uint64_t stream_waits;           /* times the stream policy had to wait for the tracer */
    bts_full_fn on_full;
    bts_stop_fn on_stop;
    void *cb_arg;
    /* Several CPUs (ds/trace.c): the CPU whose IA32_DS_AREA holds this trace's DS area, plus
     * one (0: loaded nowhere), and the lock over the ring and the hardware buffer's drain,
     * which the tracee's CPU (its threshold interrupt, its DS switch) and its tracer's CPU may
     * reach at once, with the CPU holding it, plus one. */
    volatile unsigned loaded_on;
    struct spinlock lock;
    volatile unsigned lock_cpu;
};

struct bts_status {
    struct bts_config cfg;
    bool enabled, stopped, overflowed;
    uint64_t count; /* records available to get/drain */
    uint64_t lost;
    uint64_t pmis, stream_waits;
    uint64_t pmi_at_min, pmi_at_max; /* records pending when a PMI came, extremes */
    uint64_t spurious_pmis;          /* CPU-wide */
};

/* Brings the layer up as the DS layer's options ask (ds/options.h): ds/init.c. The backend
 * choice is ds/backend.c's, the probe ds/probe.c's. */
void ds_init(void);
const struct bts_backend *bts_backend(void);
/* False when backend=hw was forced on a machine whose probe failed: why is the reason. */
bool bts_available(const char **why);
const char *bts_backend_reason(void);
/* The erratum that affects this CPU's records ("AAJ122": wrong `from` after power-state
 * transitions), or NULL. */
const char *bts_errata(void);
bool bts_hw_probe_passed(const char **why);
/* The DEBUGCTL layout the backend in use interprets: the CPU's for the hardware (NULL if the
 * table has none), the one chosen by model.layout for the model (ds/debugctl.h). */
const struct debugctl_layout *bts_layout(void);
/* The header's account of the layouts: the one in use, the table's answer, the model's. */
const char *bts_layout_reason(void);
/* Switches the backend at run time and reloads the DS area into it; E_BUSY while the loaded
 * trace records. bts.differential runs the same code on both backends with it. */
int bts_use_backend(const struct bts_backend *b);

/* Tracer API (ds/trace.c). Errors are E_* codes; a failed call changes nothing. */
int bts_configure(struct bts_trace *t, const struct bts_config *cfg);
void bts_release(struct bts_trace *t);
void bts_set_callbacks(struct bts_trace *t, bts_full_fn full, bts_stop_fn stop, void *arg);
int bts_attach(struct bts_trace *t); /* load t's DS area on this CPU, recording off */
void bts_detach(void);               /* back to the CPU's idle DS area */
struct bts_trace *bts_current(void); /* the loaded trace, NULL for the idle DS area */
int bts_enable(struct bts_trace *t);
int bts_disable(struct bts_trace *t);
int bts_status(struct bts_trace *t, struct bts_status *st);
uint64_t bts_count(struct bts_trace *t);
int bts_get(struct bts_trace *t, uint64_t i, struct bts_event *out);
int64_t bts_get_range(struct bts_trace *t, uint64_t first, uint64_t n, struct bts_event *out);
/* Raw hardware-format records, oldest first (tests compare these with expectations). */
int64_t bts_get_raw(struct bts_trace *t, uint64_t first, uint64_t n, struct bts_record *out);
/* The drains: up to max of the oldest records, which they remove; the newer ones stay (in
 * either mode). */
int64_t bts_drain(struct bts_trace *t, struct bts_event *out, uint64_t max);
int64_t bts_drain_raw(struct bts_trace *t, struct bts_record *out, uint64_t max);
int bts_clear(struct bts_trace *t);
void bts_set_quota(uint64_t bytes);

/* The DEBUGCTL value that makes t record, in the current backend's layout (composed at each
 * write, so a trace follows a change of backend). */
uint64_t bts_trace_debugctl(const struct bts_trace *t);

/* Runs fn(arg) with t recording: enable, call, disable, with a fixed branch shape so that
 * the records around fn are known exactly (ds/harness.S and the tests' expectations). */
int bts_run(struct bts_trace *t, void (*fn)(void *), void *arg);
extern const char bts_run_enabled[], bts_run_call[], bts_run_returned[], bts_run_disable[];

/* The context-switch hook (the scheduler calls it; ds/ never includes sched/): prev's
 * departure, next's DS area and arrival, with only the register writes and timestamps the two
 * traces' states need. A switch between untraced tasks while no trace is loaded (the idle DS
 * area in place, recording off) has nothing to do, and is decided here, inline, so that it
 * costs the scheduler no call. */
/* The trace loaded on this CPU (kernel/percpu.h; ds/trace.c keeps it): read it here and through
 * bts_current(). */
#define ds_loaded (this_cpu()->ds_loaded)
void ds_switch_traces(struct bts_trace *prev, struct bts_trace *next);
static inline bool ds_switch_needed(const struct bts_trace *prev, const struct bts_trace *next)
{
    return prev || next || ds_loaded;
}
static inline void ds_switch(struct bts_trace *prev, struct bts_trace *next)
{
    if (ds_switch_needed(prev, next))
        ds_switch_traces(prev, next);
}

/*
 * The guarantee profile: what the BTS implementation in use may do where the SDM leaves room
 * (docs/hardware.md §12). Tests ask it, never which backend runs. The hardware's profile is the
 * whole envelope btsx allows; the model's is exact unless model=hw or a model.* freedom widens
 * it (docs/model.md). ds/profile.c.
 */
enum bts_maybe { BTS_NEVER, BTS_ALWAYS, BTS_EITHER };

struct bts_profile {
    const char *name;
    /* Records stored after the one that reached the threshold before the PMI is taken, at
     * most (docs/hardware.md §5, O2). 0: the PMI comes right after the threshold record. */
    unsigned pmi_skid_max;
    /* With CPL 0 recorded, records the way into the PMI handler may add before the handler
     * clears TR and reads the index, at most (§5, §7). */
    unsigned pmi_entry_records_max;
    /* The record that reaches the threshold is stored before the PMI is taken (§5, O2). */
    bool threshold_record_first;
    /* With CPL 0 recorded, the branches of the interrupt and PMI handlers themselves (beyond
     * the transfer into them and the IRETQ out) appear in the trace (§7). */
    enum bts_maybe handler_records;
    /* Kernel-to-user returns (IRETQ, SYSRETQ) recorded while BTS_OFF_OS filters CPL 0 (§6,
     * O4). */
    enum bts_maybe offos_user_returns;
    /* An external interrupt is taken at the first instruction after the one that made it
     * deliverable, so its record's `from` is known exactly (§7, O6). */
    bool irq_lands_exactly;
    /* Every record stored with the index at or past the threshold asks for the PMI, not only
     * the one that reaches it: a PMI that LVT PC's mask held back comes at the first record
     * after the unmask (§5, O3). */
    bool pmi_past_threshold;
    /* A taken conditional branch (jcc, loop*, jrcxz) to the next instruction is recorded, as
     * every taken branch is (docs/hardware.md §7). The model cannot tell it from a fall-through
     * (docs/model.md). */
    bool cond_next_recorded;
};

/* The profile of the backend in use (the model's as its options set it). */
const struct bts_profile *bts_profile(void);
/* Where a PMI may find the index, in records from base, for a threshold of thresh records:
 * lo..hi under the profile in use. kernel: the trace records CPL 0, so the way into the
 * handler may store records before the handler reads the index (§7: whether it does depends
 * on where the interrupt lands, so it widens only the upper end). */
void bts_profile_pmi_window(uint64_t thresh, bool kernel, uint64_t *lo, uint64_t *hi);
/* One `# profile:` header line's text: name and each field. */
const char *bts_profile_describe(void);
/* True when the software model is the backend in use: only for tests about the model's own
 * code (its counters, its layout choice, its cost), never for what a trace may contain. */
bool bts_backend_is_model(void);
/* Seeds the model's choices within its profile (model=hw): the run's seed, so that a run
 * repeats with the same seed= (the test framework calls it before the first test). Each CPU
 * draws from a generator of its own, seeded from this seed and its CPU number. */
void bts_model_seed(uint64_t seed);

/* Threshold interrupts that found no trace at its threshold, on the running CPU (ds/trace.c). */
uint64_t bts_spurious_pmis(void);
/* ... on CPU `cpu` (0 if it is not online). */
uint64_t bts_spurious_pmis_cpu(unsigned cpu);

#endif
