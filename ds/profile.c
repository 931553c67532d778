/*
 * The guarantee profiles (ds/bts.h): the hardware's, the whole envelope btsx allows where the
 * SDM leaves room, and the model's, composed by ds_init() from the model's options. Tests ask
 * bts_profile() what the machine guarantees instead of which backend runs.
 */
#include "ds/backend.h"
#include "ds/bts.h"
#include "ds/profile.h"
#include "kernel/printf.h"

static const struct bts_profile profile_hw = {
    .name = "hw",
    .pmi_skid_max = BTS_HW_SKID_MAX,                   /* O2: no figure in the SDM */
    .pmi_entry_records_max = BTS_HW_PMI_ENTRY_RECORDS, /* §7: handlers are traced */
    .threshold_record_first = false,                   /* O2 */
    .handler_records = BTS_EITHER,                     /* §7: handlers are traced at CPL 0 */
    .offos_user_returns = BTS_EITHER,                  /* §6, O4: "may" appear */
    .irq_lands_exactly = false,                        /* O6 */
    .pmi_past_threshold = false,                       /* O3 */
    .cond_next_recorded = true,                        /* a taken branch */
};

/* model=exact: today's model, one answer to each open point (docs/model.md). */
static struct bts_profile profile_model = {
    .name = "exact",
    .pmi_skid_max = 0,
    .pmi_entry_records_max = 1, /* the entry record only (fixed delivery: docs/model.md) */
    .threshold_record_first = true,
    .handler_records = BTS_NEVER,
    .offos_user_returns = BTS_ALWAYS,
    .irq_lands_exactly = true,
    .pmi_past_threshold = true,
    .cond_next_recorded = false, /* RIP moves as for a fall-through: nothing to see */
};

static char text[256];

const struct bts_profile *bts_profile(void)
{
    return bts_backend() == &bts_backend_hw ? &profile_hw : &profile_model;
}

bool bts_backend_is_model(void)
{
    return bts_backend() == &bts_backend_model;
}

static const char *maybe_name(enum bts_maybe m)
{
    return m == BTS_NEVER ? "never" : m == BTS_ALWAYS ? "always" : "either";
}

const struct bts_profile *profile_set_model(bool hw, int skid, enum bts_maybe offos_returns,
                                            enum bts_maybe handler_records)
{
    /* model=hw promises only what the hardware does, also where the model keeps one answer
     * (the threshold record's order, interrupt landing): tests then rely on nothing more than
     * on silicon. */
    if (hw)
        profile_model = profile_hw;
    /* What the model cannot see it cannot record, whatever profile it claims. */
    profile_model.cond_next_recorded = false;
    if (skid >= 0)
        profile_model.pmi_skid_max = (unsigned)skid;
    profile_model.offos_user_returns = offos_returns;
    profile_model.handler_records = handler_records;
    /* Handler records on the way into the PMI handler add to the records its entry stores
     * before TR is cleared: the hardware's bound then holds for the model too. */
    if (handler_records != BTS_NEVER)
        profile_model.pmi_entry_records_max = BTS_HW_PMI_ENTRY_RECORDS;
    return &profile_model;
}

void bts_profile_pmi_window(uint64_t thresh, bool kernel, uint64_t *lo, uint64_t *hi)
{
    const struct bts_profile *p = bts_profile();
    /* The record that reached the threshold may still be in flight when the PMI is taken. */
    *lo = thresh - (p->threshold_record_first ? 0 : 1);
    *hi = thresh + p->pmi_skid_max + (kernel ? p->pmi_entry_records_max : 0);
}

const char *bts_profile_describe(void)
{
    const struct bts_profile *p = bts_profile();
    ksnprintf(text, sizeof(text),
              "%s (pmi_skid_max=%u pmi_entry_records_max=%u threshold_record_first=%s "
              "handler_records=%s "
              "offos_user_returns=%s irq_lands_exactly=%s pmi_past_threshold=%s "
              "cond_next_recorded=%s)",
              p->name, p->pmi_skid_max, p->pmi_entry_records_max,
              p->threshold_record_first ? "yes" : "no", maybe_name(p->handler_records),
              maybe_name(p->offos_user_returns), p->irq_lands_exactly ? "yes" : "no",
              p->pmi_past_threshold ? "yes" : "no", p->cond_next_recorded ? "yes" : "no");
    return text;
}
