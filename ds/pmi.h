/* The threshold interrupt (ds/pmi.c), for ds_init(). */
#ifndef BTSX_DS_PMI_H
#define BTSX_DS_PMI_H

#include <stdbool.h>

/* Installs the handler on the PMI vector (or NMI) and points LVT PC at it. */
void bts_pmi_init(bool nmi);

#endif
