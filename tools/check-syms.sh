#!/bin/sh
# Proves that embedding the symbol table moved no symbol: every symbol of the first link must
# have the same address in the final image (_kernel_end, which ends the table itself, aside);
# and that the table tools/mksyms.sh makes holds every address it should (one entry for each
# address of a text, data or read-only symbol).
# Usage: check-syms.sh NM pass1.elf final.elf
nm=$1 pass1=$2 final=$3
a=$(mktemp) b=$(mktemp)
trap 'rm -f "$a" "$b"' EXIT
"$nm" -n "$pass1" | awk '$2 ~ /^[TtDdRrBb]$/ && $3 !~ /^(\.L|\$)/ {print "0x" $1}' | uniq > "$a"
"$nm" -n -S "$pass1" | sh "$(dirname "$0")/mksyms.sh" |
    awk '/^ksym_addrs:/ {f = 1; next} /^ksym_sizes:/ {f = 0} f {print $2}' > "$b"
if ! cmp -s "$a" "$b"; then
    echo "check-syms: the symbol table leaves out addresses or adds some:" >&2
    diff "$a" "$b" | head -20 >&2
    exit 1
fi
"$nm" -n "$pass1" | awk '$3 !~ /^(ksym_|_kernel_end$)/ {print $1, $3}' | sort > "$a"
"$nm" -n "$final" | awk '$3 !~ /^(ksym_|_kernel_end$)/ {print $1, $3}' | sort > "$b"
if ! cmp -s "$a" "$b"; then
    echo "check-syms: the symbol table moved symbols between the two links:" >&2
    diff "$a" "$b" | head -20 >&2
    exit 1
fi
