#include "kernel/ioapic.h"

#include <stddef.h>

#include "kernel/acpi.h"

/* ACPI Specification 5.2.12 (MADT); the I/O APIC datasheet (82093AA) for the registers. */
#define MADT_IOAPIC       1
#define IOAPIC_DEFAULT    0xFEC00000u
#define IOREGSEL          0x00
#define IOWIN             0x10
#define REG_VERSION       0x01
#define REG_REDIR(n)      (0x10 + 2 * (n))
#define VERSION_MAX_SHIFT 16
#define REDIR_DM_NMI      (4u << 8)
#define REDIR_MASKED      (1u << 16)
#define REDIR_DEST_SHIFT  24 /* in the high word: physical APIC ID */
#define MAX_IOAPICS       8
#define MAX_INPUTS        240 /* the version register's field is 8 bits */

struct madt {
    struct acpi_header h;
    uint32_t lapic_addr, flags;
} __attribute__((packed));
struct madt_ioapic {
    uint8_t type, length, id, reserved;
    uint32_t addr, gsi_base;
} __attribute__((packed));

struct ioapic {
    volatile uint32_t *base;
    unsigned gsi_base, inputs;
};

static struct ioapic ioapics[MAX_IOAPICS];
static unsigned nioapics;
static const char *source;

static uint32_t reg_read(const struct ioapic *io, unsigned reg)
{
    io->base[IOREGSEL / 4] = reg;
    return io->base[IOWIN / 4];
}

static void reg_write(const struct ioapic *io, unsigned reg, uint32_t v)
{
    io->base[IOREGSEL / 4] = reg;
    io->base[IOWIN / 4] = v;
}

static void add(uint32_t addr, unsigned gsi_base)
{
    if (nioapics == MAX_IOAPICS)
        return;
    struct ioapic io = {(volatile uint32_t *)(uint64_t)addr, gsi_base, 0};
    uint32_t ver = reg_read(&io, REG_VERSION);
    /* A missing chip reads all ones (or zeros): no version byte of a real one. */
    if (ver == 0xFFFFFFFFu || (ver & 0xFF) == 0)
        return;
    io.inputs = ((ver >> VERSION_MAX_SHIFT) & 0xFF) + 1;
    if (io.inputs > MAX_INPUTS)
        return;
    ioapics[nioapics++] = io;
}

bool ioapic_init(void)
{
    const struct madt *m = (const void *)acpi_find_table("APIC");
    if (m) {
        const uint8_t *p = (const uint8_t *)(m + 1), *end = (const uint8_t *)m + m->h.length;
        while (p + 2 <= end && p[1] >= 2 && p + p[1] <= end) {
            const struct madt_ioapic *e = (const void *)p;
            if (e->type == MADT_IOAPIC && e->length >= sizeof(*e))
                add(e->addr, e->gsi_base);
            p += p[1];
        }
        source = "madt";
    } else {
        add(IOAPIC_DEFAULT, 0);
        source = "default";
    }
    for (unsigned i = 0; i < nioapics; i++)
        for (unsigned n = 0; n < ioapics[i].inputs; n++)
            reg_write(&ioapics[i], REG_REDIR(n), REDIR_MASKED);
    return nioapics > 0;
}

const char *ioapic_source(void)
{
    return source;
}

static const struct ioapic *find(unsigned gsi, unsigned *pin)
{
    for (unsigned i = 0; i < nioapics; i++)
        if (gsi >= ioapics[i].gsi_base && gsi < ioapics[i].gsi_base + ioapics[i].inputs) {
            *pin = gsi - ioapics[i].gsi_base;
            return &ioapics[i];
        }
    return NULL;
}

bool ioapic_has_gsi(unsigned gsi)
{
    unsigned pin;
    return find(gsi, &pin) != NULL;
}

void ioapic_route_nmi(unsigned gsi, uint32_t apic_id)
{
    unsigned pin;
    const struct ioapic *io = find(gsi, &pin);
    if (!io)
        return;
    /* NMI delivery must be edge-triggered; the vector field is ignored. Mask first so that a
     * half-written entry never delivers. */
    reg_write(io, REG_REDIR(pin), REDIR_MASKED);
    reg_write(io, REG_REDIR(pin) + 1, apic_id << REDIR_DEST_SHIFT);
    reg_write(io, REG_REDIR(pin), REDIR_DM_NMI | REDIR_MASKED);
}

static void set_mask(unsigned gsi, bool masked)
{
    unsigned pin;
    const struct ioapic *io = find(gsi, &pin);
    if (!io)
        return;
    uint32_t lo = reg_read(io, REG_REDIR(pin));
    reg_write(io, REG_REDIR(pin), masked ? lo | REDIR_MASKED : lo & ~REDIR_MASKED);
}

void ioapic_mask(unsigned gsi)
{
    set_mask(gsi, true);
}

void ioapic_unmask(unsigned gsi)
{
    set_mask(gsi, false);
}
