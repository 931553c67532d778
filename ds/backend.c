/*
 * Which backend the DS layer drives, and with which DEBUGCTL layout. ds_init() (ds/init.c)
 * makes the choice once from the probe's result and the command line; the differential test
 * switches backends later through bts_use_backend() (ds/trace.c), which reloads the DS area.
 * Nothing here touches a register: this file only holds the choice and explains it.
 */
#include "ds/backend.h"
#include "ds/bts.h"
#include "ds/debugctl.h"
#include "ds/options.h"
#include "kernel/cpu.h"
#include "kernel/printf.h"

#define REASON_LEN 160

static const struct bts_backend *backend = &bts_backend_model;
static bool available = true;
static char reason[REASON_LEN], layout_why[2 * REASON_LEN];
/* The CPU's DEBUGCTL layout (NULL: the table knows none) and the one the model interprets. */
static const struct debugctl_layout *cpu_layout, *model_layout = &debugctl_core;

const struct bts_backend *bts_backend(void)
{
    return backend;
}
const char *bts_backend_reason(void)
{
    return reason;
}

bool bts_available(const char **why)
{
    if (why)
        *why = reason;
    return available;
}

const struct debugctl_layout *bts_layout(void)
{
    return backend == &bts_backend_hw ? cpu_layout : model_layout;
}
const char *bts_layout_reason(void)
{
    return layout_why;
}

const struct debugctl_layout *bts_cpu_layout(void)
{
    return cpu_layout;
}

const char *bts_choose_layouts(enum model_layout_choice want)
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

const struct debugctl_layout *bts_model_layout(void)
{
    return model_layout;
}

void bts_choose_backend(enum backend_choice want, bool hw_ok, const char *hw_why)
{
    switch (want) {
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
}

void bts_set_backend(const struct bts_backend *b)
{
    backend = b;
}

void bts_set_unavailable(const char *why)
{
    available = false;
    ksnprintf(reason, sizeof(reason), "%s", why);
}

void bts_describe_layouts(const char *model_how)
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
