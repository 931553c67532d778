/* The DS layer's command-line options, with their defaults (see ds/options.h). */
#include "ds/options.h"

#include "ds/bts.h"
#include "kernel/cmdline.h"

enum backend_choice ds_opt_backend = BACKEND_AUTO;
OPTION_CHOICE("backend", ds_opt_backend, {"auto", BACKEND_AUTO}, {"hw", BACKEND_HW},
              {"model", BACKEND_MODEL});

enum pmi_delivery ds_opt_pmi = PMI_FIXED;
OPTION_CHOICE("pmi", ds_opt_pmi, {"fixed", PMI_FIXED}, {"nmi", PMI_NMI});

enum model_layout_choice ds_opt_model_layout = MODEL_LAYOUT_AUTO;
OPTION_CHOICE("model.layout", ds_opt_model_layout, {"auto", MODEL_LAYOUT_AUTO},
              {"core", MODEL_LAYOUT_CORE}, {"netburst", MODEL_LAYOUT_NETBURST});

enum model_mode ds_opt_model = MODEL_EXACT;
OPTION_CHOICE("model", ds_opt_model, {"exact", MODEL_EXACT}, {"hw", MODEL_HW});

/* A choice rather than a number: the parser then refuses anything beyond BTS_HW_SKID_MAX. */
int ds_opt_model_skid = MODEL_SKID_AUTO;
OPTION_CHOICE("model.skid", ds_opt_model_skid, {"auto", MODEL_SKID_AUTO}, {"0", 0}, {"1", 1},
              {"2", 2}, {"3", 3}, {"4", 4}, {"5", 5}, {"6", 6}, {"7", 7}, {"8", 8});
_Static_assert(BTS_HW_SKID_MAX == 8, "model.skid's choices end at the hardware profile's bound");

enum model_offos_choice ds_opt_model_offos = MODEL_OFFOS_AUTO;
OPTION_CHOICE("model.offos_returns", ds_opt_model_offos, {"auto", MODEL_OFFOS_AUTO},
              {"always", MODEL_OFFOS_ALWAYS}, {"never", MODEL_OFFOS_NEVER},
              {"either", MODEL_OFFOS_EITHER});

enum model_handler_choice ds_opt_model_handler = MODEL_HANDLER_AUTO;
OPTION_CHOICE("model.handler_records", ds_opt_model_handler, {"auto", MODEL_HANDLER_AUTO},
              {"never", MODEL_HANDLER_NEVER}, {"always", MODEL_HANDLER_ALWAYS},
              {"either", MODEL_HANDLER_EITHER});
