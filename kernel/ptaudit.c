/* Address-space rules, checked by a walk of the page tables (see kernel/ptaudit.h). */
#include "kernel/ptaudit.h"

#include <stdbool.h>

#include "kernel/errno.h"
#include "kernel/printf.h"

extern const char _kernel_start[], _kernel_end[];
extern const char boot_stack_guard[];

#define LEVELS       4
#define ENTRIES      512
#define HALF_ENTRIES 256 /* PML4 slots 256..511 map the upper, sign-extended half */

static const unsigned level_shift[LEVELS + 1] = {0, 12, 21, 30, 39};

static bool overlaps_kernel(uint64_t pa, uint64_t size)
{
    return pa < (uint64_t)_kernel_end && (uint64_t)_kernel_start < pa + size;
}

static void walk_table(const uint64_t *t, unsigned level, uint64_t va_base, bool w, bool u, bool nx,
                       struct pt_audit *out)
{
    for (unsigned i = 0; i < ENTRIES; i++) {
        uint64_t e = t[i];
        if (!(e & PTE_P))
            continue;
        uint64_t va = va_base + ((uint64_t)i << level_shift[level]);
        if (level == LEVELS && i >= HALF_ENTRIES)
            va |= ~0ULL << 48;
        bool ew = w && (e & PTE_W), eu = u && (e & PTE_U), enx = nx || (e & PTE_NX);
        if (level > 1 && !(e & PTE_PS)) {
            walk_table((const uint64_t *)(e & PTE_ADDR_MASK), level - 1, va, ew, eu, enx, out);
            continue;
        }
        uint64_t size = 1ULL << level_shift[level];
        uint64_t pa = e & PTE_ADDR_MASK & ~(size - 1);
        out->leaves++;
        if (ew && !enx && !out->wx++)
            out->first_wx = va;
        if (eu && overlaps_kernel(pa, size) && !out->user_kernel++)
            out->first_user_kernel = va;
    }
}

struct pt_audit pt_audit_walk(const struct addr_space *as)
{
    struct pt_audit a = {0};
    walk_table(as->pml4, LEVELS, 0, true, true, false, &a);
    return a;
}

static bool guard_mapped(const struct addr_space *as, uint64_t va, char *why, size_t why_len)
{
    if (!as_lookup(as, va))
        return false;
    ksnprintf(why, why_len, "the guard page at %#lx is mapped", va);
    return true;
}

int pt_audit_check(const struct addr_space *as, const uint64_t *guards, unsigned nguards, char *why,
                   size_t why_len)
{
    struct pt_audit a = pt_audit_walk(as);
    if (a.wx) {
        ksnprintf(why, why_len, "%u page(s) writable and executable, the first at %#lx", a.wx,
                  a.first_wx);
        return E_INVAL;
    }
    if (a.user_kernel) {
        ksnprintf(why, why_len, "%u user page(s) map kernel memory, the first at %#lx",
                  a.user_kernel, a.first_user_kernel);
        return E_INVAL;
    }
    if (guard_mapped(as, 0, why, why_len) ||
        guard_mapped(as, (uint64_t)boot_stack_guard, why, why_len))
        return E_INVAL;
    for (unsigned i = 0; i < nguards; i++)
        if (guard_mapped(as, guards[i], why, why_len))
            return E_INVAL;
    ksnprintf(why, why_len, "%s", "");
    return 0;
}
