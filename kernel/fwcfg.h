/*
 * QEMU's firmware configuration device (fw_cfg, I/O ports 0x510/0x511). The runner passes
 * `-fw_cfg name=opt/btsx/cmdline,string=...` so that ISO boots get a command line without
 * editing grub.cfg; the kernel appends it to the loader's command line.
 */
#ifndef BTSX_KERNEL_FWCFG_H
#define BTSX_KERNEL_FWCFG_H

#include <stddef.h>

#define FWCFG_CMDLINE_FILE "opt/btsx/cmdline"

/* Copies the named file (NUL-terminated, truncated to len-1) and returns its length, or a
 * negative error when there is no fw_cfg device or no such file. Only call under QEMU. */
int fwcfg_read_file(const char *name, char *buf, size_t len);

#endif
