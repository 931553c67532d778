/*
 * Traces: their memory, validation, loading on the CPU (the DS switch and the idle DS area),
 * the buffer policy that moves hardware records into the ring, and the tracer's read side.
 * States of a trace: unconfigured -> configured (memory held) -> attached (its DS area is in
 * IA32_DS_AREA) -> enabled (DEBUGCTL records) -> [stopped by the stop policy] -> released.
 */
#include "ds/trace.h"

#include "ds/backend.h"
#include "ds/bts.h"
#include "ds/debugctl.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/mem.h"
#include "kernel/paging.h"
#include "kernel/percpu.h"
#include "kernel/smp.h"
#include "kernel/string.h"

#define VALIDATE_BASE 0x100000ULL /* any canonical, aligned address: layout checks only */
#define IDLE_RECORDS  BTS_MIN_RECORDS

/* Per CPU (kernel/percpu.h): ds_loaded, the trace whose DS area IA32_DS_AREA holds (NULL:
 * the idle area; not the scheduler's current task: a test can attach a trace that no task
 * owns), ds_idle, the CPU's idle DS area, and pmi_spurious. */
static uint64_t quota = BTS_QUOTA_BYTES_DEFAULT;

int bts_call_traced(uint64_t debugctl, void (*fn)(void *), void *arg, void (*wr)(uint64_t));

void bts_set_quota(uint64_t bytes)
{
    quota = bytes;
}
struct bts_trace *bts_current(void)
{
    return ds_loaded;
}

uint64_t bts_spurious_pmis(void)
{
    return this_cpu()->pmi_spurious;
}

uint64_t bts_spurious_pmis_cpu(unsigned cpu)
{
    struct percpu *p = smp_cpu(cpu);
    return p ? p->pmi_spurious : 0;
}

int ds_idle_init(struct percpu *cpu)
{
    uint64_t page = pages_alloc(2);
    if (!page)
        return E_NOMEM;
    int err = ds_layout_bts((struct ds_area *)page, page + PAGE_SIZE,
                            IDLE_RECORDS * BTS_RECORD_SIZE, BTS_THRESH_CIRCULAR, BTS_MODE_CIRCULAR);
    if (err) {
        pages_free(page, 2);
        return err;
    }
    cpu->ds_idle = (struct ds_area *)page;
    return 0;
}

void ds_idle_load(void)
{
    bts_backend()->write_ds_area((uint64_t)this_cpu()->ds_idle);
}

/* The DS area this CPU holds while t is loaded. */
static uint64_t area_of(const struct bts_trace *t)
{
    return (uint64_t)(t ? t->ds : this_cpu()->ds_idle);
}

/* Whether DEBUGCTL records while t is loaded: what the tracer asked for, unless the stop
 * policy ended it. */
static bool records(const struct bts_trace *t)
{
    return t && t->enabled && !t->stopped;
}

int bts_use_backend(const struct bts_backend *b)
{
    if (ds_loaded && ds_loaded->enabled)
        return E_BUSY;
    const struct bts_backend *old = bts_backend();
    old->write_debugctl(0);
    old->write_ds_area(0);
    bts_set_backend(b);
    b->write_ds_area(area_of(ds_loaded));
    return 0;
}

/* The trace's lock, interrupts off: whether they were on. */
static bool trace_lock(struct bts_trace *t)
{
    bool irq = irq_save();
    spin_lock(&t->lock);
    t->lock_cpu = this_cpu()->cpu + 1;
    return irq;
}

static void trace_unlock(struct bts_trace *t, bool irq)
{
    t->lock_cpu = 0;
    spin_unlock(&t->lock);
    irq_restore(irq);
}

/* Whether this CPU holds t's lock (a threshold interrupt that came as an NMI over it). */
static bool trace_locked_here(const struct bts_trace *t)
{
    return t->lock_cpu == this_cpu()->cpu + 1;
}

static uint64_t pages_for(uint64_t bytes)
{
    return (bytes + PAGE_SIZE - 1) / PAGE_SIZE;
}

static uint64_t debugctl_for(const struct bts_config *c)
{
    return debugctl_compose(bts_layout(), c->mode == BTS_MODE_INTERRUPT, c->cpl & BTS_CPL_KERNEL,
                            c->cpl & BTS_CPL_USER);
}

uint64_t bts_trace_debugctl(const struct bts_trace *t)
{
    return debugctl_for(&t->cfg);
}

static uint64_t thresh_bytes_for(const struct bts_config *c)
{
    if (c->mode == BTS_MODE_CIRCULAR)
        return BTS_THRESH_CIRCULAR;
    uint64_t r = c->thresh_records ? c->thresh_records : ds_default_thresh_records(c->hw_records);
    return r * BTS_RECORD_SIZE;
}

/* Everything that can be said about a configuration without allocating. */
static int validate(const struct bts_config *c, uint64_t *bytes)
{
    if (!c || c->mode > BTS_MODE_INTERRUPT || c->policy > BTS_POLICY_STREAM)
        return E_INVAL;
    if (c->events & ~(BTS_EVENTS_BRANCHES | BTS_EVENTS_TIMESTAMPS))
        return E_INVAL;
    if (c->cpl & ~(BTS_CPL_KERNEL | BTS_CPL_USER))
        return E_INVAL;
    if (c->mode == BTS_MODE_CIRCULAR && (c->ring_records || c->thresh_records))
        return E_INVAL; /* a circular buffer is never drained: no ring, no threshold */
    if (c->mode == BTS_MODE_INTERRUPT && c->ring_records == 0)
        return E_RANGE;
    struct ds_area probe;
    int err = ds_layout_bts(&probe, VALIDATE_BASE, (uint64_t)c->hw_records * BTS_RECORD_SIZE,
                            thresh_bytes_for(c), c->mode);
    if (err)
        return err;
    err = ds_trace_bytes(c->hw_records, c->ring_records, bytes);
    if (err)
        return err;
    return *bytes > quota ? E_QUOTA : 0;
}

static void free_memory(struct bts_trace *t)
{
    if (t->ds)
        pages_free((uint64_t)t->ds, 1);
    if (t->buf)
        pages_free((uint64_t)t->buf, pages_for((uint64_t)t->cfg.hw_records * BTS_RECORD_SIZE));
    if (t->ring.rec)
        pages_free((uint64_t)t->ring.rec, pages_for(t->ring.cap * BTS_RECORD_SIZE));
    t->ds = NULL;
    t->buf = NULL;
    t->ring.rec = NULL;
}

int bts_configure(struct bts_trace *t, const struct bts_config *cfg)
{
    uint64_t bytes;
    int err = validate(cfg, &bytes);
    if (err)
        return err;
    if (t == ds_loaded && t->enabled)
        return E_BUSY; /* reconfigure only while not recording */

    /* Build the new trace aside; the old one stays intact until this cannot fail. */
    struct bts_trace n = {.cfg = *cfg,
                          .configured = true,
                          .on_full = t->on_full,
                          .on_stop = t->on_stop,
                          .cb_arg = t->cb_arg};
    uint64_t buf_bytes = (uint64_t)cfg->hw_records * BTS_RECORD_SIZE;
    n.ds = (struct ds_area *)pages_alloc(1);
    n.buf = (struct bts_record *)pages_alloc(pages_for(buf_bytes));
    struct bts_record *ring = NULL;
    if (cfg->ring_records)
        ring = (struct bts_record *)pages_alloc(
            pages_for((uint64_t)cfg->ring_records * BTS_RECORD_SIZE));
    n.ring.rec = ring;
    n.ring.cap = cfg->ring_records;
    if (!n.ds || !n.buf || (cfg->ring_records && !ring)) {
        free_memory(&n);
        return E_NOMEM;
    }
    ds_layout_bts(n.ds, (uint64_t)n.buf, buf_bytes, thresh_bytes_for(cfg), cfg->mode);
    if (ring)
        ring_init(&n.ring, ring, cfg->ring_records, cfg->policy);
    n.bytes = bytes;

    bool was_loaded = t == ds_loaded;
    if (was_loaded)
        bts_backend()->write_ds_area((uint64_t)n.ds);
    n.loaded_on = t->loaded_on;
    free_memory(t);
    *t = n;
    return 0;
}

void bts_release(struct bts_trace *t)
{
    if (t == ds_loaded)
        bts_detach();
    free_memory(t);
    *t = (struct bts_trace){0};
}

void bts_set_callbacks(struct bts_trace *t, bts_full_fn full, bts_stop_fn stop, void *arg)
{
    t->on_full = full;
    t->on_stop = stop;
    t->cb_arg = arg;
}

int bts_attach(struct bts_trace *t)
{
    if (!t || !t->configured)
        return E_STATE;
    ds_switch(ds_loaded, t);
    return 0;
}

void bts_detach(void)
{
    ds_switch(ds_loaded, NULL);
}

/* A trace that is not loaded only changes state: ds_switch() applies it when its task runs. */
int bts_enable(struct bts_trace *t)
{
    if (!t->configured)
        return E_STATE;
    if (t->stopped)
        return E_OVERFLOW; /* the stop policy ended it: clear first */
    t->enabled = true;
    if (t == ds_loaded)
        bts_backend()->write_debugctl(debugctl_for(&t->cfg));
    return 0;
}

int bts_disable(struct bts_trace *t)
{
    if (!t->configured)
        return E_STATE;
    if (t == ds_loaded)
        bts_backend()->write_debugctl(0);
    t->enabled = false;
    return 0;
}

/* Moves what the hardware buffer holds into t's ring (recording must be off; t locked). When the
 * caller can wait (the threshold interrupt on the task's own stack) a full stream ring waits for
 * the tracer; otherwise what does not fit stays in the hardware buffer for the next drain. */
static void bts_drain_hw(struct bts_trace *t, bool can_wait)
{
    uint64_t n;
    if (ds_pending(t->ds, &n) != 0) {
        /* A corrupted index must not be trusted: nothing is copied from it. */
        t->ring.lost++;
        t->ds->bts_index = t->ds->bts_base;
        return;
    }
    struct bts_record *src = (struct bts_record *)t->ds->bts_base;
    t->draining = true;
    uint64_t done = ring_append(&t->ring, src, n);
    while (can_wait && done < n && t->cfg.policy == BTS_POLICY_STREAM && t->on_full) {
        /* Stream: never drop. The tracer makes room, then the rest goes in. */
        t->stream_waits++;
        /* The tracer takes the lock to drain: released while this waits for it (interrupts
         * stay off: this is the threshold interrupt). */
        t->lock_cpu = 0;
        spin_unlock(&t->lock);
        int err = t->on_full(t, t->cb_arg);
        spin_lock(&t->lock);
        t->lock_cpu = this_cpu()->cpu + 1;
        if (err != 0)
            break;
        uint64_t more = ring_append(&t->ring, src + done, n - done);
        if (more == 0)
            break;
        done += more;
    }
    uint64_t left = n - done;
    if (left && t->cfg.policy == BTS_POLICY_STREAM && !can_wait) {
        /* A drain that cannot wait (a tracer reading, a switch, a threshold interrupt on a
         * shared stack) waits for nobody: what does not fit stays in the hardware buffer,
         * oldest first, for the next drain. */
        memmove(src, src + done, left * BTS_RECORD_SIZE);
        t->ds->bts_index = t->ds->bts_base + left * BTS_RECORD_SIZE;
    } else {
        if (left && t->cfg.policy == BTS_POLICY_STREAM)
            t->ring.lost += left; /* no tracer made room: counted, never silent */
        t->ds->bts_index = t->ds->bts_base;
    }
    t->draining = false;
    if (t->cfg.policy == BTS_POLICY_STOP && t->ring.overflowed && !t->stopped) {
        t->stopped = true;
        if (t->on_stop)
            t->on_stop(t, t->cb_arg);
    }
}

struct bts_trace *bts_threshold(bool can_wait, bool count_spurious)
{
    struct bts_trace *t = bts_available(NULL) ? ds_loaded : NULL;
    if (t && t->configured && t->cfg.mode == BTS_MODE_INTERRUPT &&
        t->ds->bts_index >= t->ds->bts_thresh) {
        /* Over this CPU's own hold of the lock (an NMI) nothing can be drained: the records
         * stay in the buffer for the next drain. */
        if (trace_locked_here(t))
            return t;
        bool irq = trace_lock(t);
        uint64_t at = (t->ds->bts_index - t->ds->bts_base) / BTS_RECORD_SIZE;
        if (t->pmis++ == 0 || at < t->pmi_at_min)
            t->pmi_at_min = at;
        if (at > t->pmi_at_max)
            t->pmi_at_max = at;
        bts_drain_hw(t, can_wait);
        trace_unlock(t, irq);
    } else if (count_spurious) {
        this_cpu()->pmi_spurious++;
    }
    return t;
}

int bts_run(struct bts_trace *t, void (*fn)(void *), void *arg)
{
    if (!t->configured || t != ds_loaded)
        return E_STATE;
    if (t->stopped)
        return E_OVERFLOW;
    t->enabled = true;
    bts_call_traced(debugctl_for(&t->cfg), fn, arg, bts_backend()->write_debugctl);
    t->enabled = false;
    if (t->cfg.mode == BTS_MODE_INTERRUPT) {
        bool irq = trace_lock(t);
        bts_drain_hw(t, false); /* what is left below the threshold joins the ring */
        trace_unlock(t, irq);
    }
    return 0;
}

/* Whether t's hardware buffer is not this CPU's to drain now: from the stream policy's
 * callback it is being drained already; loaded on another CPU, it is that CPU's (its threshold
 * interrupt, its DS switch), and only the ring is read here. */
static bool hw_buffer_elsewhere(const struct bts_trace *t)
{
    return t->draining || (t->loaded_on && t->loaded_on != this_cpu()->cpu + 1);
}

/* Brings the ring up to date with the hardware buffer, pausing recording if it is on. */
static void flush(struct bts_trace *t)
{
    /* Asked first without the lock, which only ever skips a drain (the records wait in the
     * buffer for its owner), then again under it: the DS switch marks a trace loaded under
     * the lock before its CPU records into it, so a drain never overlaps that recording. */
    if (t->cfg.mode != BTS_MODE_INTERRUPT || hw_buffer_elsewhere(t))
        return;
    bool irq = irq_save();
    bool locked = trace_lock(t);
    if (hw_buffer_elsewhere(t)) {
        trace_unlock(t, locked);
        irq_restore(irq);
        return;
    }
    bool live = t == ds_loaded && t->enabled;
    if (live)
        bts_backend()->write_debugctl(0);
    bts_drain_hw(t, false);
    trace_unlock(t, locked);
    if (live && !t->stopped)
        bts_backend()->write_debugctl(debugctl_for(&t->cfg));
    irq_restore(irq);
}

static int64_t circular_snapshot(struct bts_trace *t, struct bts_record *out, uint64_t max)
{
    return ds_read_circular(t->ds, out, max);
}

uint64_t bts_count(struct bts_trace *t)
{
    if (!t->configured)
        return 0;
    if (t->cfg.mode == BTS_MODE_CIRCULAR) {
        uint64_t n = 0;
        /* Wrapped buffers are full; otherwise the records run from base to index. */
        const struct bts_record *at = (const struct bts_record *)t->ds->bts_index;
        if (at->from || at->to)
            return t->cfg.hw_records;
        ds_pending(t->ds, &n);
        return n;
    }
    flush(t);
    bool irq = trace_lock(t);
    uint64_t n = ring_count(&t->ring);
    trace_unlock(t, irq);
    return n;
}

int64_t bts_get_raw(struct bts_trace *t, uint64_t first, uint64_t n, struct bts_record *out)
{
    if (!t->configured)
        return E_STATE;
    if (t->cfg.mode == BTS_MODE_CIRCULAR) {
        uint64_t total = t->cfg.hw_records;
        struct bts_record *all = kmalloc(total * sizeof(*all));
        if (!all)
            return E_NOMEM;
        int64_t got = circular_snapshot(t, all, total);
        int64_t copied = 0;
        for (uint64_t i = first; got > 0 && i < (uint64_t)got && (uint64_t)copied < n; i++)
            out[copied++] = all[i];
        kfree(all);
        return got < 0 ? got : copied;
    }
    flush(t);
    bool irq = trace_lock(t);
    uint64_t got = ring_get_range(&t->ring, first, n, out);
    trace_unlock(t, irq);
    return (int64_t)got;
}

static int64_t decode_all(const struct bts_record *raw, int64_t n, struct bts_event *out)
{
    for (int64_t i = 0; i < n; i++) {
        int err = bts_decode_record(&raw[i], &out[i]);
        if (err)
            return err;
    }
    return n;
}

int64_t bts_get_range(struct bts_trace *t, uint64_t first, uint64_t n, struct bts_event *out)
{
    /* Decode in place: the raw records go in the tail of the caller's array. */
    enum { CHUNK = 64 };
    struct bts_record raw[CHUNK];
    int64_t total = 0;
    while ((uint64_t)total < n) {
        uint64_t want = n - (uint64_t)total < CHUNK ? n - (uint64_t)total : CHUNK;
        int64_t got = bts_get_raw(t, first + (uint64_t)total, want, raw);
        if (got < 0)
            return got;
        if (got == 0)
            break;
        int64_t d = decode_all(raw, got, out + total);
        if (d < 0)
            return d;
        total += got;
    }
    return total;
}

int bts_get(struct bts_trace *t, uint64_t i, struct bts_event *out)
{
    int64_t n = bts_get_range(t, i, 1, out);
    if (n < 0)
        return (int)n;
    return n == 1 ? 0 : E_NOENT;
}

/* A drain removes what it returns and nothing else, as the ring's does: the oldest n
 * records go, the newer ones are written back from the base, recording off meanwhile (a
 * circular buffer's records cannot be dropped from its front in place). */
static int64_t circular_drain(struct bts_trace *t, struct bts_record *out, uint64_t max)
{
    uint64_t total = t->cfg.hw_records;
    struct bts_record *all = kmalloc(total * sizeof(*all));
    if (!all)
        return E_NOMEM;
    bool live = t == ds_loaded && t->enabled;
    if (live)
        bts_backend()->write_debugctl(0);
    int64_t got = circular_snapshot(t, all, total);
    uint64_t n = got < 0 ? 0 : (uint64_t)got < max ? (uint64_t)got : max;
    if (n > 0) { /* with none taken the buffer stays as it is, full or not */
        memcpy(out, all, n * sizeof(*all));
        memset(t->buf, 0, total * BTS_RECORD_SIZE);
        memcpy(t->buf, all + n, ((uint64_t)got - n) * sizeof(*all));
        t->ds->bts_index = t->ds->bts_base + ((uint64_t)got - n) * BTS_RECORD_SIZE;
        t->stopped = false;
    }
    if (live)
        bts_backend()->write_debugctl(debugctl_for(&t->cfg));
    kfree(all);
    return got < 0 ? got : (int64_t)n;
}

int64_t bts_drain_raw(struct bts_trace *t, struct bts_record *out, uint64_t max)
{
    if (!t->configured)
        return E_STATE;
    if (t->cfg.mode == BTS_MODE_CIRCULAR)
        return circular_drain(t, out, max);
    flush(t);
    bool irq = trace_lock(t);
    uint64_t got = ring_drain(&t->ring, out, max);
    trace_unlock(t, irq);
    return (int64_t)got;
}

int64_t bts_drain(struct bts_trace *t, struct bts_event *out, uint64_t max)
{
    enum { CHUNK = 64 };
    struct bts_record raw[CHUNK];
    int64_t total = 0;
    while ((uint64_t)total < max) {
        uint64_t want = max - (uint64_t)total < CHUNK ? max - (uint64_t)total : CHUNK;
        int64_t got = bts_drain_raw(t, raw, want);
        if (got <= 0)
            return got < 0 ? got : total;
        int64_t d = decode_all(raw, got, out + total);
        if (d < 0)
            return d;
        total += got;
    }
    return total;
}

int bts_clear(struct bts_trace *t)
{
    if (!t->configured)
        return E_STATE;
    bool live = t == ds_loaded && t->enabled;
    if (live)
        bts_backend()->write_debugctl(0);
    memset(t->buf, 0, (uint64_t)t->cfg.hw_records * BTS_RECORD_SIZE);
    t->ds->bts_index = t->ds->bts_base;
    if (t->ring.rec)
        ring_clear(&t->ring);
    t->stopped = false;
    if (live)
        bts_backend()->write_debugctl(debugctl_for(&t->cfg));
    return 0;
}

int bts_status(struct bts_trace *t, struct bts_status *st)
{
    if (!t->configured)
        return E_STATE;
    uint64_t count = bts_count(t);
    *st = (struct bts_status){
        .cfg = t->cfg,
        .enabled = t->enabled,
        .stopped = t->stopped,
        .overflowed = t->ring.rec ? t->ring.overflowed : false,
        .count = count,
        .lost = t->ring.rec ? t->ring.lost : 0,
        .pmis = t->pmis,
        .stream_waits = t->stream_waits,
        .pmi_at_min = t->pmi_at_min,
        .pmi_at_max = t->pmi_at_max,
        .spurious_pmis = bts_spurious_pmis(),
    };
    return 0;
}

/* Appends a timestamp, naming this CPU, after whatever the hardware buffer holds, keeping the
 * order: into the ring, or, when a stream ring is full, into the hardware buffer behind the records
 * kept there. */
static void timestamp_locked(struct bts_trace *t, enum bts_qualifier q);
static void timestamp(struct bts_trace *t, enum bts_qualifier q)
{
    if (!t || !(t->cfg.events & BTS_EVENTS_TIMESTAMPS) || !t->ring.rec)
        return;
    bool irq = trace_lock(t);
    timestamp_locked(t, q);
    trace_unlock(t, irq);
}

static void timestamp_locked(struct bts_trace *t, enum bts_qualifier q)
{
    bts_drain_hw(t, false);
    struct bts_record r = bts_timestamp_record_on(q, rdtsc(), this_cpu()->cpu);
    if (t->ds->bts_index == t->ds->bts_base && ring_append(&t->ring, &r, 1) == 1)
        return;
    if (t->cfg.policy != BTS_POLICY_STREAM)
        return; /* wrap and stop accounted for it in ring_append */
    if (t->ds->bts_index + BTS_RECORD_SIZE <= t->ds->bts_abs_max) {
        *(struct bts_record *)t->ds->bts_index = r;
        t->ds->bts_index += BTS_RECORD_SIZE;
    } else {
        t->ring.lost++;
    }
}

/* Marks where t is loaded (0: nowhere) under its lock: a tracer on another CPU that drains
 * t's hardware buffer (flush()) does so wholly before this CPU records into it, or leaves it
 * to this CPU. */
static void set_loaded_on(struct bts_trace *t, unsigned cpu_plus_1)
{
    bool irq = trace_lock(t);
    t->loaded_on = cpu_plus_1;
    trace_unlock(t, irq);
}

/* Only what the two traces' states need (ds_switch() in ds/bts.h does not even call this for
 * two untraced tasks with nothing loaded). */
void ds_switch_traces(struct bts_trace *prev, struct bts_trace *next)
{
    if (!bts_available(NULL)) {
        ds_loaded = next; /* backend=hw without BTS: never touch the MSRs */
        return;
    }
    const struct bts_backend *b = bts_backend();
    if (records(ds_loaded))
        b->write_debugctl(0);      /* 1. recording off */
    timestamp(prev, BTS_Q_DEPART); /* 2. */
    if (next != ds_loaded)
        b->write_ds_area(area_of(next)); /* 3. the next trace's area, or the idle one */
    if (ds_loaded)
        set_loaded_on(ds_loaded, 0);
    if (next)
        set_loaded_on(next, this_cpu()->cpu + 1);
    ds_loaded = next;
    timestamp(next, BTS_Q_ARRIVE); /* 4. */
    if (records(next))
        b->write_debugctl(debugctl_for(&next->cfg)); /* 5. recording on */
}
