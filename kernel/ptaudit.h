/*
 * The rules every address space keeps, checked by walking its page tables (SDM Vol. 3A,
 * "Hierarchical Paging Structures", 4-level paging): no page both writable and executable, no
 * page a user can reach mapping the kernel image, and the guard pages (page 0, the boot
 * stack's guard, and any the caller names) unmapped. boot.wx checks the kernel's own tables
 * with it; sched/uspace.c every user task's address space as it is built.
 */
#ifndef BTSX_KERNEL_PTAUDIT_H
#define BTSX_KERNEL_PTAUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/paging.h"

/* What a walk found. Rights are effective ones, combined over every level: writable and user
 * only if every level allows it, executable only if none sets NX (with CR0.WP and EFER.NXE
 * on, as boot.cpu_state checks). */
struct pt_audit {
    unsigned leaves;                      /* present leaf entries (4 KiB, 2 MiB or 1 GiB pages) */
    unsigned wx;                          /* writable and executable */
    unsigned user_kernel;                 /* user-accessible and mapping the kernel image */
    uint64_t first_wx, first_user_kernel; /* their lowest virtual addresses */
};

/* Walks every present entry under as->pml4. */
struct pt_audit pt_audit_walk(const struct addr_space *as);

/* Room for pt_audit_check()'s why. */
#define PT_AUDIT_WHY_MAX 96

/* The rules: 0, or E_INVAL with the first broken one said in why (a NUL-terminated line).
 * guards: more pages that must be unmapped (nguards of them; may be NULL when 0). */
int pt_audit_check(const struct addr_space *as, const uint64_t *guards, unsigned nguards, char *why,
                   size_t why_len);

#endif /* BTSX_KERNEL_PTAUDIT_H */
