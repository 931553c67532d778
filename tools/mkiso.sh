#!/bin/sh
# mkiso.sh ISODIR OUT.iso: the btsx ISO from a tree holding boot/btsx.elf and
# boot/grub/grub.cfg. Used by `make` (build/btsx.iso) and by tools/btsx-run (a per-run copy
# whose grub.cfg carries the run's command line, for machines without fw_cfg), so both are
# built the same way. Only the GRUB modules grub.cfg uses, and no fonts, locales or themes,
# so that the ISO stays within ISO_LIMIT_KIB; an ISO over it is an error. The kernel goes in
# without its DWARF sections (GRUB loads only the segments; tools symbolise from build/btsx.elf,
# the kernel from its embedded table), which are most of the file.
# mkiso.sh --limit-kib prints the limit (tools/bench.py reports against it).
set -eu
# The one definition of the ISO size limit: it must fit the small USB sticks and CD images
# it is written to.
ISO_LIMIT_KIB=6144
if [ "$*" = --limit-kib ]; then echo "$ISO_LIMIT_KIB"; exit 0; fi
[ $# -eq 2 ] || { echo "usage: $0 ISODIR OUT.iso | $0 --limit-kib" >&2; exit 2; }
modules="multiboot2 normal iso9660 part_msdos part_gpt all_video serial terminal test echo smbios"
${OBJCOPY:-objcopy} --strip-debug "$1/boot/btsx.elf"
log="$2.mkrescue.log"
if ! grub-mkrescue -o "$2" "$1" --compress=xz --fonts= --locales= --themes= \
        --install-modules="$modules" --modules="$modules" >"$log" 2>&1; then
    cat "$log" >&2
    exit 1
fi
rm -f "$log"
size=$(stat -c %s "$2")
echo "ISO $2: $((size / 1024)) KiB (limit $ISO_LIMIT_KIB KiB)"
if [ "$size" -gt $((ISO_LIMIT_KIB * 1024)) ]; then
    echo "mkiso: $2 is larger than $ISO_LIMIT_KIB KiB" >&2
    exit 1
fi
