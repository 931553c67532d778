/*
 * Choosing the backend. The hardware probe trusts nothing (docs/hardware.md §1): CPUID, then
 * MISC_ENABLE, then a #GP-safe DEBUGCTL write read back, and finally one known branch that
 * must produce one correct record: Bochs claims DS in CPUID and drops the writes, QEMU TCG
 * reports MISC_ENABLE.BTS_UNAVAILABLE=0, KVM raises #GP. The first step that fails is the
 * reason, with its register and value. The DEBUGCTL bits it writes come from the CPU's row of
 * the layout table (ds/debugctl.h): a Pentium 4 has TR and BTS where a Core has other bits.
 */
#include "ds/backend.h"
#include "ds/bts.h"
#include "ds/debugctl.h"
#include "ds/model.h"
#include "ds/options.h"
#include "kernel/cpu.h"
#include "kernel/mem.h"
#include "kernel/printf.h"
#include "kernel/string.h"

#define REASON_LEN    160
#define PROBE_RECORDS 16
#define IDLE_RECORDS  BTS_MIN_RECORDS

struct ds_area *ds_idle_area;
static const struct bts_backend *backend = &bts_backend_model;
static bool available = true, hw_ok;
static char reason[REASON_LEN], hw_why[REASON_LEN], layout_why[2 * REASON_LEN];
/* The CPU's DEBUGCTL layout (NULL: the table knows none) and the one the model interprets. */
static const struct debugctl_layout *cpu_layout, *model_layout = &debugctl_core;

extern const char bts_probe_jmp[], bts_probe_target[];
void bts_probe_code(void);

const struct bts_backend *bts_backend(void)
{
    return backend;
}
const char *bts_backend_reason(void)
{
    return reason;
}

const struct debugctl_layout *bts_layout(void)
{
    return backend == &bts_backend_hw ? cpu_layout : model_layout;
}
const char *bts_layout_reason(void)
{
    return layout_why;
}

bool bts_available(const char **why)
{
    if (why)
        *why = reason;
    return available;
}

bool bts_hw_probe_passed(const char **why)
{
    if (why)
        *why = hw_why;
    return hw_ok;
}

/* Step 6: a scratch DS area, recording on around one known JMP, then look for its record. */
static bool probe_record(void)
{
    uint64_t page = pages_alloc(2);
    if (!page) {
        ksnprintf(hw_why, sizeof(hw_why), "no memory for the probe's DS area");
        return false;
    }
    struct ds_area *ds = (struct ds_area *)page;
    struct bts_record *buf = (struct bts_record *)(page + PAGE_SIZE);
    ds_layout_bts(ds, (uint64_t)buf, PROBE_RECORDS * BTS_RECORD_SIZE, BTS_THRESH_CIRCULAR,
                  BTS_MODE_CIRCULAR);
    bool ok = false;
    if (wrmsr_safe(MSR_IA32_DS_AREA, (uint64_t)ds) != 0) {
        ksnprintf(hw_why, sizeof(hw_why), "WRMSR IA32_DS_AREA=%#lx raised #GP", (uint64_t)ds);
    } else {
        bts_hw_write_debugctl(cpu_layout->tr | cpu_layout->bts);
        bts_probe_code();
        bts_hw_write_debugctl(0);
        uint64_t n = (ds->bts_index - ds->bts_base) / BTS_RECORD_SIZE;
        for (uint64_t i = 0; i < PROBE_RECORDS; i++)
            if (buf[i].from == (uint64_t)bts_probe_jmp && buf[i].to == (uint64_t)bts_probe_target)
                ok = true;
        if (!ok)
            ksnprintf(hw_why, sizeof(hw_why),
                      n ? "BTS wrote %lu record(s) but none for the probe's JMP"
                        : "DEBUGCTL write accepted but no record written (index moved %lu)",
                      n);
        wrmsr_safe(MSR_IA32_DS_AREA, 0);
    }
    pages_free(page, 2);
    return ok;
}

static bool probe_hw(void)
{
    uint64_t v;
    if (!cpu_has_ds())
        return ksnprintf(hw_why, sizeof(hw_why), "CPUID.01H:EDX.DS=0"), false;
    if (!cpu_has_dtes64())
        return ksnprintf(hw_why, sizeof(hw_why), "CPUID.01H:ECX.DTES64=0"), false;
    if (!cpu_has_ds_cpl())
        return ksnprintf(hw_why, sizeof(hw_why), "CPUID.01H:ECX.DS-CPL=0"), false;
    if (rdmsr_safe(MSR_IA32_MISC_ENABLE, &v) != 0)
        return ksnprintf(hw_why, sizeof(hw_why), "RDMSR IA32_MISC_ENABLE raised #GP"), false;
    if (v & MISC_ENABLE_BTS_UNAVAIL)
        return ksnprintf(hw_why, sizeof(hw_why), "IA32_MISC_ENABLE.BTS_UNAVAILABLE=1 (%#lx)", v),
               false;
    /* Step 5 with a valid DS area loaded first: BTS must never see a stale one. */
    if (!cpu_layout)
        return ksnprintf(hw_why, sizeof(hw_why), "no DEBUGCTL layout known for %s family %#x",
                         cpu_caps.vendor, cpu_caps.family),
               false;
    uint64_t on = cpu_layout->tr | cpu_layout->bts;
    uint64_t scratch = pages_alloc(2);
    if (!scratch)
        return ksnprintf(hw_why, sizeof(hw_why), "no memory for the probe"), false;
    ds_layout_bts((struct ds_area *)scratch, scratch + PAGE_SIZE, PROBE_RECORDS * BTS_RECORD_SIZE,
                  BTS_THRESH_CIRCULAR, BTS_MODE_CIRCULAR);
    bool ok = false;
    if (wrmsr_safe(MSR_IA32_DS_AREA, scratch) != 0) {
        ksnprintf(hw_why, sizeof(hw_why), "WRMSR IA32_DS_AREA raised #GP");
    } else if (wrmsr_safe(MSR_IA32_DEBUGCTL, on) != 0) {
        ksnprintf(hw_why, sizeof(hw_why), "WRMSR IA32_DEBUGCTL=TR|BTS (%#lx, %s layout) raised #GP",
                  on, cpu_layout->name);
    } else {
        uint64_t back = 0;
        rdmsr_safe(MSR_IA32_DEBUGCTL, &back);
        wrmsr_safe(MSR_IA32_DEBUGCTL, 0);
        if (!debugctl_recording(cpu_layout, back))
            ksnprintf(hw_why, sizeof(hw_why),
                      "DEBUGCTL=TR|BTS (%#lx, %s layout) accepted but reads back %#lx (TR|BTS "
                      "dropped)",
                      on, cpu_layout->name, back);
        else
            ok = true;
    }
    wrmsr_safe(MSR_IA32_DS_AREA, 0);
    pages_free(scratch, 2);
    if (!ok)
        return false;
    if (!probe_record())
        return false;
    ksnprintf(hw_why, sizeof(hw_why), "probe passed: a known branch was recorded (%s layout)",
              cpu_layout->name);
    return true;
}

/* Errata that make hardware records differ (docs/hardware.md §9), by family 6 model. */
static const struct {
    uint32_t model;
    const char *erratum;
} errata[] = {
    {0x1A, "AAJ122"}, {0x1E, "AAJ122"}, {0x1F, "AAJ122"}, {0x2E, "AAJ122"}, {0x25, "AAJ122"},
    {0x2C, "AAJ122"}, {0x2F, "AAJ122"}, {0x2A, "AAJ122"}, {0x2D, "AAJ122"}, {0x3A, "AAJ122"},
};

const char *bts_errata(void)
{
    if (cpu_caps.family != 6 || strcmp(cpu_caps.vendor, "GenuineIntel") != 0)
        return NULL;
    for (unsigned i = 0; i < sizeof(errata) / sizeof(errata[0]); i++)
        if (errata[i].model == cpu_caps.model)
            return errata[i].erratum;
    return NULL;
}

int bts_use_backend(const struct bts_backend *b)
{
    struct bts_trace *t = bts_current();
    if (t && t->enabled)
        return E_BUSY;
    backend->write_debugctl(0);
    backend->write_ds_area(0);
    backend = b;
    backend->write_ds_area((uint64_t)(t ? t->ds : ds_idle_area));
    return 0;
}

/* The model's layout: the one asked for, else the CPU's, else the architectural Core layout
 * (the table has none for other vendors, yet the model needs bits to interpret). Returns how
 * it was chosen, for the header. */
static const char *choose_layouts(enum model_layout_choice want)
{
    cpu_layout = debugctl_layout_for(cpu_caps.vendor, cpu_caps.family);
    if (want == MODEL_LAYOUT_CORE) {
        model_layout = &debugctl_core;
        return "model.layout=core";
    }
    if (want == MODEL_LAYOUT_NETBURST) {
        model_layout = &debugctl_netburst;
        return "model.layout=netburst";
    }
    model_layout = cpu_layout ? cpu_layout : &debugctl_core;
    return cpu_layout ? "model.layout=auto: the CPU's"
                      : "model.layout=auto: core, the CPU has none";
}

static void describe_layouts(const char *model_how)
{
    const struct debugctl_layout *l = bts_layout();
    char used[REASON_LEN] = "no layout: nothing is written";
    if (l)
        ksnprintf(used, sizeof(used), "%s (TR %u, BTS %u, BTINT %u, BTS_OFF_OS %u, BTS_OFF_USR %u)",
                  l->name, __builtin_ctzll(l->tr), __builtin_ctzll(l->bts),
                  __builtin_ctzll(l->btint), __builtin_ctzll(l->bts_off_os),
                  __builtin_ctzll(l->bts_off_usr));
    ksnprintf(layout_why, sizeof(layout_why),
              "%s for the %s; table: %s for %s family %#x; model: %s (%s)", used, backend->name,
              cpu_layout ? cpu_layout->name : "none", cpu_caps.vendor, cpu_caps.family,
              model_layout->name, model_how);
}

void ds_init(void)
{
    const char *model_how = choose_layouts(ds_opt_model_layout);
    model_set_layout(model_layout);
    bool irq = irq_save();
    hw_ok = probe_hw();
    irq_restore(irq);

    switch (ds_opt_backend) {
    case BACKEND_AUTO:
        backend = hw_ok ? &bts_backend_hw : &bts_backend_model;
        ksnprintf(reason, sizeof(reason), "%s", hw_why);
        break;
    case BACKEND_HW:
        backend = &bts_backend_hw;
        available = hw_ok;
        ksnprintf(reason, sizeof(reason), "backend=hw: %s", hw_why);
        break;
    case BACKEND_MODEL:
        backend = &bts_backend_model;
        ksnprintf(reason, sizeof(reason), "backend=model; hardware: %s", hw_why);
        break;
    }

    /* The untraced state: a valid DS area with a minimal buffer and recording off. */
    uint64_t page = pages_alloc(2);
    if (page) {
        ds_idle_area = (struct ds_area *)page;
        ds_layout_bts(ds_idle_area, page + PAGE_SIZE, IDLE_RECORDS * BTS_RECORD_SIZE,
                      BTS_THRESH_CIRCULAR, BTS_MODE_CIRCULAR);
    }
    describe_layouts(model_how);
    model_init();
    bts_pmi_init(ds_opt_pmi == PMI_NMI);
    if (available)
        backend->write_ds_area((uint64_t)ds_idle_area);
}
