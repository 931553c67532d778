#!/bin/sh
# check-calls.sh NM PREFIX OBJECT...: the objects' references to each other must form no loop.
# A module is an object's source path without its extension, so ds/model.c and ds/model.S
# are one module (the model's C and its register-write stubs call each other by design).
# An edge A -> B is any symbol A leaves undefined and B defines: a call or a data reference.
# PREFIX is stripped from the object paths for the report (the build directory).
# Prints the edges, and fails naming a loop if there is one.
set -eu
export LC_ALL=C
nm=$1
prefix=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for o in "$@"; do
    m=${o#"$prefix"}
    m=${m%.o}
    m=${m%.[cS]}
    "$nm" "$o" | awk -v m="$m" 'NF == 3 && $2 ~ /^[TDBRC]$/ { print $3, m }' >>"$tmp/defs"
    "$nm" -u "$o" | awk -v m="$m" '{ print $NF, m }' >>"$tmp/uses"
done
sort -u "$tmp/defs" >"$tmp/defs.s"
sort -u "$tmp/uses" >"$tmp/uses.s"
# symbol user / symbol definer -> "user definer", self-references dropped
join "$tmp/uses.s" "$tmp/defs.s" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$tmp/edges"
# every module appears, even one with no edges
cut -d' ' -f2 "$tmp/defs.s" | sort -u | awk '{ print $1, $1 }' >>"$tmp/edges"
if ! tsort "$tmp/edges" >"$tmp/order" 2>"$tmp/err"; then
    echo "check-calls: the references between these files loop:" >&2
    sed -n 's/^tsort: //p' "$tmp/err" | grep -v "input contains a loop" >&2
    echo "edges (user -> definer):" >&2
    awk '$1 != $2 { print "  " $1 " -> " $2 }' "$tmp/edges" >&2
    exit 1
fi
awk '$1 != $2 { print "  " $1 " -> " $2 }' "$tmp/edges"
