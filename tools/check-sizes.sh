#!/bin/sh
# Proves that every function and data object of the kernel image has a size, so that the
# embedded symbol table (tools/mksyms.sh) knows where each one ends:
#   - a FUNC or OBJECT symbol of size 0 fails (an assembly END() is missing);
#   - a symbol without a type in an executable section must lie inside a function or object,
#     or at its end if its name ends in "_end" (a LABEL() of boot/asm.h, a multiboot header's
#     inner label); one outside all of them is assembly declared without ENTRY()/END().
# Usage: check-sizes.sh READELF image.elf
readelf=$1 elf=$2
{ "$readelf" -SW "$elf"; echo "--symbols--"; "$readelf" -sW "$elf"; } | awk '
function hex(s,   i, v) {
    v = 0
    for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
    return v
}
BEGIN { nf = 0; nl = 0 }
/^--symbols--$/ { syms = 1; next }
!syms {
    # "  [ 2] .text PROGBITS addr off size es flags ...": mark the executable sections.
    if (match($0, /^ *\[ *[0-9]+\]/)) {
        idx = substr($0, RSTART, RLENGTH); gsub(/[^0-9]/, "", idx)
        rest = substr($0, RSTART + RLENGTH); split(rest, f, " ")
        if (f[7] ~ /X/) exec[idx] = 1
    }
    next
}
$1 ~ /^[0-9]+:$/ && NF >= 8 {
    # readelf -W prints sizes of 100000 and more in hex; gawk reads "0x..." + 0 as 0.
    addr = hex($2); size = $3 ~ /^0x/ ? hex(substr($3, 3)) : $3 + 0; type = $4; ndx = $7; name = $8
    if ((type == "FUNC" || type == "OBJECT") && size == 0) {
        printf "check-sizes: %s %s has size 0 (no END())\n", type, name > "/dev/stderr"; bad = 1
    }
    if (type == "FUNC" || type == "OBJECT") { fs[nf] = addr; fe[nf] = addr + size; nf++ }
    if (type == "NOTYPE" && (ndx in exec)) { la[nl] = addr; ln[nl] = name; nl++ }
}
END {
    for (i = 0; i < nl; i++) {
        inside = 0
        for (j = 0; j < nf && !inside; j++)
            if (la[i] >= fs[j] && (la[i] < fe[j] || (la[i] == fe[j] && ln[i] ~ /_end$/)))
                inside = 1
        if (!inside) {
            printf "check-sizes: %s is code outside every sized function or object (no ENTRY()/END())\n", ln[i] > "/dev/stderr"
            bad = 1
        }
    }
    exit bad
}'
