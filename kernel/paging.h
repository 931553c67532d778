/*
 * Page tables. The kernel identity-maps RAM (virtual == physical): text R+X, rodata R,
 * data/bss/stacks RW+NX, everything that is not RAM (LAPIC, framebuffer, PCI holes)
 * uncached. Page 0 is left unmapped to catch NULL. User pages live in their own PML4 slot
 * (USER_BASE..USER_END), private to one address space; the kernel half is shared by all, so
 * kernel memory, including every DS buffer, is mapped identically under every CR3.
 */
#ifndef BTSX_KERNEL_PAGING_H
#define BTSX_KERNEL_PAGING_H

#include "kernel/msr-index.h"

/* The user half, usable from assembly too (kernel/isr.S tells kernel stacks from others). */
#define USER_BASE BIT_ULL(39) /* PML4 slot 1 */
#define USER_END  BIT_ULL(40)

#ifndef __ASSEMBLER__
#include <stdbool.h>
#include <stdint.h>

#define PAGE_SIZE       4096ULL
#define PAGE_SHIFT      12
#define LARGE_PAGE_SIZE (2ULL << 20)

#define PTE_P         (1ULL << 0)
#define PTE_W         (1ULL << 1)
#define PTE_U         (1ULL << 2)
#define PTE_PWT       (1ULL << 3)
#define PTE_PCD       (1ULL << 4)
#define PTE_A         (1ULL << 5)
#define PTE_D         (1ULL << 6)
#define PTE_PS        (1ULL << 7)
#define PTE_G         (1ULL << 8)
#define PTE_NX        (1ULL << 63)
#define PTE_ADDR_MASK 0x000FFFFFFFFFF000ULL

/* Page-fault error code bits (SDM Vol. 3A, 4.7). */
#define PF_ERR_P (1u << 0)
#define PF_ERR_W (1u << 1)
#define PF_ERR_U (1u << 2)
#define PF_ERR_I (1u << 4)

struct addr_space {
    uint64_t *pml4;
};

/* Builds the kernel's tables from boot_info and switches to them. */
void paging_init(void);
extern struct addr_space kernel_as;

/* A new address space sharing the kernel half; its user half starts empty. */
int as_create(struct addr_space *as);
/* Frees the user half's tables and the PML4 (not the mapped frames, which the owner frees). */
void as_destroy(struct addr_space *as);
void as_switch(const struct addr_space *as);
/* Maps one 4 KiB user page: flags from PTE_W, PTE_NX (PTE_U and PTE_P are implied). */
int as_map_user(struct addr_space *as, uint64_t va, uint64_t pa, uint64_t flags);
int as_unmap_user(struct addr_space *as, uint64_t va);
/* The leaf entry for va, or 0 when unmapped (the system calls check user pointers with it). */
uint64_t as_lookup(const struct addr_space *as, uint64_t va);

#endif /* __ASSEMBLER__ */

#endif
