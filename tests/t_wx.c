/* boot.wx: the kernel's own page tables, walked entry by entry (the SDM's 4-level paging,
 * Vol. 3A, "Hierarchical Paging Structures"): no page is both writable and executable, no
 * page a user can reach maps kernel memory, and the guard pages are absent. A user address
 * space built by as_create()/as_map_user() is walked the same way, and the walk is shown to
 * see each kind of breach on pages mapped for that purpose. The walk belongs to the test: the
 * paging layer keeps no code that exists only to be checked. */
#include <stdbool.h>

#include "kernel/mem.h"
#include "kernel/paging.h"
#include "tests/test.h"

extern const char _kernel_start[], _text_end[], _rodata_end[], _kernel_end[];
extern const char boot_stack_guard[];

#define LEVELS       4
#define ENTRIES      512
#define HALF_ENTRIES 256 /* PML4 slots 256..511 map the upper, sign-extended half */

static const unsigned level_shift[LEVELS + 1] = {0, 12, 21, 30, 39};

struct walk {
    unsigned leaves;
    unsigned wx;          /* writable and executable */
    unsigned user_kernel; /* user-accessible and mapping the kernel image */
    uint64_t first_wx, first_user_kernel;
};

static bool overlaps_kernel(uint64_t pa, uint64_t size)
{
    return pa < (uint64_t)_kernel_end && (uint64_t)_kernel_start < pa + size;
}

/* Effective rights combine every level: writable and user only if all levels allow it,
 * executable only if none sets NX (with CR0.WP and EFER.NXE on, as boot.cpu_state checks). */
static void walk_table(const uint64_t *t, unsigned level, uint64_t va_base, bool w, bool u, bool nx,
                       struct walk *out)
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

static struct walk walk_as(const struct addr_space *as)
{
    struct walk w = {0};
    walk_table(as->pml4, LEVELS, 0, true, true, false, &w);
    return w;
}

static void check_clean(const char *what, const struct walk *w)
{
    CHECK(w->leaves > 0, "%s: the walk found no mapped page", what);
    CHECK(w->wx == 0, "%s: %u page(s) writable and executable, the first at %#lx", what, w->wx,
          w->first_wx);
    CHECK(w->user_kernel == 0, "%s: %u user page(s) map kernel memory, the first at %#lx", what,
          w->user_kernel, w->first_user_kernel);
}

static const char rodata_probe[] = "rodata";
static char data_probe[8];

TEST(boot, wx, "no page writable and executable, no user page on the kernel, guards absent", 0)
{
    struct walk k = walk_as(&kernel_as);
    check_clean("kernel", &k);

    /* The sections keep their own rights (each lookup returns the leaf entry). */
    uint64_t text = as_lookup(&kernel_as, (uint64_t)_kernel_start);
    uint64_t ro = as_lookup(&kernel_as, (uint64_t)rodata_probe);
    uint64_t rw = as_lookup(&kernel_as, (uint64_t)data_probe);
    CHECK((text & PTE_P) && !(text & PTE_W) && !(text & PTE_NX), "text entry %#lx", text);
    CHECK((ro & PTE_P) && !(ro & PTE_W) && (ro & PTE_NX), "rodata entry %#lx", ro);
    CHECK((rw & PTE_P) && (rw & PTE_W) && (rw & PTE_NX), "data entry %#lx", rw);
    /* Guards: page 0 (NULL) and the page below the boot stack stay unmapped. */
    CHECK(as_lookup(&kernel_as, 0) == 0, "page 0 is mapped");
    CHECK(as_lookup(&kernel_as, (uint64_t)boot_stack_guard) == 0,
          "the boot stack's guard page at %p is mapped", boot_stack_guard);

    /* A user address space as tasks get one: data (W, NX) and code (neither). */
    struct addr_space as;
    uint64_t page = pages_alloc(1);
    CHECK(page != 0, "no page for the user mappings");
    if (!page)
        return;
    CHECK_EQ(as_create(&as), 0);
    CHECK_EQ(as_map_user(&as, USER_BASE, page, PTE_W | PTE_NX), 0);
    CHECK_EQ(as_map_user(&as, USER_BASE + PAGE_SIZE, page, 0), 0);
    struct walk u = walk_as(&as);
    check_clean("user", &u);
    CHECK_EQ(u.leaves, k.leaves + 2);

    /* The walk sees each breach: a writable and executable user page, a user page on the
     * kernel's text. The address space is never loaded, and destroying it frees only its
     * tables. */
    CHECK_EQ(as_map_user(&as, USER_BASE + 2 * PAGE_SIZE, page, PTE_W), 0);
    CHECK_EQ(as_map_user(&as, USER_BASE + 3 * PAGE_SIZE, (uint64_t)_kernel_start, PTE_NX), 0);
    struct walk bad = walk_as(&as);
    CHECK(bad.wx == 1 && bad.first_wx == USER_BASE + 2 * PAGE_SIZE,
          "the walk missed a writable executable page (%u, %#lx)", bad.wx, bad.first_wx);
    CHECK(bad.user_kernel == 1 && bad.first_user_kernel == USER_BASE + 3 * PAGE_SIZE,
          "the walk missed a user page on the kernel (%u, %#lx)", bad.user_kernel,
          bad.first_user_kernel);
    as_destroy(&as);
    pages_free(page, 1);
}
