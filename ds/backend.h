/*
 * The narrow register interface between the DS layer and the machine: DEBUGCTL and DS_AREA,
 * read and write. `hw` is the real MSRs; `model` is the software BTS (ds/model.c), which keeps
 * shadow registers and writes records through the same DS fields in memory. Everything above
 * this interface (DS areas, the threshold interrupt, the tracer API, the tests) is the same
 * code for both.
 *
 * Both write_debugctl implementations end in the same shape, "...; <enable>; ret", and export
 * the address of that RET: it is the `from` of the first record after recording starts, which
 * lets the tests expect the enable path exactly on either backend.
 */
#ifndef BTSX_DS_BACKEND_H
#define BTSX_DS_BACKEND_H

#include <stdint.h>

struct bts_backend {
    const char *name;
    uint64_t (*read_debugctl)(void);
    void (*write_debugctl)(uint64_t v);
    uint64_t (*read_ds_area)(void);
    void (*write_ds_area)(uint64_t v);
    uint64_t write_ret; /* address of write_debugctl's final RET */
};

extern const struct bts_backend bts_backend_hw;
extern const struct bts_backend bts_backend_model;

/* ds/hw.S */
uint64_t bts_hw_read_debugctl(void);
void bts_hw_write_debugctl(uint64_t v);
uint64_t bts_hw_read_ds_area(void);
void bts_hw_write_ds_area(uint64_t v);
extern const char bts_hw_write_ret[];

/* ds/model.S and ds/model.c */
uint64_t bts_model_read_debugctl(void);
void bts_model_write_debugctl(uint64_t v);
uint64_t bts_model_read_ds_area(void);
void bts_model_write_ds_area(uint64_t v);
extern const char bts_model_write_ret[];

#endif
