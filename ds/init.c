/*
 * Bringing the DS layer up: the layouts, the probe, the backend choice, each CPU's idle DS area
 * and model state, the model's trap hooks and the threshold interrupt, in that order; then
 * each CPU programs its own LVT PC and loads its idle DS area. The top of ds/: it calls into
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
#include "kernel/errno.h"
#include "kernel/printf.h"
#include "kernel/smp.h"

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

/* On each CPU, by itself: its LVT PC, and its idle DS area into the backend. */
static void ds_cpu_start(void *arg)
{
    (void)arg;
    bts_pmi_cpu_init();
    if (bts_available(NULL))
        ds_idle_load();
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
    /* Every online CPU's own state; without an idle DS area a CPU has no safe untraced state
     * to switch to: then no backend, and the reason names the CPU. */
    for (unsigned i = 0; i < smp_online(); i++) {
        struct percpu *p = smp_cpu(i);
        model_cpu_init(p);
        if (ds_idle_init(p) != 0) {
            char why[64];
            ksnprintf(why, sizeof(why), "no memory for cpu %u's idle DS area", i);
            bts_set_unavailable(why);
        }
    }
    bts_describe_layouts(model_how);
    model_init();
    model_freedoms_init();
    bts_pmi_init(ds_opt_pmi == PMI_NMI);
    ds_cpu_start(NULL);
    for (unsigned i = 1; i < smp_online(); i++) {
        int err = smp_call(i, ds_cpu_start, NULL, false);
        if (err) { /* it might still load later, unasked: nothing can be trusted there */
            char why[64];
            ksnprintf(why, sizeof(why), "cpu %u did not set up its DS state: %s", i, err_name(err));
            bts_set_unavailable(why);
        }
    }
}
