#include "kernel/nmiwd.h"

#include "kernel/acpi.h"
#include "kernel/apic.h"
#include "kernel/hpet.h"
#include "kernel/ioapic.h"
#include "kernel/printf.h"

#define US_PER_S 1000000ULL

static int gsi = -1;
static bool armed;
static uint64_t armed_at, stage, left; /* HPET ticks: this stage's, and to the deadline */
static void (*fire_fn)(struct trap_frame *f);
static char describe[120];

/*
 * An NMI carries no source: a PMI delivered as an NMI and the tests' self-NMIs share the
 * vector. The watchdog's is the one that arrives while it is armed and its deadline has passed
 * on the HPET's own counter; anything earlier belongs to someone else and goes to the vector's
 * handler.
 */
static void arm_stage(void)
{
    stage = left < hpet_max_oneshot() ? left : hpet_max_oneshot();
    armed_at = hpet_counter();
    hpet_oneshot_arm(stage);
}

static bool nmi_hook(struct trap_frame *f)
{
    if (!armed || hpet_since(armed_at) < stage)
        return false;
    left -= stage;
    if (left) {
        /* A 32-bit HPET cannot reach a deadline minutes away in one step. Only a test that
         * is still running after half a wrap (about 150 s at 14.3 MHz) sees this NMI. */
        arm_stage();
        return true;
    }
    nmi_watchdog_cancel();
    void (*fn)(struct trap_frame *) = fire_fn;
    if (fn)
        fn(f);
    return true;
}

bool nmi_watchdog_init(void)
{
    if (!hpet_present()) {
        ksnprintf(describe, sizeof(describe), "lapic timer only (no HPET for an NMI watchdog%s)",
                  acpi_rsdp_source() ? "" : ": no ACPI RSDP");
        return false;
    }
    gsi = hpet_oneshot_setup();
    if (gsi < 0) {
        ksnprintf(describe, sizeof(describe),
                  "lapic timer only (no HPET comparator reaches an I/O APIC input)");
        return false;
    }
    ioapic_route_nmi((unsigned)gsi, apic_id());
    trap_nmi_hook = nmi_hook;
    ksnprintf(describe, sizeof(describe),
              "lapic timer, then nmi: hpet timer %u -> ioapic gsi %d (rsdp: %s, ioapic: %s)",
              hpet_oneshot_timer(), gsi, acpi_rsdp_source(), ioapic_source());
    return true;
}

bool nmi_watchdog_available(void)
{
    return gsi >= 0;
}

const char *nmi_watchdog_describe(void)
{
    return describe;
}

void nmi_watchdog_arm_us(uint64_t us, void (*fn)(struct trap_frame *f))
{
    if (gsi < 0)
        return;
    ioapic_mask((unsigned)gsi);
    armed = false;
    fire_fn = fn;
    left = us * hpet_hz() / US_PER_S;
    if (left == 0)
        left = 1;
    arm_stage();
    armed = true;
    ioapic_unmask((unsigned)gsi);
}

void nmi_watchdog_cancel(void)
{
    if (gsi < 0)
        return;
    armed = false;
    hpet_oneshot_disarm();
    ioapic_mask((unsigned)gsi);
}
