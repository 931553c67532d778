#!/bin/sh
# mkiso.sh ISODIR OUT.iso: the btsx ISO from a tree holding boot/btsx.elf and
# boot/grub/grub.cfg. Used by `make` (build/btsx.iso) and by tools/btsx-run (a per-run copy
# whose grub.cfg carries the run's command line, for machines without fw_cfg), so both are
# built the same way. Only the GRUB modules grub.cfg uses, and no fonts, locales or themes:
# the ISO must stay small enough for the size check in the Makefile.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 ISODIR OUT.iso" >&2; exit 2; }
modules="multiboot2 normal iso9660 part_msdos part_gpt all_video serial terminal test echo smbios"
log="$2.mkrescue.log"
if ! grub-mkrescue -o "$2" "$1" --compress=xz --fonts= --locales= --themes= \
        --install-modules="$modules" --modules="$modules" >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
fi
rm -f "$log"
