#!/bin/sh
# Proves that no two C files of the given layers call each other, directly or through others
# of them: each layer's files form a hierarchy, so a file can be read (and changed) knowing
# only the ones below it. A file calls another when it uses a function (nm type T) that the
# other defines. Assembly is left out: an entry stub calls C and C takes the stub's address
# (an IDT gate, IA32_LSTAR), which is not a loop of calls.
# Usage: check-loops.sh NM OBJDIR OBJ... (OBJDIR/FILE.o names FILE in the messages)
nm=$1 objdir=$2
shift 2
[ $# -gt 0 ] || { echo "check-loops: no objects given" >&2; exit 1; }
objs="$*"
for o in $objs; do
    "$nm" "$o" | awk -v f="${o#"$objdir"/}" '$1 == "U" { print "U", f, $2 } $2 == "T" { print "T", f, $3 }'
done | awk '
function name(f) { sub(/\.o$/, "", f); return f }
$1 == "T" { def[$3] = name($2); files[name($2)] = 1 }
$1 == "U" { n++; uf[n] = name($2); us[n] = $3; files[name($2)] = 1 }
END {
    for (i = 1; i <= n; i++)
        if ((us[i] in def) && def[us[i]] != uf[i]) {
            edge[uf[i], def[us[i]]] = 1
            why[uf[i], def[us[i]]] = us[i]
        }
    for (k in files) for (a in files) if (edge[a, k]) for (b in files) if (edge[k, b]) edge[a, b] = 1
    bad = 0
    for (a in files) {
        if (!edge[a, a] || done[a]) continue
        line = ""
        for (b in files)
            if (edge[a, b] && edge[b, a]) {
                done[b] = 1
                line = line " " b
                for (c in files)
                    if (edge[b, c] && edge[c, a] && ((b, c) in why)) line = line " (calls " c ": " why[b, c] ")"
            }
        print "check-loops: these files call each other:" line > "/dev/stderr"
        bad = 1
    }
    exit bad
}'
