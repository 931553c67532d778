/*
 * A small ACPI table finder: the RSDP (the loader's copy, else a search of the BIOS read-only
 * area), then the RSDT or XSDT, then a table by signature, every checksum verified. Tables are
 * read in place through the identity map of the first 4 GiB; a table above it is not found.
 */
#ifndef BTSX_KERNEL_ACPI_H
#define BTSX_KERNEL_ACPI_H

#include <stdint.h>

struct acpi_header {
    char signature[4];
    uint32_t length; /* of the whole table, header included */
    uint8_t revision, checksum;
    char oem_id[6], oem_table_id[8];
    uint32_t oem_revision, creator_id, creator_revision;
} __attribute__((packed));

/* Finds the RSDP; call once, after bootinfo_parse(). */
void acpi_init(void);
/* Where the RSDP came from ("multiboot2", "bios-scan"), or NULL when there is none. */
const char *acpi_rsdp_source(void);
/* The first table with this signature whose checksum is right, or NULL. */
const struct acpi_header *acpi_find_table(const char signature[4]);

#endif
