/*
 * Boot headers. Multiboot2 (GRUB, BIOS and UEFI) asks for the command line, the memory map
 * and, optionally, a framebuffer; multiboot1 lets `qemu -kernel` load the ELF32 copy.
 * Both must sit near the start of the image: multiboot1 within 8 KiB, multiboot2 within 32 KiB.
 */
#include "boot/asm.h"

#define MB1_MAGIC           0x1BADB002
#define MB1_FLAG_ALIGN      (1 << 0)    /* page-align modules */
#define MB1_FLAG_MEMINFO    (1 << 1)    /* memory map please */
#define MB1_FLAGS           (MB1_FLAG_ALIGN | MB1_FLAG_MEMINFO)

#define MB2_MAGIC           0xE85250D6
#define MB2_ARCH_I386       0
#define MB2_TAG_END         0
#define MB2_TAG_INFO_REQ    1
#define MB2_INFO_CMDLINE    1
#define MB2_INFO_MMAP       6
#define MB2_INFO_FB         8

    .section .multiboot, "a"
    .balign 4
LOCAL_DATA(mb1_header)
    .long MB1_MAGIC
    .long MB1_FLAGS
    .long -(MB1_MAGIC + MB1_FLAGS)
END(mb1_header)

    .balign 8
LOCAL_DATA(mb2_header)
    .long MB2_MAGIC
    .long MB2_ARCH_I386
    .long mb2_header_end - mb2_header
    .long -(MB2_MAGIC + MB2_ARCH_I386 + (mb2_header_end - mb2_header))

    .balign 8
mb2_info_req:
    .short MB2_TAG_INFO_REQ
    .short 0                            /* required: we cannot run without these */
    .long mb2_info_req_end - mb2_info_req
    .long MB2_INFO_CMDLINE
    .long MB2_INFO_MMAP
    .long MB2_INFO_FB
mb2_info_req_end:

    /*
     * The framebuffer is asked for as information only, without a framebuffer header tag:
     * with that tag GRUB switches a BIOS machine to a graphics mode, without it BIOS GRUB
     * keeps VGA text and UEFI GRUB (which has no text mode) still sets a linear framebuffer
     * and describes it in the framebuffer information tag.
     */

    .balign 8
    .short MB2_TAG_END
    .short 0
    .long 8
mb2_header_end:
END(mb2_header)
