#!/bin/sh
# Turns `nm -n -S` output of the first link into the assembly of the embedded symbol table.
# Usage: nm -n -S btsx.elf | tools/mksyms.sh > syms.S
# Only text, data and read-only symbols are kept (types T t D d R r B b). Where several names
# share an address one is kept, so lookups are unambiguous: the first in nm's order that does
# not end in "_end" (an end label names what comes before it, not what starts there). Each
# entry has the size of the largest function or object starting there (boot/asm.h gives the
# assembly ones theirs); a label (no size) inside a function or object reaches to that one's
# end, and a label outside all of them has size 0: it reaches to the next entry.
awk 'function hex(s,   i, v) {
    v = 0
    for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
    return v
}
BEGIN { n = 0; encl = 0 }
{ if (NF == 4) { sz = $2; $2 = $3; $3 = $4 } else sz = "" }
$2 ~ /^[TtDdRrBb]$/ && $3 !~ /^(\.L|\$)/ {
    # Addresses compare as strings: awk takes a field such as 000000000017e530 for a number
    # (17e530, which overflows to infinity), and two such addresses would compare equal.
    if (n > 0 && addr[n - 1] "" == $1 "") {
        if (name[n - 1] ~ /_end$/ && $3 !~ /_end$/)
            name[n - 1] = $3
        if (sz != "" && (size[n - 1] == "" || hex(sz) > hex(size[n - 1])))
            size[n - 1] = sz
        next
    }
    addr[n] = $1; name[n] = $3; size[n] = sz; n++
}
END {
    # Sizes as numbers; labels take the rest of the sized entry around them.
    for (i = 0; i < n; i++) {
        a = hex(addr[i])
        if (size[i] != "" && hex(size[i]) > 0) {
            s = hex(size[i])
            if (a + s > encl) encl = a + s
        } else
            s = a < encl ? encl - a : 0
        size[i] = sprintf("%x", s)
    }
}
END {
    print "\t.section .ksyms, \"a\""
    print "\t.balign 8"
    print "\t.globl ksym_count, ksym_addrs, ksym_sizes, ksym_name_offsets, ksym_names"
    print "ksym_count:\n\t.quad " n
    print "ksym_addrs:"
    for (i = 0; i < n; i++) print "\t.quad 0x" addr[i]
    print "ksym_sizes:"
    for (i = 0; i < n; i++) print "\t.quad 0x" size[i]
    print "ksym_name_offsets:"
    off = 0
    for (i = 0; i < n; i++) { print "\t.long " off; off += length(name[i]) + 1 }
    print "ksym_names:"
    for (i = 0; i < n; i++) print "\t.asciz \"" name[i] "\""
}'
