#include "kernel/apic.h"

#include "kernel/calib.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/hpet.h"
#include "kernel/io.h"
#include "kernel/panic.h"
#include "kernel/pit.h"
#include "kernel/printf.h"
#include "kernel/trap.h"

#define PIC1_DATA             0x21
#define PIC2_DATA             0xA1
#define PIC_MASK_ALL          0xFF
#define X2APIC_MSR(reg)       (MSR_X2APIC_BASE + ((reg) >> 4))
#define X2APIC_ICR_MSR        0x830
#define CALIBRATE_MS          10
#define CALIBRATE_WINDOWS     5 /* median: under an emulator one window can be stretched */
/* Rounds of windows until two in a row agree this closely (kernel/calib.h): under an emulator
 * a whole round can be stretched. */
#define CALIBRATE_ROUNDS      6
#define CALIBRATE_AGREE_PCT   2
#define TIMER_DIVIDER         16
#define US_PER_S              1000000ULL
#define ICR_SPIN_LIMIT        1000000
/* CPUID.15H is believed when the measurement is this close: a measurement on hardware is good
 * to well under 1 %, so a wider gap is the leaf being wrong (or rounded: 24 vs 25 MHz). */
#define CPUID15_TOLERANCE_PCT 2

static volatile uint32_t *xapic; /* MMIO base in xAPIC mode, NULL in x2APIC mode */
static uint64_t timer_hz_, tsc_hz_;
static char source[APIC_SOURCE_MAX];
static bool pit_ok;
static const char *note = "";
static void (*timer_fn)(struct trap_frame *f);

static enum apic_mode mode_opt = APIC_MODE_AUTO;
OPTION_CHOICE("apic", mode_opt, {"auto", APIC_MODE_AUTO}, {"xapic", APIC_MODE_XAPIC},
              {"x2apic", APIC_MODE_X2APIC});
static enum clock_choice clock_opt = CLOCK_AUTO;
OPTION_CHOICE("clock", clock_opt, {"auto", CLOCK_AUTO}, {"pit", CLOCK_PIT}, {"hpet", CLOCK_HPET},
              {"cpuid", CLOCK_CPUID});

bool apic_is_x2apic(void)
{
    return xapic == NULL;
}

uint32_t apic_read(uint32_t reg)
{
    return xapic ? xapic[reg / 4] : (uint32_t)rdmsr(X2APIC_MSR(reg));
}

void apic_write(uint32_t reg, uint32_t v)
{
    if (xapic)
        xapic[reg / 4] = v;
    else
        wrmsr(X2APIC_MSR(reg), v);
}

uint32_t apic_id(void)
{
    uint32_t id = apic_read(APIC_ID);
    return xapic ? id >> 24 : id; /* xAPIC keeps the ID in bits 31:24 */
}

void apic_eoi(void)
{
    apic_write(APIC_EOI, 0);
}

bool apic_in_service(unsigned vector)
{
    return apic_read(APIC_ISR0 + 0x10 * (vector / 32)) & (1u << (vector % 32));
}

unsigned apic_eoi_all(void)
{
    unsigned n = 0;
    for (unsigned v = 0; v < NUM_VECTORS && n < NUM_VECTORS; v++)
        if (apic_in_service(v)) {
            apic_eoi(); /* EOI retires the highest-priority in-service vector */
            n++;
            v = 0;
        }
    return n;
}

static void icr_wait(void)
{
    /* x2APIC has no delivery-status bit to wait for (SDM Vol. 3A, 11.12.9). */
    for (int i = 0; xapic && i < ICR_SPIN_LIMIT && (apic_read(APIC_ICR_LO) & APIC_ICR_PENDING); i++)
        cpu_relax();
}

void apic_self_ipi(unsigned vector)
{
    if (!xapic) {
        wrmsr(X2APIC_MSR(APIC_SELF_IPI), vector & APIC_LVT_VECTOR);
        return;
    }
    icr_wait();
    apic_write(APIC_ICR_LO, APIC_ICR_SELF | APIC_ICR_ASSERT | (vector & APIC_LVT_VECTOR));
}

/* An IPI to one APIC ID. Interrupts stay off between the two xAPIC writes, so that a handler
 * sending its own cannot change the destination in between. */
static void icr_send(uint32_t dest, uint32_t lo)
{
    if (!xapic) {
        wrmsr(X2APIC_ICR_MSR, ((uint64_t)dest << 32) | lo);
        return;
    }
    bool irq = irq_save();
    icr_wait();
    apic_write(APIC_ICR_HI, dest << 24);
    apic_write(APIC_ICR_LO, lo);
    icr_wait();
    irq_restore(irq);
}

void apic_self_nmi(void)
{
    /* The "self" shorthand is not valid with NMI delivery: address ourselves by ID. */
    icr_send(apic_id(), APIC_ICR_DM_NMI | APIC_ICR_ASSERT);
}

void apic_send_ipi(uint32_t dest, unsigned vector)
{
    icr_send(dest, APIC_ICR_ASSERT | (vector & APIC_LVT_VECTOR));
}

void apic_send_nmi(uint32_t dest)
{
    icr_send(dest, APIC_ICR_DM_NMI | APIC_ICR_ASSERT);
}

void apic_send_init(uint32_t dest)
{
    icr_send(dest, APIC_ICR_DM_INIT | APIC_ICR_LEVEL | APIC_ICR_ASSERT);
    /* The de-assert that older xAPICs wanted; x2APIC has no such message (SDM Vol. 3A,
     * 11.12.10: a level-triggered INIT de-assert is not supported in x2APIC mode). */
    if (xapic)
        icr_send(dest, APIC_ICR_DM_INIT | APIC_ICR_LEVEL);
}

void apic_send_startup(uint32_t dest, unsigned page)
{
    icr_send(dest, APIC_ICR_DM_STARTUP | (page & APIC_LVT_VECTOR));
}

static void timer_irq(struct trap_frame *f)
{
    apic_eoi();
    void (*fn)(struct trap_frame *) = timer_fn;
    timer_fn = NULL;
    if (fn)
        fn(f);
}

static void spurious_irq(struct trap_frame *f)
{
    (void)f; /* no EOI for spurious vectors */
}

const char *clock_ref_name(enum clock_ref ref)
{
    static const char *const names[] = {"none", "pit", "hpet"};
    return names[ref];
}

/* A window of `ms` on the reference clock: start it, then poll until it has passed. */
static uint64_t window_start, window_ticks;

static void window_begin(enum clock_ref ref, unsigned ms)
{
    if (ref == CLOCK_REF_PIT) {
        pit_oneshot_start(ms);
        return;
    }
    window_ticks = hpet_hz() * ms / 1000;
    window_start = hpet_counter();
}

static bool window_over(enum clock_ref ref)
{
    return ref == CLOCK_REF_PIT ? pit_oneshot_done() : hpet_since(window_start) >= window_ticks;
}

/*
 * One window: the LAPIC timer free-runs while the reference counts `ms`. Both ends are
 * bracketed by TSC reads; if the host (an emulator's thread) was descheduled across either
 * end, the bracket is wide and the window is measured again.
 */
#define MEASURE_ATTEMPTS  5
#define MEASURE_SLACK_DIV 200 /* an end's bracket may cost 0.5 % of the window */

uint64_t apic_timer_measure_hz(enum clock_ref ref, unsigned ms, uint64_t *tsc)
{
    uint64_t best_hz = 0, best_tsc = 0, best_slack = UINT64_MAX;
    apic_write(APIC_TIMER_DIV, APIC_TIMER_DIV_16);
    apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED | VEC_TIMER);
    for (unsigned a = 0; a < MEASURE_ATTEMPTS; a++) {
        apic_write(APIC_TIMER_INIT, 0xFFFFFFFF);
        uint64_t s0 = rdtsc();
        window_begin(ref, ms);
        uint32_t c0 = apic_read(APIC_TIMER_CUR);
        uint64_t t0 = rdtsc();
        uint32_t c1;
        uint64_t t1, prev = t0;
        uint64_t t2;
        for (;;) {
            c1 = apic_read(APIC_TIMER_CUR);
            t1 = rdtsc();
            bool over = window_over(ref);
            t2 = rdtsc();
            if (over)
                break;
            prev = t1;
        }
        /* The window ended after the previous check began (after prev) and before this check
         * returned (t2); t1 lies in between. A host that deschedules the emulator between
         * reading t1 and the check must widen the bracket, not shorten the window. */
        uint64_t slack = (t0 - s0) + (t2 - prev);
        if (slack < best_slack) {
            best_slack = slack;
            best_hz = (uint64_t)(c0 - c1) * 1000 / ms;
            best_tsc = (t1 - t0) * 1000 / ms;
        }
        if (slack * MEASURE_SLACK_DIV < t1 - t0)
            break;
    }
    apic_write(APIC_TIMER_INIT, 0);
    *tsc = best_tsc;
    return best_hz;
}

enum clock_ref apic_check_ref(void)
{
    return pit_ok ? CLOCK_REF_PIT : hpet_present() ? CLOCK_REF_HPET : CLOCK_REF_NONE;
}

static bool agrees(uint64_t a, uint64_t b)
{
    uint64_t d = a > b ? a - b : b - a;
    return d * 100 <= b * CPUID15_TOLERANCE_PCT;
}

/*
 * The LAPIC timer and TSC rates. CPUID.15H states them exactly when firmware and hypervisor
 * fill it in truthfully, but some do not (a zero crystal, rounded values, or, under Bochs's
 * Ice Lake model, a 2.4 MHz crystal where the timer really runs at 3.12 MHz). So the leaf is
 * believed only when a measurement against an independent clock agrees with it; the clock is
 * the PIT, else the HPET (newer platforms may gate the PIT off), and the leaf alone is used
 * only when there is neither. clock= forces one source, to test each path on one machine.
 */
static void timer_calibrate(enum clock_choice choice)
{
    uint64_t cpuid_timer = 0, cpuid_tsc = 0;
    if (cpu_caps.max_leaf >= CPUID_LEAF_TSC_CRYSTAL) {
        struct cpuid_regs r = cpuid(CPUID_LEAF_TSC_CRYSTAL);
        /* ECX = core crystal Hz, which clocks the LAPIC timer; EBX/EAX = TSC/crystal. */
        if (r.ecx && r.eax && r.ebx) {
            cpuid_timer = r.ecx / TIMER_DIVIDER;
            cpuid_tsc = (uint64_t)r.ecx * r.ebx / r.eax;
        }
    }
    pit_ok = pit_present();
    enum clock_ref ref = choice == CLOCK_CPUID ? CLOCK_REF_NONE : apic_check_ref();
    const char *why = "";
    if (choice == CLOCK_HPET && hpet_present()) {
        ref = CLOCK_REF_HPET;
        why = "; clock=hpet";
    } else if (choice == CLOCK_HPET)
        why = "; clock=hpet asked, but no HPET";
    else if (choice == CLOCK_PIT && !pit_ok)
        why = "; clock=pit asked, but the PIT never counted down";
    else if (choice == CLOCK_PIT)
        why = "; clock=pit";
    else if (choice == CLOCK_CPUID && cpuid_timer)
        why = "; clock=cpuid";
    else if (choice == CLOCK_CPUID) {
        ref = apic_check_ref();
        why = "; clock=cpuid asked, but CPUID.15H gives no crystal";
    } else if (!pit_ok)
        why = "; no PIT: channel 2 never counted down";

    if (ref == CLOCK_REF_NONE) {
        if (!cpuid_timer)
            panic("no clock to calibrate the LAPIC timer: no PIT, no HPET, no CPUID.15H crystal");
        timer_hz_ = cpuid_timer;
        tsc_hz_ = cpuid_tsc;
        ksnprintf(source, sizeof(source), "cpuid-0x15%s%s", why,
                  choice == CLOCK_CPUID ? "" : "; unchecked: no PIT or HPET");
        apic_write(APIC_TIMER_DIV, APIC_TIMER_DIV_16);
        return;
    }
    struct calib_round rounds[CALIBRATE_ROUNDS];
    unsigned n = 0;
    while (n < CALIBRATE_ROUNDS) {
        uint64_t hz[CALIBRATE_WINDOWS], tsc[CALIBRATE_WINDOWS];
        for (unsigned i = 0; i < CALIBRATE_WINDOWS; i++)
            hz[i] = apic_timer_measure_hz(ref, CALIBRATE_MS, &tsc[i]);
        rounds[n++] = (struct calib_round){median_u64(hz, CALIBRATE_WINDOWS),
                                           median_u64(tsc, CALIBRATE_WINDOWS)};
        if (n >= 2 && calib_agree(&rounds[n - 2], &rounds[n - 1], CALIBRATE_AGREE_PCT))
            break;
    }
    bool agreed;
    struct calib_round c = calib_choose(rounds, n, CALIBRATE_AGREE_PCT, &agreed);
    uint64_t m_timer = c.timer_hz, m_tsc = c.tsc_hz;
    /* Named in the header: a clock the emulator's host stretched at boot. */
    char quirk[64] = "";
    if (!agreed)
        ksnprintf(quirk, sizeof(quirk), "; no 2 of %u rounds agreed: medians", n);
    else if (n > 2)
        ksnprintf(quirk, sizeof(quirk), "; round %u of %u (the first: timer %lu Hz)", n, n,
                  rounds[0].timer_hz);
    if (m_timer == 0)
        panic("LAPIC timer does not count (%s calibration gave 0 Hz)", clock_ref_name(ref));
    if (cpuid_timer && agrees(m_timer, cpuid_timer) && agrees(m_tsc, cpuid_tsc)) {
        timer_hz_ = cpuid_timer; /* exact where the measurement is only close */
        tsc_hz_ = cpuid_tsc;
        ksnprintf(source, sizeof(source), "cpuid-0x15; %s agrees%s%s", clock_ref_name(ref), why,
                  quirk);
    } else {
        timer_hz_ = m_timer;
        tsc_hz_ = m_tsc;
        if (cpuid_timer)
            ksnprintf(source, sizeof(source), "%s; cpuid-0x15 said %lu Hz, tsc %lu Hz%s%s",
                      clock_ref_name(ref), cpuid_timer, cpuid_tsc, why, quirk);
        else
            ksnprintf(source, sizeof(source), "%s%s%s", clock_ref_name(ref), why, quirk);
    }
}

/* The registers apic_init() and apic_init_ap() set alike: the LAPIC on, every source of
 * interrupts that nothing handles yet masked, the timer's divider. */
static void lapic_setup(void)
{
    apic_write(APIC_SVR, APIC_SVR_ENABLE | VEC_SPURIOUS);
    apic_write(APIC_TPR, 0);
    apic_write(APIC_LVT_LINT0, APIC_LVT_MASKED);
    apic_write(APIC_LVT_ERROR, APIC_LVT_MASKED);
    apic_write(APIC_LVT_PC, APIC_LVT_MASKED | VEC_PMI);
    apic_write(APIC_LVT_TIMER, APIC_LVT_MASKED | VEC_TIMER);
    apic_write(APIC_TIMER_DIV, APIC_TIMER_DIV_16);
}

void apic_init_ap(void)
{
    /* An AP leaves INIT with its LAPIC on in xAPIC mode; x2APIC is entered from there (SDM
     * Vol. 3A, 11.12.5). In xAPIC mode every LAPIC answers at the same address, the one
     * apic_init() mapped. */
    uint64_t base = rdmsr(MSR_IA32_APIC_BASE) | APIC_BASE_EN;
    wrmsr(MSR_IA32_APIC_BASE, base);
    if (!xapic)
        wrmsr(MSR_IA32_APIC_BASE, base | APIC_BASE_EXTD);
    lapic_setup();
}

void apic_timer_start_ticks(uint64_t ticks)
{
    if (ticks > 0xFFFFFFFFu)
        ticks = 0xFFFFFFFFu;
    apic_write(APIC_LVT_TIMER, VEC_TIMER); /* one-shot, unmasked */
    apic_write(APIC_TIMER_INIT, (uint32_t)ticks);
}

void apic_init(void)
{
    outb(PIC1_DATA, PIC_MASK_ALL); /* the legacy PIC stays silent: LAPIC only */
    outb(PIC2_DATA, PIC_MASK_ALL);

    uint64_t base = rdmsr(MSR_IA32_APIC_BASE);
    bool want_x2 =
        mode_opt == APIC_MODE_X2APIC || (mode_opt == APIC_MODE_AUTO && (base & APIC_BASE_EXTD));
    if (want_x2 && !cpu_has_x2apic()) {
        note = " (apic=x2apic asked, but CPUID.01H:ECX.x2APIC=0)";
        want_x2 = false;
    }
    if (!want_x2 && (base & APIC_BASE_EXTD)) {
        /* x2APIC -> xAPIC must go through disabled (SDM Vol. 3A, 11.12.5). */
        wrmsr(MSR_IA32_APIC_BASE, base & ~(APIC_BASE_EXTD | APIC_BASE_EN));
        base &= ~APIC_BASE_EXTD;
    }
    base |= APIC_BASE_EN | (want_x2 ? APIC_BASE_EXTD : 0);
    wrmsr(MSR_IA32_APIC_BASE, base);
    xapic = want_x2 ? NULL : (volatile uint32_t *)(base & APIC_BASE_ADDR_MASK);

    lapic_setup();
    trap_set_handler(VEC_TIMER, timer_irq);
    trap_set_handler(VEC_SPURIOUS, spurious_irq);
    timer_calibrate(clock_opt);
}

uint64_t apic_timer_hz(void)
{
    return timer_hz_;
}
const char *apic_note(void)
{
    return note;
}
const char *apic_timer_source(void)
{
    return source;
}
uint64_t tsc_hz(void)
{
    return tsc_hz_;
}
uint64_t tsc_to_us(uint64_t cycles)
{
    return tsc_hz_ ? cycles * US_PER_S / tsc_hz_ : 0;
}

void udelay(uint64_t us)
{
    uint64_t end = rdtsc() + us * tsc_hz_ / US_PER_S;
    while (rdtsc() < end)
        cpu_relax();
}

void apic_timer_oneshot_us(uint64_t us, void (*fn)(struct trap_frame *f))
{
    uint64_t ticks = us * timer_hz_ / US_PER_S;
    timer_fn = fn;
    apic_timer_start_ticks(ticks ? ticks : 1);
}

void apic_timer_cancel(void)
{
    apic_write(APIC_TIMER_INIT, 0);
    timer_fn = NULL;
}
