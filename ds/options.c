/* The DS layer's command-line options, with their defaults (see ds/options.h). */
#include "ds/options.h"

#include "kernel/cmdline.h"

enum backend_choice ds_opt_backend = BACKEND_AUTO;
OPTION_CHOICE("backend", ds_opt_backend, {"auto", BACKEND_AUTO}, {"hw", BACKEND_HW},
              {"model", BACKEND_MODEL});

enum pmi_delivery ds_opt_pmi = PMI_FIXED;
OPTION_CHOICE("pmi", ds_opt_pmi, {"fixed", PMI_FIXED}, {"nmi", PMI_NMI});

enum model_layout_choice ds_opt_model_layout = MODEL_LAYOUT_AUTO;
OPTION_CHOICE("model.layout", ds_opt_model_layout, {"auto", MODEL_LAYOUT_AUTO},
              {"core", MODEL_LAYOUT_CORE}, {"netburst", MODEL_LAYOUT_NETBURST});
