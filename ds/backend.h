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

#include <stdbool.h>
#include <stdint.h>

#include "ds/options.h"

struct debugctl_layout;

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

/* The choice (ds/backend.c), made by ds_init(); bts_backend(), bts_available() and bts_layout()
 * in ds/bts.h read it. */
/* Takes the CPU's layout from the table and picks the model's; returns how, for the header. */
const char *bts_choose_layouts(enum model_layout_choice want);
const struct debugctl_layout *bts_cpu_layout(void);
const struct debugctl_layout *bts_model_layout(void);
/* The command line's wish against the probe's answer; hw_why becomes the header's reason. */
void bts_choose_backend(enum backend_choice want, bool hw_ok, const char *hw_why);
/* No backend at all: every test skips with why (backend=hw on a machine without BTS, or no
 * memory for the idle DS area). */
void bts_set_unavailable(const char *why);
/* Only bts_use_backend() calls this, with recording off and the DS area reloaded after. */
void bts_set_backend(const struct bts_backend *b);
/* Composes the header's "# debugctl:" line (bts_layout_reason()). */
void bts_describe_layouts(const char *model_how);

#endif
