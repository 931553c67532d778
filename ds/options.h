/*
 * The DS layer's command-line options (ds/options.c declares them; ds_init() reads them):
 *   backend=auto|hw|model            the BTS backend: the probe decides, or one is forced
 *   pmi=fixed|nmi                    how LVT PC delivers the threshold interrupt
 *   model.layout=auto|core|netburst  the DEBUGCTL bit layout the BTS model interprets
 *   model=exact|hw                   the model's freedoms: none, or each the hardware profile
 *                                    allows (docs/model.md, "The hardware-like model")
 *   model.skid=auto|0..8             the PMI comes 0..N records after the threshold record
 *   model.offos_returns=auto|always|never|either
 *                                    kernel-to-user returns recorded under BTS_OFF_OS
 * (auto: model=exact's choice, or model=hw's).
 */
#ifndef BTSX_DS_OPTIONS_H
#define BTSX_DS_OPTIONS_H

enum backend_choice { BACKEND_AUTO, BACKEND_HW, BACKEND_MODEL };
enum pmi_delivery { PMI_FIXED, PMI_NMI };
/* auto: the CPU's layout from the DEBUGCTL layout table (the Core layout if it has none). */
enum model_layout_choice { MODEL_LAYOUT_AUTO, MODEL_LAYOUT_CORE, MODEL_LAYOUT_NETBURST };

enum model_mode { MODEL_EXACT, MODEL_HW };
#define MODEL_SKID_AUTO (-1)
/* The default skid of model=hw (at most BTS_HW_SKID_MAX). */
#define MODEL_HW_SKID   4
enum model_offos_choice {
    MODEL_OFFOS_AUTO,
    MODEL_OFFOS_ALWAYS,
    MODEL_OFFOS_NEVER,
    MODEL_OFFOS_EITHER
};

enum model_handler_choice {
    MODEL_HANDLER_AUTO,
    MODEL_HANDLER_NEVER,
    MODEL_HANDLER_ALWAYS,
    MODEL_HANDLER_EITHER
};

extern enum backend_choice ds_opt_backend;
extern enum model_mode ds_opt_model;
extern int ds_opt_model_skid;
extern enum model_offos_choice ds_opt_model_offos;
extern enum model_handler_choice ds_opt_model_handler;
extern enum pmi_delivery ds_opt_pmi;
extern enum model_layout_choice ds_opt_model_layout;

#endif /* BTSX_DS_OPTIONS_H */
