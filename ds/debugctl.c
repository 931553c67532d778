/* The DEBUGCTL layout table (see ds/debugctl.h). */
#include "ds/debugctl.h"

#include "kernel/string.h"

#define BIT64(n) (1ULL << (n))
#define LAYOUT(nm, tr_, bts_, btint_, os_, usr_)                                                   \
    {                                                                                              \
        .name = nm, .tr = BIT64(tr_), .bts = BIT64(bts_), .btint = BIT64(btint_),                  \
        .bts_off_os = BIT64(os_), .bts_off_usr = BIT64(usr_)                                       \
    }

/* IA32_DEBUGCTL: LBR 0, BTF 1, TR 6, BTS 7, BTINT 8, BTS_OFF_OS 9, BTS_OFF_USR 10. */
const struct debugctl_layout debugctl_core = LAYOUT("core", 6, 7, 8, 9, 10);
/* MSR_DEBUGCTLA: LBR 0, BTF 1, TR 2, BTS 3, BTINT 4, BTS_OFF_OS 5, BTS_OFF_USR 6. */
const struct debugctl_layout debugctl_netburst = LAYOUT("netburst", 2, 3, 4, 5, 6);

#define VENDOR_INTEL "GenuineIntel"

/* First match wins. Families are CPUID display families (base plus extended family). */
static const struct {
    const char *vendor;
    uint32_t family_min, family_max;
    const struct debugctl_layout *layout;
} table[] = {
    {VENDOR_INTEL, 0x0F, 0x0F, &debugctl_netburst},   /* Pentium 4, NetBurst Xeon */
    {VENDOR_INTEL, 0x06, UINT32_MAX, &debugctl_core}, /* Pentium M, Core and later */
};

const struct debugctl_layout *debugctl_layout_for(const char *vendor, uint32_t family)
{
    if (!vendor)
        return NULL;
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (strcmp(vendor, table[i].vendor) == 0 && family >= table[i].family_min &&
            family <= table[i].family_max)
            return table[i].layout;
    return NULL;
}

uint64_t debugctl_compose(const struct debugctl_layout *l, bool interrupt, bool kernel, bool user)
{
    if (!l)
        return 0;
    uint64_t v = l->tr | l->bts;
    if (interrupt)
        v |= l->btint;
    if (!kernel)
        v |= l->bts_off_os;
    if (!user)
        v |= l->bts_off_usr;
    return v;
}

bool debugctl_recording(const struct debugctl_layout *l, uint64_t v)
{
    return l && (v & (l->tr | l->bts)) == (l->tr | l->bts);
}
