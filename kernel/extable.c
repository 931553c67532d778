#include "kernel/extable.h"

extern const struct extable_entry __ex_table_start[], __ex_table_end[];

uint64_t extable_lookup(uint64_t rip)
{
    /* The table is short (a handful of probes); a linear scan keeps it obviously right. */
    for (const struct extable_entry *e = __ex_table_start; e < __ex_table_end; e++)
        if (e->insn == rip)
            return e->fixup;
    return 0;
}
