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
#include "ds/profile.h"
#include "ds/trace.h"
#include "kernel/cpu.h"

/* model=, model.skid=, model.offos_returns=, model.handler_records=: what the model does and
 * the profile it claims. */
static void model_freedoms_init(void)
{
    bool hw = ds_opt_model == MODEL_HW;
    int skid = ds_opt_model_skid;
    static const enum bts_maybe offos_of[] = {
        [MODEL_OFFOS_ALWAYS] = BTS_ALWAYS,
        [MODEL_OFFOS_NEVER] = BTS_NEVER,
        [MODEL_OFFOS_EITHER] = BTS_EITHER,
    };
    static const enum bts_maybe handler_of[] = {
        [MODEL_HANDLER_NEVER] = BTS_NEVER,
        [MODEL_HANDLER_ALWAYS] = BTS_ALWAYS,
        [MODEL_HANDLER_EITHER] = BTS_EITHER,
    };
    enum bts_maybe offos = ds_opt_model_offos != MODEL_OFFOS_AUTO ? offos_of[ds_opt_model_offos]
                           : hw                                   ? BTS_EITHER
                                                                  : BTS_ALWAYS;
    enum bts_maybe handler = ds_opt_model_handler != MODEL_HANDLER_AUTO
                                 ? handler_of[ds_opt_model_handler]
                             : hw ? BTS_EITHER
                                  : BTS_NEVER;
    const struct bts_profile *p = profile_set_model(hw, skid, offos, handler);
    struct model_freedoms f = {
        .skid = skid >= 0 ? (unsigned)skid
                : hw      ? MODEL_HW_SKID
                          : 0,
        .offos_returns = offos,
        .handler_records = handler,
        /* The way into the PMI handler stores its entry record and then the handler records,
         * all before the handler reads the index: together within the profile's bound. */
        .handler_records_max = p->pmi_entry_records_max - 1,
    };
    model_set_freedoms(&f);
}

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
    model_freedoms_init();
    bts_pmi_init(ds_opt_pmi == PMI_NMI);
    if (bts_available(NULL))
        ds_idle_load();
}
