/*
 * The software BTS model. While DEBUGCTL.TR and .BTS are on it single-steps with RFLAGS.TF;
 * each #DB hands it the previous and the new RIP, it decodes the previous instruction and,
 * for a taken branch, stores a record through the DS area in memory with the hardware's
 * rules. Interrupts and exceptions delivered to traced code are recorded from the trap entry,
 * the IRETQ back from the trap exit. At the threshold it raises the PMI through the real LVT
 * performance-counter entry. Differences from hardware: docs/model.md.
 */
#ifndef BTSX_DS_MODEL_H
#define BTSX_DS_MODEL_H

#include <stdint.h>

#include "ds/bts.h"

struct model_stats {
    uint64_t steps;           /* single-step traps taken */
    uint64_t records;         /* records stored */
    uint64_t filtered;        /* taken branches suppressed by BTS_OFF_OS/BTS_OFF_USR */
    uint64_t pmis;            /* threshold interrupts raised */
    uint64_t dropped;         /* records dropped on a full buffer in interrupt mode */
    uint64_t undecodable;     /* instructions the decoder refused (never expected) */
    uint64_t delayed_pmis;    /* PMIs raised one or more records after the threshold record */
    uint64_t skid_records;    /* records stored between threshold records and their PMIs */
    uint64_t offos_returns;   /* kernel-to-user returns recorded under BTS_OFF_OS */
    uint64_t offos_omitted;   /* ... and omitted */
    uint64_t handler_records; /* records of a handler's own entry path (model.handler_records) */
};

/* The freedoms of the hardware profile the model takes (model=, model.skid=, ...). */
struct model_freedoms {
    unsigned skid;                /* the PMI comes 0..skid records after the threshold */
    enum bts_maybe offos_returns; /* kernel-to-user returns under BTS_OFF_OS */
    /* With CPL 0 recorded, the branches of a handler's entry path after its entry record:
     * never, all of the path the model can know (at most handler_records_max), or per
     * interrupt either none or its first 1..handler_records_max. */
    enum bts_maybe handler_records;
    unsigned handler_records_max;
};
/* Sets them (ds_init); each choice the freedoms leave open is drawn per event from the
 * generator bts_model_seed() seeds. */
void model_set_freedoms(const struct model_freedoms *f);
void model_get_freedoms(struct model_freedoms *f);

struct debugctl_layout;
/* The DEBUGCTL layout the shadow register is read with (ds/debugctl.h); Core until set. */
void model_set_layout(const struct debugctl_layout *l);

struct percpu;
/* Gives a CPU its model state (shadow registers, stepping, decode cache, generator): for every
 * online CPU, before model_init(). */
void model_cpu_init(struct percpu *cpu);
/* Installs the #DB handler (on every CPU) and the trap hooks. */
void model_init(void);
/* The model's event counters on the running CPU since boot (a user compares two readings). */
void model_get_stats(struct model_stats *s);
/* ... on CPU `cpu`. */
void model_get_cpu_stats(unsigned cpu, struct model_stats *s);

#endif
