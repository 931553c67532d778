/* libFuzzer target: the multiboot2 information parser, kernel/bootinfo.c.
 *
 * The input is the information block, copied into an allocation of exactly its size with its
 * total_size field set to that size (a loader's block is as long as it says; the size checks
 * get their own case from inputs shorter than a block's header). Whatever the tags say, the
 * parser must read nothing outside the block (AddressSanitizer), return 0 or an error with a
 * reason, and leave boot_info within its arrays' bounds with a terminated command line.
 */
#include <stdbool.h>

#include "boot/layout.h"
#include "kernel/bootinfo.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Multiboot2 puts the block on an 8-byte boundary: malloc's alignment is at least that. */
    uint8_t *block = malloc(size < 8 ? 8 : size);
    if (!block)
        abort();
    memset(block, 0, 8);
    memcpy(block, data, size);
    uint32_t total = (uint32_t)size; /* under 8: the impossible-size case */
    memcpy(block, &total, sizeof(total));

    memset(&boot_info, 0, sizeof(boot_info));
    const char *why = NULL;
    int rc = bootinfo_parse(MB2_BOOTLOADER_MAGIC, (uint64_t)(uintptr_t)block, &why);
    fz_check(rc == 0 || (rc < 0 && why && why[0]), "rc %d without a reason", rc);
    fz_check(boot_info.nusable <= BOOTINFO_MAX_RANGES &&
                 boot_info.nreserved <= BOOTINFO_MAX_RANGES &&
                 boot_info.nloader <= BOOTINFO_MAX_RANGES,
             "range counts %u %u %u", boot_info.nusable, boot_info.nreserved, boot_info.nloader);
    fz_check(boot_info.rsdp_len <= BOOTINFO_RSDP_MAX, "rsdp_len %u", boot_info.rsdp_len);
    fz_check(memchr(boot_info.cmdline, '\0', sizeof(boot_info.cmdline)), "cmdline unterminated");
    if (rc == 0)
        fz_check(boot_info.nusable > 0, "accepted without usable RAM");
    free(block);
    return 0;
}
