/*
 * The DS layer's command-line options (ds/options.c declares them; ds_init() reads them):
 *   backend=auto|hw|model            the BTS backend: the probe decides, or one is forced
 *   pmi=fixed|nmi                    how LVT PC delivers the threshold interrupt
 *   model.layout=auto|core|netburst  the DEBUGCTL bit layout the BTS model interprets
 */
#ifndef BTSX_DS_OPTIONS_H
#define BTSX_DS_OPTIONS_H

enum backend_choice { BACKEND_AUTO, BACKEND_HW, BACKEND_MODEL };
enum pmi_delivery { PMI_FIXED, PMI_NMI };
/* auto: the CPU's layout from the DEBUGCTL layout table (the Core layout if it has none). */
enum model_layout_choice { MODEL_LAYOUT_AUTO, MODEL_LAYOUT_CORE, MODEL_LAYOUT_NETBURST };

extern enum backend_choice ds_opt_backend;
extern enum pmi_delivery ds_opt_pmi;
extern enum model_layout_choice ds_opt_model_layout;

#endif /* BTSX_DS_OPTIONS_H */
