/*
 * Building expected BTS records from labels of known code, comparing traces with them, and
 * the trace set-up the bts.* and ds.* suites share.
 */
#ifndef BTSX_TESTS_BTSCHECK_H
#define BTSX_TESTS_BTSCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ds/bts.h"

#define LBL(name) ((uint64_t)(name))

struct expect {
    struct bts_record *rec;
    size_t n, cap;
    bool overflow;
};

void exp_init(struct expect *e, struct bts_record *storage, size_t cap);
void exp_add(struct expect *e, uint64_t from, uint64_t to);
/* The records bts_run() itself contributes: before the code under test ... */
void exp_prologue(struct expect *e, const void *fn);
/* ... the return from it (ret is the label of its final RET) ... */
void exp_return(struct expect *e, const void *ret);
/* ... and the call that stops recording. */
void exp_epilogue(struct expect *e);
/* The records fib(n) of tests/bts_code.S (tc_fib) gives, walking the same recursion as the
 * code; its last return goes to ret_to. */
void exp_fib(struct expect *e, uint64_t n, uint64_t ret_to);
/* An interrupt or exception delivered at `at` (from) and the IRETQ back to `back`. */
void exp_trap(struct expect *e, uint64_t at, unsigned vector, uint64_t back);
/* Inserts the threshold interrupts the model delivers for a buffer of n records with the
 * threshold at thresh records: after the record that reaches it, the PMI's entry record
 * (fixed delivery only: an NMI arrives inside the #DB handler and records nothing), the drain,
 * and the IRETQ back. Returns the number of PMIs; *at_entry gets the index (in records) each
 * PMI finds (the same for all of them, or UINT64_MAX if they differ). */
uint64_t exp_with_pmis(const struct expect *in, struct expect *out, uint64_t n, uint64_t thresh,
                       bool nmi, uint64_t *at_entry);

/* Configurations the suites use. Circular: the newest hw records stay in the hardware
 * buffer. Interrupt: hw records drained at thresh (0 = the default) into a ring of `ring`. */
struct bts_config cfg_circular(uint32_t hw, unsigned cpl);
struct bts_config cfg_interrupt(uint32_t hw, uint32_t thresh, uint32_t ring, enum bts_policy p,
                                unsigned events, unsigned cpl);

/* Exact comparison; on a mismatch the first differing record is shown symbolised. */
bool exp_match(const struct bts_record *got, size_t ngot, const struct expect *e);

/* Skips the test (with the probe's reason) when no backend can run, e.g. backend=hw forced
 * on a machine without BTS. */
bool bts_require(void);
/* Configures and attaches a trace, failing the test with the error if that fails. */
bool trace_setup(struct bts_trace *t, const struct bts_config *cfg);
/* The DS area the backend's IA32_DS_AREA points at: the loaded trace's, as the CPU sees it
 * (and writes it: a test may play the CPU). */
struct ds_area *loaded_ds_area(void);
void trace_teardown(struct bts_trace *t);
/* A configured trace on the heap, for a task or a tracer that outlives the caller's frame:
 * NULL after failing the running test with the reason. trace_free() takes NULL too. */
struct bts_trace *trace_alloc(const struct bts_config *cfg);
void trace_free(struct bts_trace *t);
/* A suite's large arrays: `bytes` of zeroed frames on the first call through *slot, the same
 * ones on every later call (kept for the rest of the boot). Big arrays stay out of .bss so that
 * the kernel image fits in the low RAM firmware leaves free (OVMF keeps ranges from 8 MiB).
 * NULL after failing the running test. */
void *test_scratch(void **slot, size_t bytes);
/* Everything the trace holds, oldest first. */
int64_t trace_collect(struct bts_trace *t, struct bts_record *out, size_t max);
/* The same without the handlers' own records, which a profile with handler_records other
 * than never may add with CPL-0 recording (handler_records_check() accounts for each; a
 * violation fails the test and gives -1). Records with an end in the known code stay. */
int64_t trace_collect_code(struct bts_trace *t, struct bts_record *out, size_t max);
bool in_traced_code(uint64_t a);
/* Where a threshold interrupt can land in a traced run: the known code, or the backend's
 * DEBUGCTL write routine that bts_run() calls to stop, up to its final RET (a PMI owed for
 * the record of that call, or one that came late, is taken at its first instructions). */
bool pmi_can_land(uint64_t a);
bool pmi_is_nmi(void);

/*
 * What the trace tests allow a BTS implementation where the SDM leaves room (docs/hardware.md
 * §5, §7, O1-O3, O5-O6): every hardware-path check reads its bounds from here and nowhere
 * else. bts_bounds() fills them from the backend in use; "exact" is the model's default
 * behaviour (docs/model.md), the other set is the envelope the SDM allows.
 */
struct bts_bounds {
    const char *name;
    /* The PMI arrives after the record that reaches the threshold plus its own entry record
     * (fixed delivery under the model), at most this many records later. */
    uint32_t pmi_skid;
    /* Branches of the interrupt handlers' own code (kernel text outside the known code) may be
     * recorded with CPL 0 recorded, at most handler_records_max per interrupt. */
    bool handler_records;
    uint32_t handler_records_max;
    /* Each PMI adds exactly the records the model's rules give (entry and IRETQ with fixed
     * delivery, none with NMI delivery) at exactly the model's places; otherwise at most one
     * entry and one IRETQ record per PMI, anywhere. */
    bool interrupt_records_exact;
    /* With fixed delivery each PMI's own entry record is in the trace: every interrupt
     * produces a message (SDM Vol. 3B, 17.4.1) and the routine clears TR only after entry. */
    bool fixed_pmi_entry_recorded;
};
const struct bts_bounds *bts_bounds(void);

/* A raw trace sorted into what each record is: the known code's (kept, in order, for a
 * comparison with labels), the PMI's entry and its IRETQ back, handler code (kernel text
 * outside the known code), timestamp escapes, and records that fit none of these. */
struct trace_split {
    uint64_t code, pmi_entry, iretq, handler, escapes, other;
    struct bts_record first_other;
};
size_t trace_split(const struct bts_record *in, size_t n, struct bts_record *code,
                   struct trace_split *s);
/* Fails the test for records that fit nowhere and for handler records the bounds do not
 * allow after `interrupts` interrupts. */
bool split_within_bounds(const struct trace_split *s, uint64_t interrupts);

/*
 * The handlers' own records of a trace (branches in kernel text that neither the known code
 * nor an interrupt's entry or IRETQ record explain) and where they may be: only inside an
 * interrupt (after an entry record, whose `to` is an IDT stub, and before its IRETQ), the
 * first one leaving that stub (its JMP, the handler's first branch), each landing in kernel
 * text, at most the bounds' handler_records_max per interrupt. Fails the test at the first
 * violation. Counts interrupts (entry records), handler records, and interrupts with any.
 */
struct handler_count {
    uint64_t interrupts, records, with_records;
};
bool handler_records_check(const struct bts_record *in, size_t n, struct handler_count *c);

#endif
