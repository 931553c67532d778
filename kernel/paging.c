#include "kernel/paging.h"

#include "kernel/bootinfo.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/mem.h"
#include "kernel/panic.h"

#define ENTRIES         512
#define PML4_SHIFT      39
#define PDPT_SHIFT      30
#define PD_SHIFT        21
#define LOW_4G          (4ULL << 30)
#define LEGACY_IO_START 0xA0000ULL /* VGA memory and option ROMs: not ordinary RAM */
#define LEGACY_IO_END   0x100000ULL
#define USER_PML4_SLOT  (USER_BASE >> PML4_SHIFT)

#define KERNEL_RW   (PTE_P | PTE_W | PTE_A | PTE_D | PTE_NX)
#define MMIO_RW     (KERNEL_RW | PTE_PCD | PTE_PWT) /* uncached */
#define TABLE_FLAGS (PTE_P | PTE_W | PTE_A)

extern const char _kernel_start[], _text_end[], _rodata_end[], _kernel_end[];
extern const char boot_stack_guard[];

struct addr_space kernel_as;

static uint64_t *table_alloc(void)
{
    uint64_t p = pages_alloc(1);
    if (!p)
        panic("out of memory for page tables");
    return (uint64_t *)p;
}

static unsigned idx(uint64_t va, unsigned shift)
{
    return (va >> shift) & (ENTRIES - 1);
}

static bool in_range(uint64_t a, uint64_t lo, uint64_t hi)
{
    return a >= lo && a < hi;
}

/* Is [a, a+len) wholly inside one usable memory-map range? */
static bool all_usable(uint64_t a, uint64_t len)
{
    for (unsigned i = 0; i < boot_info.nusable; i++) {
        const struct mem_range *r = &boot_info.usable[i];
        if (a >= r->base && a + len <= r->base + r->len)
            return true;
    }
    return false;
}

static bool any_usable(uint64_t a, uint64_t len)
{
    for (unsigned i = 0; i < boot_info.nusable; i++) {
        const struct mem_range *r = &boot_info.usable[i];
        if (a < r->base + r->len && r->base < a + len)
            return true;
    }
    return false;
}

static bool touches_kernel(uint64_t a, uint64_t len)
{
    return a < (uint64_t)_kernel_end && (uint64_t)_kernel_start < a + len;
}

/* The leaf entry for one 4 KiB page of the identity map. */
static uint64_t page_entry(uint64_t pa)
{
    if (pa == 0 || pa == (uint64_t)boot_stack_guard)
        return 0; /* NULL and the stack guard stay unmapped */
    if (in_range(pa, (uint64_t)_kernel_start, (uint64_t)_text_end))
        return pa | PTE_P | PTE_A; /* text: read-only, executable */
    if (in_range(pa, (uint64_t)_text_end, (uint64_t)_rodata_end))
        return pa | PTE_P | PTE_A | PTE_NX; /* rodata */
    if (in_range(pa, LEGACY_IO_START, LEGACY_IO_END) || !all_usable(pa, PAGE_SIZE))
        return pa | MMIO_RW;
    return pa | KERNEL_RW;
}

static void map_region_2m(uint64_t *pd, uint64_t pa)
{
    uint64_t *e = &pd[idx(pa, PD_SHIFT)];
    if (pa != 0 && !touches_kernel(pa, LARGE_PAGE_SIZE)) {
        if (all_usable(pa, LARGE_PAGE_SIZE)) {
            *e = pa | KERNEL_RW | PTE_PS;
            return;
        }
        if (!any_usable(pa, LARGE_PAGE_SIZE)) {
            *e = pa | MMIO_RW | PTE_PS; /* LAPIC, framebuffer, PCI holes */
            return;
        }
    }
    /* Mixed region: the kernel image, page 0, or RAM next to a hole. */
    uint64_t *pt = table_alloc();
    for (unsigned i = 0; i < ENTRIES; i++)
        pt[i] = page_entry(pa + i * PAGE_SIZE);
    *e = (uint64_t)pt | TABLE_FLAGS;
}

static uint64_t *next_table(uint64_t *table, unsigned i, uint64_t flags)
{
    if (!(table[i] & PTE_P))
        table[i] = (uint64_t)table_alloc() | flags;
    return (uint64_t *)(table[i] & PTE_ADDR_MASK);
}

void paging_init(void)
{
    uint64_t top = LOW_4G;
    for (unsigned i = 0; i < boot_info.nusable; i++) {
        uint64_t end = boot_info.usable[i].base + boot_info.usable[i].len;
        if (end > top)
            top = end;
    }
    if (top > (USER_BASE))
        top = USER_BASE; /* the identity map must stay inside PML4 slot 0 */

    uint64_t *pml4 = table_alloc();
    for (uint64_t pa = 0; pa < top; pa += LARGE_PAGE_SIZE) {
        if (pa >= LOW_4G && !any_usable(pa, LARGE_PAGE_SIZE))
            continue; /* above 4 GiB only RAM is mapped */
        uint64_t *pdpt = next_table(pml4, idx(pa, PML4_SHIFT), TABLE_FLAGS);
        uint64_t *pd = next_table(pdpt, idx(pa, PDPT_SHIFT), TABLE_FLAGS);
        map_region_2m(pd, pa);
    }
    kernel_as.pml4 = pml4;
    as_switch(&kernel_as);
}

int as_create(struct addr_space *as)
{
    uint64_t *pml4 = (uint64_t *)pages_alloc(1);
    if (!pml4)
        return E_NOMEM;
    /* Share the kernel half (slot 0, the identity map) by pointing at the same PDPT. */
    pml4[0] = kernel_as.pml4[0];
    as->pml4 = pml4;
    return 0;
}

static void free_tree(uint64_t *table, int level)
{
    for (unsigned i = 0; level > 1 && i < ENTRIES; i++)
        if (table[i] & PTE_P)
            free_tree((uint64_t *)(table[i] & PTE_ADDR_MASK), level - 1);
    pages_free((uint64_t)table, 1);
}

void as_destroy(struct addr_space *as)
{
    uint64_t e = as->pml4[USER_PML4_SLOT];
    if (e & PTE_P)
        free_tree((uint64_t *)(e & PTE_ADDR_MASK), 3);
    pages_free((uint64_t)as->pml4, 1);
    as->pml4 = NULL;
}

void as_switch(const struct addr_space *as)
{
    write_cr3((uint64_t)as->pml4);
}

static bool user_va_ok(uint64_t va)
{
    return va >= USER_BASE && va < USER_END && (va & (PAGE_SIZE - 1)) == 0;
}

static uint64_t *user_pte(struct addr_space *as, uint64_t va, bool create)
{
    const uint64_t uflags = TABLE_FLAGS | PTE_U;
    uint64_t *t = as->pml4;
    const unsigned shifts[] = {PML4_SHIFT, PDPT_SHIFT, PD_SHIFT};
    for (unsigned l = 0; l < 3; l++) {
        unsigned i = idx(va, shifts[l]);
        if (!(t[i] & PTE_P)) {
            if (!create)
                return NULL;
            uint64_t p = pages_alloc(1);
            if (!p)
                return NULL;
            t[i] = p | uflags;
        }
        t = (uint64_t *)(t[i] & PTE_ADDR_MASK);
    }
    return &t[idx(va, PAGE_SHIFT)];
}

int as_map_user(struct addr_space *as, uint64_t va, uint64_t pa, uint64_t flags)
{
    if (!user_va_ok(va) || (pa & (PAGE_SIZE - 1)) || (flags & ~(PTE_W | PTE_NX)))
        return E_INVAL;
    uint64_t *pte = user_pte(as, va, true);
    if (!pte)
        return E_NOMEM;
    if (*pte & PTE_P)
        return E_BUSY;
    *pte = pa | flags | PTE_P | PTE_U | PTE_A | PTE_D;
    return 0;
}

int as_unmap_user(struct addr_space *as, uint64_t va)
{
    if (!user_va_ok(va))
        return E_INVAL;
    uint64_t *pte = user_pte(as, va, false);
    if (!pte || !(*pte & PTE_P))
        return E_NOENT;
    *pte = 0;
    if (read_cr3() == (uint64_t)as->pml4)
        invlpg(va);
    return 0;
}

uint64_t as_lookup(const struct addr_space *as, uint64_t va)
{
    const uint64_t *t = as->pml4;
    const unsigned shifts[] = {PML4_SHIFT, PDPT_SHIFT, PD_SHIFT, PAGE_SHIFT};
    for (unsigned l = 0; l < 4; l++) {
        uint64_t e = t[idx(va, shifts[l])];
        if (!(e & PTE_P))
            return 0;
        if (l == 3 || (e & PTE_PS))
            return e;
        t = (const uint64_t *)(e & PTE_ADDR_MASK);
    }
    return 0;
}
