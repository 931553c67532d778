/* The threshold interrupt (ds/pmi.c), for ds_init(). */
#ifndef BTSX_DS_PMI_H
#define BTSX_DS_PMI_H

#include <stdbool.h>

/* Installs the handler on the PMI vector (or NMI) of every CPU. */
void bts_pmi_init(bool nmi);
/* Points the running CPU's LVT PC at it (each CPU programs its own, after bts_pmi_init()). */
void bts_pmi_cpu_init(void);

#endif
