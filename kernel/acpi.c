#include "kernel/acpi.h"

#include <stdbool.h>

#include "kernel/bootinfo.h"
#include "kernel/string.h"

/* ACPI Specification, 5.2.5 (RSDP) and 5.2.7/5.2.8 (RSDT/XSDT). */
struct rsdp {
    char signature[8]; /* "RSD PTR " */
    uint8_t checksum;  /* of the first 20 bytes */
    char oem_id[6];
    uint8_t revision; /* 0: ACPI 1.0, only the first 20 bytes exist */
    uint32_t rsdt;
    uint32_t length; /* revision >= 2 */
    uint64_t xsdt;
    uint8_t ext_checksum; /* of all `length` bytes */
    uint8_t reserved[3];
} __attribute__((packed));

#define RSDP_V1_LEN      20
#define RSDP_SIG         "RSD PTR "
#define BIOS_AREA_START  0xE0000 /* the RSDP search area of a legacy BIOS */
#define BIOS_AREA_END    0x100000
#define RSDP_ALIGN       16
#define MAPPED_LIMIT     0x100000000ULL /* identity-mapped by the boot code */
#define TABLE_MAX_LENGTH (1u << 20)     /* larger is not a real table */

static struct rsdp rsdp;
static const char *rsdp_source;

static bool sum_ok(const void *p, uint64_t len)
{
    uint8_t s = 0;
    for (uint64_t i = 0; i < len; i++)
        s += ((const uint8_t *)p)[i];
    return s == 0;
}

static bool rsdp_ok(const struct rsdp *r, uint64_t avail)
{
    if (avail < RSDP_V1_LEN || memcmp(r->signature, RSDP_SIG, 8) != 0 || !sum_ok(r, RSDP_V1_LEN))
        return false;
    if (r->revision < 2)
        return true;
    return avail >= sizeof(*r) && r->length >= sizeof(*r) && sum_ok(r, sizeof(*r));
}

void acpi_init(void)
{
    const struct rsdp *found = NULL;
    if (boot_info.rsdp_len && rsdp_ok((const void *)boot_info.rsdp, boot_info.rsdp_len)) {
        found = (const void *)boot_info.rsdp;
        rsdp_source = "multiboot2";
    } else {
        /* The EBDA's first KiB is the other legacy place, but its segment sits in page 0,
         * which stays unmapped to catch NULL; firmware in practice uses this area. */
        for (uint64_t a = BIOS_AREA_START; a < BIOS_AREA_END && !found; a += RSDP_ALIGN)
            if (rsdp_ok((const void *)a, BIOS_AREA_END - a))
                found = (const void *)a;
        rsdp_source = found ? "bios-scan" : NULL;
    }
    if (found)
        memcpy(&rsdp, found, found->revision >= 2 ? sizeof(rsdp) : RSDP_V1_LEN);
}

const char *acpi_rsdp_source(void)
{
    return rsdp_source;
}

static const struct acpi_header *table_at(uint64_t pa)
{
    if (pa == 0 || pa + sizeof(struct acpi_header) > MAPPED_LIMIT)
        return NULL;
    const struct acpi_header *h = (const void *)pa;
    if (h->length < sizeof(*h) || h->length > TABLE_MAX_LENGTH || pa + h->length > MAPPED_LIMIT ||
        !sum_ok(h, h->length))
        return NULL;
    return h;
}

const struct acpi_header *acpi_find_table(const char signature[4])
{
    if (!rsdp_source)
        return NULL;
    /* The XSDT (64-bit entries) supersedes the RSDT when both exist. */
    bool x = rsdp.revision >= 2 && rsdp.xsdt;
    const struct acpi_header *root = table_at(x ? rsdp.xsdt : rsdp.rsdt);
    if (!root && x) {
        x = false;
        root = table_at(rsdp.rsdt);
    }
    if (!root || memcmp(root->signature, x ? "XSDT" : "RSDT", 4) != 0)
        return NULL;
    unsigned width = x ? 8 : 4;
    const uint8_t *e = (const uint8_t *)(root + 1);
    unsigned n = (root->length - sizeof(*root)) / width;
    for (unsigned i = 0; i < n; i++) {
        uint64_t pa = 0;
        memcpy(&pa, e + i * width, width); /* entries are unaligned in the XSDT */
        const struct acpi_header *h = table_at(pa);
        if (h && memcmp(h->signature, signature, 4) == 0)
            return h;
    }
    return NULL;
}
