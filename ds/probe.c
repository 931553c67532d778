/*
 * What this CPU's BTS can be trusted with: the hardware probe and the errata table. The probe
 * trusts nothing (docs/hardware.md §1): CPUID, then MISC_ENABLE, then a #GP-safe DEBUGCTL
 * write read back, and finally one known branch that must produce one correct record: Bochs
 * claims DS in CPUID and drops the writes, QEMU TCG reports MISC_ENABLE.BTS_UNAVAILABLE=0, KVM
 * raises #GP. The first step that fails is the reason, with its register and value. The
 * DEBUGCTL bits it writes come from the CPU's row of the layout table (ds/debugctl.h): a
 * Pentium 4 has TR and BTS where a Core has other bits. The errata table lives here too: like
 * the probe, it says from CPUID what this CPU's records can be trusted with. Choosing a backend
 * from the answer is ds/backend.c's job, and ds/init.c asks both.
 */
#include "ds/probe.h"

#include "ds/backend.h"
#include "ds/bts.h"
#include "ds/debugctl.h"
#include "kernel/cpu.h"
#include "kernel/mem.h"
#include "kernel/printf.h"
#include "kernel/string.h"

#define PROBE_RECORDS 16

static bool hw_ok;
static char hw_why[BTS_REASON_LEN];
/* The layout the probe writes: the CPU's row of the table. */
static const struct debugctl_layout *cpu_layout;

extern const char bts_probe_jmp[], bts_probe_target[];
void bts_probe_code(void);

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

bool bts_probe_hw(const struct debugctl_layout *layout, const char **why)
{
    cpu_layout = layout;
    hw_ok = probe_hw();
    *why = hw_why;
    return hw_ok;
}
