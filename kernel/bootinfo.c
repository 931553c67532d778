#include "kernel/bootinfo.h"

#include <stddef.h>

#include "boot/layout.h"
#include "kernel/errno.h"
#include "kernel/string.h"

struct boot_info boot_info;

/* Multiboot1 information (Multiboot Specification 0.6.96, section 3.3). */
#define MB1_INFO_CMDLINE (1u << 2)
#define MB1_INFO_MMAP    (1u << 6)
struct mb1_info {
    uint32_t flags, mem_lower, mem_upper, boot_device, cmdline, mods_count, mods_addr;
    uint32_t syms[4];
    uint32_t mmap_length, mmap_addr;
} __attribute__((packed));
struct mb1_mmap_entry {
    uint32_t size; /* of the rest of the entry */
    uint64_t base, len;
    uint32_t type;
} __attribute__((packed));

/* Multiboot2 information (Multiboot2 Specification 1.0, section 3.6). */
#define MB2_TAG_END         0
#define MB2_TAG_CMDLINE     1
#define MB2_TAG_MODULE      3
#define MB2_TAG_MMAP        6
#define MB2_TAG_FRAMEBUFFER 8
#define MB2_TAG_EFI32       11
#define MB2_TAG_EFI64       12
#define MB2_TAG_ACPI_OLD    14 /* a copy of the ACPI 1.0 RSDP */
#define MB2_TAG_ACPI_NEW    15 /* a copy of the ACPI 2.0+ RSDP */
#define MB2_TAG_ALIGN       8
#define MB2_FB_TYPE_RGB     1
#define MB2_FB_TYPE_TEXT    2
struct mb2_tag {
    uint32_t type, size;
};
struct mb2_mmap {
    struct mb2_tag tag;
    uint32_t entry_size, entry_version;
};
struct mb2_mmap_entry {
    uint64_t base, len;
    uint32_t type, reserved;
};
struct mb2_module {
    struct mb2_tag tag;
    uint32_t start, end;
};
struct mb2_fb {
    struct mb2_tag tag;
    uint64_t addr;
    uint32_t pitch, width, height;
    uint8_t bpp, type;
    uint16_t reserved;
    uint8_t red_pos, red_size, green_pos, green_size, blue_pos, blue_size;
} __attribute__((packed));

#define MMAP_TYPE_AVAILABLE 1
#define MB2_INFO_MAX_SIZE   (1u << 20) /* anything larger is not a real information block */

const char *boot_path_name(enum boot_path p)
{
    static const char *const names[] = {"direct", "bios", "uefi"};
    return names[p];
}

static void add_range(struct mem_range *arr, unsigned *n, uint64_t base, uint64_t len)
{
    if (len == 0)
        return;
    if (*n >= BOOTINFO_MAX_RANGES) {
        boot_info.dropped++;
        return;
    }
    arr[(*n)++] = (struct mem_range){base, len};
}

static void add_mmap_entry(uint64_t base, uint64_t len, uint32_t type)
{
    if (type == MMAP_TYPE_AVAILABLE)
        add_range(boot_info.usable, &boot_info.nusable, base, len);
    else
        add_range(boot_info.reserved, &boot_info.nreserved, base, len);
}

static void set_cmdline(const char *s)
{
    if (strlcpy(boot_info.cmdline, s, sizeof(boot_info.cmdline)) >= sizeof(boot_info.cmdline))
        boot_info.cmdline_truncated = true;
}

/* A multiboot2 command-line tag's string, read only inside the tag (len bytes): a loader that
 * left out the NUL must not make us read the next tag, or past the block, as text. */
static void set_cmdline_bounded(const char *s, size_t len)
{
    size_t n = strnlen(s, len);
    if (n >= sizeof(boot_info.cmdline)) {
        n = sizeof(boot_info.cmdline) - 1;
        boot_info.cmdline_truncated = true;
    }
    memcpy(boot_info.cmdline, s, n);
    boot_info.cmdline[n] = '\0';
}

/* The fixed part each tag type we read must have; 0 for the types read only by their size. */
static uint32_t mb2_tag_min_size(uint32_t type)
{
    switch (type) {
    case MB2_TAG_MODULE:
        return sizeof(struct mb2_module);
    case MB2_TAG_MMAP:
        return sizeof(struct mb2_mmap);
    case MB2_TAG_FRAMEBUFFER: /* the colour fields only for RGB: checked there */
        return offsetof(struct mb2_fb, red_pos);
    default:
        return 0;
    }
}

static int parse_mb1(const struct mb1_info *mi, const char **why)
{
    boot_info.path = BOOT_DIRECT;
    add_range(boot_info.loader, &boot_info.nloader, (uint64_t)mi, sizeof(*mi));
    if (mi->flags & MB1_INFO_CMDLINE) {
        const char *s = (const char *)(uint64_t)mi->cmdline;
        /* Multiboot1 loaders (QEMU, GRUB) put the image path first: it is not an option. */
        const char *args = s;
        while (*args && *args != ' ')
            args++;
        while (*args == ' ')
            args++;
        set_cmdline(args);
        add_range(boot_info.loader, &boot_info.nloader, mi->cmdline, strlen(s) + 1);
    }
    if (!(mi->flags & MB1_INFO_MMAP)) {
        *why = "multiboot1 loader gave no memory map (flags bit 6 clear)";
        return E_INVAL;
    }
    uint64_t p = mi->mmap_addr, end = p + mi->mmap_length;
    add_range(boot_info.loader, &boot_info.nloader, p, mi->mmap_length);
    while (p + sizeof(struct mb1_mmap_entry) <= end) {
        const struct mb1_mmap_entry *e = (const void *)p;
        if (e->size < sizeof(*e) - sizeof(e->size)) {
            *why = "multiboot1 memory map entry too short";
            return E_INVAL;
        }
        add_mmap_entry(e->base, e->len, e->type);
        p += e->size + sizeof(e->size);
    }
    return 0;
}

static void parse_mb2_fb(const struct mb2_fb *t)
{
    boot_info.fb = (struct fb_info){
        .base = t->addr,
        .pitch = t->pitch,
        .width = t->width,
        .height = t->height,
        .bpp = t->bpp,
    };
    if (t->type == MB2_FB_TYPE_TEXT) {
        boot_info.screen = SCREEN_KIND_TEXT;
    } else if (t->type == MB2_FB_TYPE_RGB) {
        boot_info.screen = SCREEN_KIND_RGB;
        boot_info.fb.red_pos = t->red_pos;
        boot_info.fb.red_size = t->red_size;
        boot_info.fb.green_pos = t->green_pos;
        boot_info.fb.green_size = t->green_size;
        boot_info.fb.blue_pos = t->blue_pos;
        boot_info.fb.blue_size = t->blue_size;
    }
}

static int parse_mb2(uint64_t info, const char **why)
{
    uint32_t total = *(const uint32_t *)info;
    if (total < 2 * sizeof(struct mb2_tag) || total > MB2_INFO_MAX_SIZE) {
        *why = "multiboot2 information block has an impossible size";
        return E_INVAL;
    }
    boot_info.path = BOOT_BIOS;
    add_range(boot_info.loader, &boot_info.nloader, info, total);
    bool have_mmap = false;
    uint64_t p = info + MB2_TAG_ALIGN, end = info + total;
    while (p + sizeof(struct mb2_tag) <= end) {
        const struct mb2_tag *t = (const void *)p;
        if (t->type == MB2_TAG_END)
            break;
        if (t->size < sizeof(*t) || p + t->size > end) {
            *why = "multiboot2 tag runs past the information block";
            return E_INVAL;
        }
        if (t->size < mb2_tag_min_size(t->type)) {
            *why = "multiboot2 module, memory map or framebuffer tag shorter than its fields";
            return E_INVAL;
        }
        switch (t->type) {
        case MB2_TAG_CMDLINE:
            set_cmdline_bounded((const char *)(t + 1), t->size - sizeof(*t));
            break;
        case MB2_TAG_MODULE: {
            const struct mb2_module *m = (const void *)t;
            add_range(boot_info.loader, &boot_info.nloader, m->start, m->end - m->start);
            break;
        }
        case MB2_TAG_MMAP: {
            const struct mb2_mmap *m = (const void *)t;
            /* The specification makes entry_size a multiple of 8: the entries are read as
             * 64-bit fields. */
            if (m->entry_size < sizeof(struct mb2_mmap_entry) || m->entry_size % 8) {
                *why = "multiboot2 memory map entries too small or not 8-byte multiples";
                return E_INVAL;
            }
            for (uint64_t e = p + sizeof(*m); e + m->entry_size <= p + t->size;
                 e += m->entry_size) {
                const struct mb2_mmap_entry *me = (const void *)e;
                add_mmap_entry(me->base, me->len, me->type);
            }
            have_mmap = true;
            break;
        }
        case MB2_TAG_FRAMEBUFFER:
            if (((const struct mb2_fb *)t)->type == MB2_FB_TYPE_RGB &&
                t->size < sizeof(struct mb2_fb)) {
                *why = "multiboot2 RGB framebuffer tag without its colour fields";
                return E_INVAL;
            }
            parse_mb2_fb((const void *)t);
            break;
        case MB2_TAG_ACPI_OLD:
        case MB2_TAG_ACPI_NEW: {
            /* The newer RSDP wins: it may point at an XSDT. */
            size_t len = t->size - sizeof(*t);
            if (len > BOOTINFO_RSDP_MAX)
                len = BOOTINFO_RSDP_MAX;
            if (t->type == MB2_TAG_ACPI_NEW || boot_info.rsdp_len == 0) {
                memcpy(boot_info.rsdp, t + 1, len);
                boot_info.rsdp_len = (unsigned)len;
            }
            break;
        }
        case MB2_TAG_EFI32:
        case MB2_TAG_EFI64:
            boot_info.path = BOOT_UEFI;
            break;
        default:
            break;
        }
        p += (t->size + MB2_TAG_ALIGN - 1) & ~(uint64_t)(MB2_TAG_ALIGN - 1);
    }
    if (!have_mmap) {
        *why = "multiboot2 loader gave no memory map tag";
        return E_INVAL;
    }
    return 0;
}

int bootinfo_parse(uint32_t magic, uint64_t info, const char **why)
{
    int err;
    if (magic == MB1_BOOTLOADER_MAGIC) {
        err = parse_mb1((const struct mb1_info *)info, why);
        /* qemu -kernel leaves VGA text mode on; there is no framebuffer tag to say so. */
        if (!err) {
            boot_info.screen = SCREEN_KIND_TEXT;
            boot_info.fb = (struct fb_info){.base = 0xB8000, .width = 80, .height = 25};
        }
    } else if (magic == MB2_BOOTLOADER_MAGIC) {
        err = parse_mb2(info, why);
    } else {
        *why = "not started by a multiboot loader (bad magic in EAX)";
        return E_INVAL;
    }
    if (!err && boot_info.nusable == 0) {
        *why = "the memory map lists no usable RAM";
        return E_INVAL;
    }
    return err;
}
