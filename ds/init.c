/*
 * Bringing the DS layer up: the layouts, the probe, the backend choice, the idle DS area, the
 * model's trap hooks and the threshold interrupt, in that order. The top of ds/: it calls into
 * every other file and none calls back (tools/check-calls.sh checks the direction).
 */
#include "ds/backend.h"
#include "ds/bts.h"
#include "ds/model.h"
#include "ds/options.h"
#include "ds/pmi.h"
#include "ds/probe.h"
#include "ds/trace.h"
#include "kernel/cpu.h"

void ds_init(void)
{
    const char *model_how = bts_choose_layouts(ds_opt_model_layout);
    model_set_layout(bts_model_layout());
    const char *hw_why;
    bool irq = irq_save();
    bool hw_ok = bts_probe_hw(bts_cpu_layout(), &hw_why);
    irq_restore(irq);
    bts_choose_backend(ds_opt_backend, hw_ok, hw_why);
    /* Without an idle DS area there is no safe untraced state to switch to: no backend. */
    if (ds_idle_init() != 0)
        bts_set_unavailable("no memory for the idle DS area");
    bts_describe_layouts(model_how);
    model_init();
    bts_pmi_init(ds_opt_pmi == PMI_NMI);
    if (bts_available(NULL))
        ds_idle_load();
}
