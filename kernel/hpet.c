#include "kernel/hpet.h"

#include <stddef.h>

#include "kernel/acpi.h"
#include "kernel/ioapic.h"

/* Registers (IA-PC HPET Specification 1.0a, 2.3). */
#define REG_CAP            0x000
#define REG_CONFIG         0x010
#define REG_COUNTER        0x0F0
#define REG_TIMER_CFG(n)   (0x100 + 0x20 * (n))
#define REG_TIMER_CMP(n)   (0x108 + 0x20 * (n))
#define CAP_NUM_TIM_SHIFT  8
#define CAP_64BIT          (1u << 13)
#define CAP_PERIOD_SHIFT   32
#define CONFIG_ENABLE      (1u << 0)
#define CONFIG_LEGACY      (1u << 1)
#define TN_LEVEL           (1u << 1)
#define TN_INT_ENABLE      (1u << 2)
#define TN_PERIODIC        (1u << 3)
#define TN_32BIT_MODE      (1u << 8)
#define TN_ROUTE_SHIFT     9
#define TN_ROUTE_MASK      (0x1Fu << TN_ROUTE_SHIFT)
#define TN_FSB_ENABLE      (1u << 14)
#define TN_ROUTE_CAP_SHIFT 32
#define PERIOD_MAX_FS      100000000ULL /* the specification's limit: 100 ns */
#define FS_PER_S           1000000000000000ULL
#define ACPI_SPACE_MEMORY  0
#define MAPPED_LIMIT       0x100000000ULL

/* ACPI HPET description table (IA-PC HPET Specification 1.0a, 3.2.4). */
struct acpi_hpet {
    struct acpi_header h;
    uint32_t block_id;
    uint8_t space_id, bit_width, bit_offset, access_size;
    uint64_t address;
    uint8_t number;
    uint16_t min_tick;
    uint8_t page_protection;
} __attribute__((packed));

static volatile uint8_t *base;
static uint64_t hz, mask;
static unsigned ntimers, wd_timer;
static uint64_t wd_cfg; /* the watchdog comparator's configuration, interrupt disabled */

static uint64_t rd(unsigned reg)
{
    return *(volatile uint64_t *)(base + reg);
}

static void wr(unsigned reg, uint64_t v)
{
    *(volatile uint64_t *)(base + reg) = v;
}

bool hpet_init(void)
{
    const struct acpi_hpet *t = (const void *)acpi_find_table("HPET");
    if (!t || t->h.length < sizeof(*t) || t->space_id != ACPI_SPACE_MEMORY || t->address == 0 ||
        t->address >= MAPPED_LIMIT)
        return false;
    base = (volatile uint8_t *)t->address;
    uint64_t cap = rd(REG_CAP), period = cap >> CAP_PERIOD_SHIFT;
    if (cap == UINT64_MAX || period == 0 || period > PERIOD_MAX_FS) {
        base = NULL; /* nothing there, or not an HPET the specification allows */
        return false;
    }
    hz = FS_PER_S / period;
    mask = (cap & CAP_64BIT) ? UINT64_MAX : 0xFFFFFFFFu;
    ntimers = ((cap >> CAP_NUM_TIM_SHIFT) & 0x1F) + 1;
    /* Firmware may leave every comparator enabled: silence them before starting the counter.
     * Legacy replacement stays off so that the PIT and RTC keep their own interrupt lines. */
    for (unsigned n = 0; n < ntimers; n++)
        wr(REG_TIMER_CFG(n), rd(REG_TIMER_CFG(n)) & ~(uint64_t)(TN_INT_ENABLE | TN_FSB_ENABLE));
    wr(REG_CONFIG, (rd(REG_CONFIG) & ~(uint64_t)CONFIG_LEGACY) | CONFIG_ENABLE);
    return true;
}

bool hpet_present(void)
{
    return base != NULL;
}
uint64_t hpet_hz(void)
{
    return hz;
}
uint64_t hpet_base(void)
{
    return (uint64_t)base;
}
unsigned hpet_oneshot_timer(void)
{
    return wd_timer;
}

uint64_t hpet_counter(void)
{
    return rd(REG_COUNTER) & mask;
}

uint64_t hpet_since(uint64_t start)
{
    return (hpet_counter() - start) & mask;
}

int hpet_oneshot_setup(void)
{
    if (!base)
        return -1;
    /* The highest routable input wins: inputs 16 and up are PCI lines nothing here uses,
     * while 0-15 may carry a legacy device that firmware left running. */
    int best = -1;
    for (unsigned n = 0; n < ntimers; n++) {
        uint32_t routes = (uint32_t)(rd(REG_TIMER_CFG(n)) >> TN_ROUTE_CAP_SHIFT);
        for (int gsi = 31; gsi >= 0; gsi--)
            if ((routes & (1u << gsi)) && ioapic_has_gsi((unsigned)gsi) && gsi > best) {
                best = gsi;
                wd_timer = n;
                break;
            }
    }
    if (best < 0)
        return -1;
    uint64_t cfg = rd(REG_TIMER_CFG(wd_timer));
    cfg &= ~(uint64_t)(TN_LEVEL | TN_INT_ENABLE | TN_PERIODIC | TN_ROUTE_MASK | TN_FSB_ENABLE |
                       TN_32BIT_MODE);
    if (mask != UINT64_MAX)
        cfg |= TN_32BIT_MODE;
    cfg |= (uint64_t)best << TN_ROUTE_SHIFT; /* edge, one-shot: NMI delivery needs an edge */
    wd_cfg = cfg;
    wr(REG_TIMER_CFG(wd_timer), wd_cfg);
    return best;
}

void hpet_oneshot_arm(uint64_t ticks)
{
    wr(REG_TIMER_CFG(wd_timer), wd_cfg);
    /* The comparator matches on equality: a deadline the counter already passed would only
     * come round after a wrap, so the caller arms well ahead. */
    wr(REG_TIMER_CMP(wd_timer), (hpet_counter() + ticks) & mask);
    wr(REG_TIMER_CFG(wd_timer), wd_cfg | TN_INT_ENABLE);
}

uint64_t hpet_max_oneshot(void)
{
    return mask / 2;
}

void hpet_oneshot_disarm(void)
{
    wr(REG_TIMER_CFG(wd_timer), wd_cfg);
}
