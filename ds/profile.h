/* The model's profile follows its options: ds_init() sets it (ds/profile.c). */
#ifndef BTSX_DS_PROFILE_H
#define BTSX_DS_PROFILE_H

#include <stdbool.h>

#include "ds/bts.h"

/* hw: start from the hardware profile (model=hw), else from the exact one; skid >= 0 narrows
 * or widens the PMI skid bound to what the model will use (model.skid=N); offos_returns and
 * handler_records are the model's choices for those fields. Returns the model's profile. */
const struct bts_profile *profile_set_model(bool hw, int skid, enum bts_maybe offos_returns,
                                            enum bts_maybe handler_records);

#endif
