/*
 * What the loader told us, copied out of its information block (multiboot1 from `qemu -kernel`,
 * multiboot2 from GRUB) into one loader-independent structure.
 */
#ifndef BTSX_KERNEL_BOOTINFO_H
#define BTSX_KERNEL_BOOTINFO_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/fbcon.h"
#include "kernel/frames.h"

enum boot_path { BOOT_DIRECT, BOOT_BIOS, BOOT_UEFI };

#define BOOTINFO_MAX_RANGES  64
#define BOOTINFO_CMDLINE_MAX 1024
#define BOOTINFO_RSDP_MAX    36 /* an ACPI 2.0+ RSDP */

enum screen_kind { SCREEN_KIND_NONE, SCREEN_KIND_TEXT, SCREEN_KIND_RGB };

struct boot_info {
    enum boot_path path;
    char cmdline[BOOTINFO_CMDLINE_MAX];
    bool cmdline_truncated;
    struct mem_range usable[BOOTINFO_MAX_RANGES];
    unsigned nusable;
    struct mem_range reserved[BOOTINFO_MAX_RANGES]; /* firmware-reserved RAM, ACPI... */
    unsigned nreserved;
    struct mem_range loader[BOOTINFO_MAX_RANGES]; /* info block, modules, strings */
    unsigned nloader;
    unsigned dropped; /* map entries beyond our arrays */
    enum screen_kind screen;
    struct fb_info fb; /* text: base/width/height in chars */
    /* The loader's copy of the ACPI RSDP (multiboot2 tags 14/15), rsdp_len bytes; 0 = none. */
    uint8_t rsdp[BOOTINFO_RSDP_MAX];
    unsigned rsdp_len;
};

extern struct boot_info boot_info;

/* Parses the loader's block; returns a negative error and a message for a wrong loader or a
 * missing/odd memory map (the caller reports it and stops). */
int bootinfo_parse(uint32_t magic, uint64_t info, const char **why);
const char *boot_path_name(enum boot_path p);

#endif
