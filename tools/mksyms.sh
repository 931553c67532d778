#!/bin/sh
# Turns `nm -n` output of the first link into the assembly of the embedded symbol table.
# Usage: nm -n btsx.elf | tools/mksyms.sh > syms.S
# Only text, data and read-only symbols are kept (types T t D d R r B b). Where several names
# share an address one is kept, so lookups are unambiguous: the first in nm's order that does
# not end in "_end" (an end label names what comes before it, not what starts there).
awk 'BEGIN { n = 0 }
$2 ~ /^[TtDdRrBb]$/ && $3 !~ /^(\.L|\$)/ {
    if (n > 0 && addr[n - 1] == $1) {
        if (name[n - 1] ~ /_end$/ && $3 !~ /_end$/)
            name[n - 1] = $3
        next
    }
    addr[n] = $1; name[n] = $3; n++
}
END {
    print "\t.section .ksyms, \"a\""
    print "\t.balign 8"
    print "\t.globl ksym_count, ksym_addrs, ksym_name_offsets, ksym_names"
    print "ksym_count:\n\t.quad " n
    print "ksym_addrs:"
    for (i = 0; i < n; i++) print "\t.quad 0x" addr[i]
    print "ksym_name_offsets:"
    off = 0
    for (i = 0; i < n; i++) { print "\t.long " off; off += length(name[i]) + 1 }
    print "ksym_names:"
    for (i = 0; i < n; i++) print "\t.asciz \"" name[i] "\""
}'
