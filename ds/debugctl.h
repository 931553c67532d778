/*
 * Where DEBUGCTL keeps its BTS controls. The MSR at 0x1D9 is IA32_DEBUGCTL on family 06H
 * processors and later, and MSR_DEBUGCTLA on the Pentium 4 and NetBurst Xeons (family 0FH), with
 * the same five controls at other bit positions (SDM Vol. 3B, "Last Branch, Interrupt, and
 * Exception Recording" for the Core layout, and its section on the Pentium 4 and Intel Xeon
 * processors, figure "MSR_DEBUGCTLA MSR for Pentium 4 and Intel Xeon Processors", for NetBurst).
 * Writing one layout's bits on the other processor sets different controls and reserved bits
 * (docs/hardware.md §2).
 *
 * One table chooses the layout by CPUID vendor and family. The probe writes the CPU's layout,
 * every DEBUGCTL value above the backend is composed through a layout (debugctl_compose), and
 * the model interprets its shadow DEBUGCTL through the layout it was given. Pure: no MSR access.
 */
#ifndef BTSX_DS_DEBUGCTL_H
#define BTSX_DS_DEBUGCTL_H

#include <stdbool.h>
#include <stdint.h>

struct debugctl_layout {
    const char *name;     /* "core", "netburst": the command line's and the header's word */
    uint64_t tr;          /* send branch messages (BTS needs it with BTS) */
    uint64_t bts;         /* store branch messages in the DS area */
    uint64_t btint;       /* interrupt at the threshold (else the buffer is circular) */
    uint64_t bts_off_os;  /* do not store transfers that land at CPL 0 */
    uint64_t bts_off_usr; /* do not store transfers that land at CPL > 0 */
};

extern const struct debugctl_layout debugctl_core;
extern const struct debugctl_layout debugctl_netburst;

/*
 * The layout a CPU with this CPUID.0 vendor string and (display) family uses, or NULL when the
 * table knows none: a vendor other than GenuineIntel (BTS and these DEBUGCTL bits are Intel's;
 * AMD's DebugCtl has other controls at these positions), or an Intel family before 06H (no BTS
 * in DEBUGCTL). GenuineIntel family 0FH is NetBurst; 06H and every later family is Core.
 * NULL also for a NULL vendor.
 */
const struct debugctl_layout *debugctl_layout_for(const char *vendor, uint32_t family);

/* DEBUGCTL that records branches in l's bits: TR|BTS, BTINT for interrupt mode, BTS_OFF_OS
 * and BTS_OFF_USR for the privilege levels not asked for. 0 (nothing switched on) for a NULL
 * layout: without a known layout no bit may be set. */
uint64_t debugctl_compose(const struct debugctl_layout *l, bool interrupt, bool kernel, bool user);

/* True if v has both TR and BTS of layout l set (BTS stores records only with both). */
bool debugctl_recording(const struct debugctl_layout *l, uint64_t v);

#endif /* BTSX_DS_DEBUGCTL_H */
