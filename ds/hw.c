/* The hardware backend's table (the operations are in ds/hw.S). */
#include "ds/backend.h"

const struct bts_backend bts_backend_hw = {
    .name = "hw",
    .read_debugctl = bts_hw_read_debugctl,
    .write_debugctl = bts_hw_write_debugctl,
    .read_ds_area = bts_hw_read_ds_area,
    .write_ds_area = bts_hw_write_ds_area,
    .write_ret = (uint64_t)bts_hw_write_ret,
};
