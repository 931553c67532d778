#include "kernel/smp.h"

#include "boot/layout.h"
#include "kernel/acpi.h"
#include "kernel/apic.h"
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/gdt.h"
#include "kernel/mem.h"
#include "kernel/printf.h"
#include "kernel/string.h"
#include "kernel/trap.h"

/* ACPI Specification, 5.2.12: the MADT and its processor entries. */
struct madt {
    struct acpi_header h;
    uint32_t lapic_addr, flags;
} __attribute__((packed));
struct madt_entry {
    uint8_t type, length;
} __attribute__((packed));
struct madt_lapic { /* type 0 */
    struct madt_entry e;
    uint8_t uid, apic_id;
    uint32_t flags;
} __attribute__((packed));
struct madt_x2apic { /* type 9 */
    struct madt_entry e;
    uint16_t reserved;
    uint32_t x2apic_id, flags, uid;
} __attribute__((packed));

#define MADT_LAPIC          0
#define MADT_X2APIC         9
#define MADT_ENABLED        (1u << 0)
#define MADT_ONLINE_CAPABLE (1u << 1)
#define LAPIC_ID_NONE       0xFFu /* a Local APIC entry with no processor behind it */
#define X2APIC_ID_NONE      0xFFFFFFFFu
#define XAPIC_ID_MAX        0xFEu /* what an xAPIC ICR can address */

/* The start-up algorithm's waits (SDM Vol. 3A, "MP Initialization"): 10 ms after INIT, 200 us
 * after each STARTUP IPI. Then the AP has AP_ONLINE_TIMEOUT_US to report; an emulator's vCPU
 * thread on a loaded host can take a while. */
#define INIT_DELAY_US        10000
#define SIPI_DELAY_US        200
#define AP_ONLINE_TIMEOUT_US 2000000
#define AP_STACK_PAGES       (BOOT_STACK_SIZE / FRAME_SIZE)
#define AP_TIMER_CHECK_US    1000 /* the one-shot an AP must take before it counts as online */
/* ...and not sooner than this share of it: the rates are a measurement on the bootstrap CPU,
 * good to well under 1 % on hardware; a wrong divider or rate is off by a factor. */
#define AP_TIMER_MIN_PCT     95
#define CALL_TIMEOUT_US      1000000
#define LOW_PAGE_TOP         0xA0000 /* VGA memory and ROMs above; SIPI reaches below 1 MiB */
#define LOW_4G               (4ULL << 30)
#define TRAMPOLINE_ALIVE     0x5441 /* boot/ap.S writes it */
#define SMP_ALL              UINT64_MAX

/* percpu.up: how far an AP got. */
enum { AP_UP_NONE, AP_UP_KERNEL, AP_UP_FAST_TIMER, AP_UP_ONLINE };

struct percpu percpu_all[SMP_MAX_CPUS];

static uint64_t smp_opt = SMP_ALL;
static bool smp_given;
OPTION_COUNT("smp", smp_opt, smp_given, 1, "all", SMP_ALL);

static struct smp_cpu madt_cpus[SMP_MADT_MAX];
static unsigned nmadt, madt_dropped, online = 1;
static char note[160];

/* boot/ap.S: the trampoline, and what the bootstrap CPU leaves for each AP it starts. */
extern const char ap_trampoline[], ap_trampoline_end[], ap_trampoline_alive[];
uint32_t smp_ap_cr3, smp_ap_efer;
uint64_t smp_ap_stack;
struct percpu *smp_ap_percpu;
void smp_ap_main(struct percpu *p) __attribute__((noreturn));

extern const char boot_stack[];

void percpu_install(struct percpu *p)
{
    wrmsr(MSR_GS_BASE, (uint64_t)p);
    wrmsr(MSR_KERNEL_GS_BASE, 0); /* user tasks start with a GS base of 0 */
}

void smp_init_bsp(void)
{
    struct percpu *p = &percpu_all[0];
    p->self = p;
    p->cpu = 0;
    p->tss = &cpu_tss[0];
    p->stack_top = (uint64_t)boot_stack + BOOT_STACK_SIZE;
    p->up = AP_UP_ONLINE;
    percpu_install(p);
}

const char *smp_state_name(enum smp_state s)
{
    static const char *const names[] = {
        [SMP_ONLINE] = "online",
        [SMP_NOT_STARTED] = "not started (smp=)",
        [SMP_DISABLED] = "disabled in the MADT",
        [SMP_HOTPLUG] = "online-capable, not enabled at boot",
        [SMP_DUPLICATE] = "duplicate APIC ID in the MADT",
        [SMP_OVER_LIMIT] = "over the kernel's CPU limit",
        [SMP_NO_ANSWER] = "no answer to INIT-SIPI-SIPI",
        [SMP_STUCK] = "ran the trampoline, never reached the kernel",
        [SMP_NO_TIMER] = "reached the kernel, its LAPIC timer never fired",
        [SMP_FAST_TIMER] = "its LAPIC timer fired early for the bootstrap CPU's rates",
        [SMP_UNUSABLE] = "cannot be started",
    };
    return names[s];
}

static void madt_add(uint32_t apic_id, uint32_t uid, uint32_t flags, bool x2)
{
    if (nmadt == SMP_MADT_MAX) {
        madt_dropped++;
        return;
    }
    madt_cpus[nmadt++] = (struct smp_cpu){
        .apic_id = apic_id, .uid = uid, .x2apic_entry = x2, .flags = flags, .cpu = -1};
}

static void madt_read(void)
{
    const struct madt *m = (const void *)acpi_find_table("APIC");
    if (!m) {
        ksnprintf(note, sizeof(note), "no MADT (rsdp: %s): one CPU",
                  acpi_rsdp_source() ? acpi_rsdp_source() : "none");
        return;
    }
    const uint8_t *p = (const uint8_t *)(m + 1), *end = (const uint8_t *)m + m->h.length;
    while (p + sizeof(struct madt_entry) <= end) {
        const struct madt_entry *e = (const void *)p;
        if (e->length < sizeof(*e) || p + e->length > end)
            break; /* a malformed entry ends the walk: what follows cannot be located */
        if (e->type == MADT_LAPIC && e->length >= sizeof(struct madt_lapic)) {
            const struct madt_lapic *l = (const void *)p;
            if (l->apic_id != LAPIC_ID_NONE)
                madt_add(l->apic_id, l->uid, l->flags, false);
        } else if (e->type == MADT_X2APIC && e->length >= sizeof(struct madt_x2apic)) {
            const struct madt_x2apic *x = (const void *)p;
            if (x->x2apic_id != X2APIC_ID_NONE)
                madt_add(x->x2apic_id, x->uid, x->flags, true);
        }
        p += e->length;
    }
}

/* A page below 1 MiB that the memory map calls usable and no one else holds: not page 0 (the
 * real-mode IVT and BDA), nothing the loader handed over, nothing the firmware reserved. The
 * highest such page, away from the IVT and BDA that firmware and real-mode code touch. */
static bool overlaps(uint64_t a, const struct mem_range *r, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (a < r[i].base + r[i].len && r[i].base < a + FRAME_SIZE)
            return true;
    return false;
}

static uint64_t trampoline_page(void)
{
    for (uint64_t a = LOW_PAGE_TOP - FRAME_SIZE; a >= FRAME_SIZE; a -= FRAME_SIZE) {
        bool usable = false;
        for (unsigned i = 0; i < boot_info.nusable && !usable; i++)
            usable = a >= boot_info.usable[i].base &&
                     a + FRAME_SIZE <= boot_info.usable[i].base + boot_info.usable[i].len;
        if (usable && !overlaps(a, boot_info.loader, boot_info.nloader) &&
            !overlaps(a, boot_info.reserved, boot_info.nreserved))
            return a;
    }
    return 0;
}

/* Starts one AP as percpu_all[cpu]; returns its state. */
static enum smp_state start_ap(struct smp_cpu *c, unsigned cpu, uint64_t page)
{
    uint64_t stack = pages_alloc(AP_STACK_PAGES);
    if (!stack)
        return SMP_UNUSABLE;
    struct percpu *p = &percpu_all[cpu];
    memset(p, 0, sizeof(*p));
    p->self = p;
    p->cpu = cpu;
    p->stack_top = stack + AP_STACK_PAGES * FRAME_SIZE;
    smp_ap_stack = p->stack_top;
    smp_ap_percpu = p;
    volatile uint16_t *alive = (volatile uint16_t *)(page + (ap_trampoline_alive - ap_trampoline));
    *alive = 0;

    console_shared();
    uint64_t t0 = rdtsc();
    apic_send_init(c->apic_id);
    udelay(INIT_DELAY_US);
    for (unsigned i = 0; i < 2; i++) {
        apic_send_startup(c->apic_id, (unsigned)(page >> 12));
        udelay(SIPI_DELAY_US);
    }
    uint64_t deadline = rdtsc() + AP_ONLINE_TIMEOUT_US * tsc_hz() / 1000000;
    while (p->up != AP_UP_ONLINE && p->up != AP_UP_FAST_TIMER && rdtsc() < deadline)
        cpu_relax();
    c->start_us = tsc_to_us(rdtsc() - t0);
    if (p->up == AP_UP_ONLINE)
        return SMP_ONLINE;
    /* Left out: INIT puts it back to waiting for a STARTUP IPI, so it cannot wake up later on
     * the next AP's stack; then its own stack is free again. */
    enum smp_state s = p->up == AP_UP_FAST_TIMER    ? SMP_FAST_TIMER
                       : p->up == AP_UP_KERNEL      ? SMP_NO_TIMER
                       : *alive == TRAMPOLINE_ALIVE ? SMP_STUCK
                                                    : SMP_NO_ANSWER;
    apic_send_init(c->apic_id);
    udelay(INIT_DELAY_US);
    memset(p, 0, sizeof(*p));
    pages_free(stack, AP_STACK_PAGES);
    return s;
}

static void ap_timer(struct trap_frame *f)
{
    (void)f;
    struct percpu *p = this_cpu();
    p->timer_fired_tsc = rdtsc();
    p->timer_irqs++;
    apic_eoi();
}

static smp_nmi_hook_t nmi_hook;
static void (*watchdog_nmi)(struct trap_frame *f);

void smp_set_nmi_hook(smp_nmi_hook_t hook)
{
    nmi_hook = hook;
}

void smp_set_watchdog_nmi(void (*fn)(struct trap_frame *f))
{
    watchdog_nmi = fn;
}

/* Runs the pending call, if any; whether there was one. */
static bool run_call(struct percpu *p)
{
    uint64_t seq = p->call_seq;
    if (p->call_done == seq)
        return false;
    p->call_fn(p->call_arg);
    __atomic_store_n(&p->call_done, seq, __ATOMIC_RELEASE);
    return true;
}

static void ap_call(struct trap_frame *f)
{
    (void)f;
    struct percpu *p = this_cpu();
    p->call_irqs++;
    run_call(p);
    apic_eoi();
}

/* NMIs do not queue: one NMI may stand for a call, the watchdog and another source at once (a
 * threshold interrupt with pmi=nmi), so every source is asked. */
static void ap_nmi(struct trap_frame *f)
{
    struct percpu *p = this_cpu();
    p->call_nmis++;
    bool claimed = run_call(p);
    /* The watchdog's NMI is the one the bootstrap CPU said it sent (percpu wd_nmi). */
    bool watchdog = __atomic_load_n(&p->wd_nmi, __ATOMIC_ACQUIRE);
    if (nmi_hook)
        nmi_hook(f, claimed || watchdog);
    if (watchdog && watchdog_nmi)
        watchdog_nmi(f); /* last: it may end the interrupted task and never return */
}

static void cpu_wake(struct trap_frame *f)
{
    (void)f; /* the idle loop looks for work once the HLT is over */
    apic_eoi();
}

static void ap_spurious(struct trap_frame *f)
{
    (void)f; /* no EOI for spurious vectors */
}

void smp_timer_oneshot_us(uint64_t us)
{
    struct percpu *p = this_cpu();
    uint64_t ticks = us * apic_timer_hz() / 1000000;
    p->timer_armed_tsc = rdtsc();
    apic_timer_start_ticks(ticks ? ticks : 1);
}

void smp_ap_main(struct percpu *p)
{
    p->tss = gdt_init_ap(p->cpu, p->stack_top);
    percpu_install(p);
    idt_load();
    cpu_enable_protections();
    apic_init_ap();
    p->apic_id = apic_id();
    p->up = AP_UP_KERNEL;
    /* Online only once its timer interrupts, not early: that proves its LAPIC, the IDT, this
     * stack, and that the bootstrap CPU's timer rate holds here. */
    smp_timer_oneshot_us(AP_TIMER_CHECK_US);
    while (p->timer_irqs == 0)
        __asm__ volatile("sti; hlt; cli" ::: "memory");
    uint64_t us = tsc_to_us(p->timer_fired_tsc - p->timer_armed_tsc);
    bool ok = us * 100 >= AP_TIMER_CHECK_US * AP_TIMER_MIN_PCT;
    __atomic_store_n(&p->up, ok ? AP_UP_ONLINE : AP_UP_FAST_TIMER, __ATOMIC_RELEASE);
    /* Idle, running what smp_run() hands over. The check is made with interrupts off and STI's
     * one-instruction shadow covers the HLT, so a wake-up IPI cannot slip in between the two
     * and leave the work waiting. */
    for (;;) {
        __asm__ volatile("cli" ::: "memory");
        uint64_t seq = __atomic_load_n(&p->run_seq, __ATOMIC_ACQUIRE);
        if (seq != p->run_done) {
            __asm__ volatile("sti" ::: "memory");
            p->run_fn(p->run_arg);
            __atomic_store_n(&p->run_done, seq, __ATOMIC_RELEASE);
            continue;
        }
        __asm__ volatile("sti; hlt" ::: "memory");
    }
}

void smp_init(void)
{
    percpu_all[0].apic_id = apic_id();
    madt_read();
    trap_set_ap_handler(VEC_TIMER, ap_timer);
    trap_set_ap_handler(VEC_SMP_CALL, ap_call);
    trap_set_ap_handler(VEC_NMI, ap_nmi);
    trap_set_ap_handler(VEC_SPURIOUS, ap_spurious);
    trap_set_ap_handler(VEC_SMP_WAKE, cpu_wake);
    trap_set_handler(VEC_SMP_WAKE, cpu_wake); /* the bootstrap CPU is woken the same way */

    uint64_t page = 0;
    const char *unusable = NULL;
    bool bsp_listed = false;
    for (unsigned i = 0; i < nmadt; i++)
        bsp_listed = bsp_listed || madt_cpus[i].apic_id == percpu_all[0].apic_id;
    if (madt_dropped)
        ksnprintf(note, sizeof(note), "the MADT lists %u more processors than the %u kept",
                  madt_dropped, SMP_MADT_MAX);
    else if (nmadt && !bsp_listed)
        ksnprintf(note, sizeof(note), "the bootstrap CPU (apic id %u) is not in the MADT",
                  percpu_all[0].apic_id);
    if (smp_opt > 1) {
        page = trampoline_page();
        if (!page)
            unusable = "no free page below 1 MiB for the AP trampoline";
        else if (read_cr3() >= LOW_4G)
            unusable = "the kernel's page tables lie above 4 GiB";
        if (unusable)
            ksnprintf(note, sizeof(note), "%s", unusable);
        else {
            memcpy((void *)page, ap_trampoline, (size_t)(ap_trampoline_end - ap_trampoline));
            smp_ap_cr3 = (uint32_t)read_cr3();
            smp_ap_efer = (uint32_t)(rdmsr(MSR_EFER) & EFER_NXE) | EFER_LME;
        }
    }

    for (unsigned i = 0; i < nmadt; i++) {
        struct smp_cpu *c = &madt_cpus[i];
        bool dup = false;
        for (unsigned j = 0; j < i && !dup; j++)
            dup = madt_cpus[j].apic_id == c->apic_id && madt_cpus[j].state != SMP_DUPLICATE;
        if (c->apic_id == percpu_all[0].apic_id && !dup) {
            c->state = SMP_ONLINE;
            c->cpu = 0;
        } else if (dup)
            c->state = SMP_DUPLICATE;
        else if (!(c->flags & MADT_ENABLED))
            c->state = c->flags & MADT_ONLINE_CAPABLE ? SMP_HOTPLUG : SMP_DISABLED;
        else if (online >= smp_opt)
            c->state = SMP_NOT_STARTED;
        else if (online >= SMP_MAX_CPUS)
            c->state = SMP_OVER_LIMIT;
        else if (unusable || (!apic_is_x2apic() && c->apic_id > XAPIC_ID_MAX))
            c->state = SMP_UNUSABLE;
        else {
            c->state = start_ap(c, online, page);
            if (c->state == SMP_ONLINE)
                c->cpu = (int)online++;
        }
    }
}

unsigned smp_online(void)
{
    return online;
}
unsigned smp_madt_count(void)
{
    return nmadt;
}
const struct smp_cpu *smp_madt_cpu(unsigned i)
{
    return i < nmadt ? &madt_cpus[i] : NULL;
}
const char *smp_note(void)
{
    return note;
}
struct percpu *smp_cpu(unsigned cpu)
{
    return cpu < online ? &percpu_all[cpu] : NULL;
}

int smp_call(unsigned cpu, void (*fn)(void *arg), void *arg, bool nmi)
{
    if (this_cpu()->cpu != 0)
        return E_STATE;
    if (cpu == 0 || cpu >= online)
        return E_INVAL;
    struct percpu *p = &percpu_all[cpu];
    p->call_fn = fn;
    p->call_arg = arg;
    uint64_t seq = p->call_seq + 1;
    __atomic_store_n(&p->call_seq, seq, __ATOMIC_RELEASE);
    if (nmi)
        apic_send_nmi(p->apic_id);
    else
        apic_send_ipi(p->apic_id, VEC_SMP_CALL);
    uint64_t deadline = rdtsc() + CALL_TIMEOUT_US * tsc_hz() / 1000000;
    while (__atomic_load_n(&p->call_done, __ATOMIC_ACQUIRE) != seq)
        if (rdtsc() > deadline)
            return E_TIMEDOUT;
        else
            cpu_relax();
    return 0;
}

int smp_run(unsigned cpu, void (*fn)(void *arg), void *arg)
{
    if (this_cpu()->cpu != 0)
        return E_STATE;
    if (cpu == 0 || cpu >= online)
        return E_INVAL;
    struct percpu *p = &percpu_all[cpu];
    if (__atomic_load_n(&p->run_done, __ATOMIC_ACQUIRE) != p->run_seq)
        return E_BUSY;
    p->run_fn = fn;
    p->run_arg = arg;
    __atomic_store_n(&p->run_seq, p->run_seq + 1, __ATOMIC_RELEASE);
    apic_send_ipi(p->apic_id, VEC_SMP_WAKE);
    return 0;
}

int smp_signal(unsigned cpu, unsigned vector, bool nmi)
{
    struct percpu *p = smp_cpu(cpu);
    if (cpu == 0 || !p)
        return E_INVAL;
    if (nmi)
        apic_send_nmi(p->apic_id);
    else
        apic_send_ipi(p->apic_id, vector);
    return 0;
}

void smp_kick(unsigned cpu)
{
    struct percpu *p = smp_cpu(cpu);
    if (p && p != this_cpu())
        apic_send_ipi(p->apic_id, VEC_SMP_WAKE);
}
