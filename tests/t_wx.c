/* boot.wx: the kernel's own page tables, walked entry by entry by kernel/ptaudit.c: no page
 * is both writable and executable, no page a user can reach maps kernel memory, and the guard
 * pages are absent. boot.wx_user: every user task's address space is checked by the same walk
 * as it is built (sched/uspace.c), and one built here with each kind of breach is refused. */
#include <stdbool.h>

#include "kernel/errno.h"
#include "kernel/mem.h"
#include "kernel/paging.h"
#include "kernel/ptaudit.h"
#include "kernel/string.h"
#include "sched/sched.h"
#include "tests/test.h"

extern const char _kernel_start[];
extern const char boot_stack_guard[];

static void check_clean(const char *what, const struct pt_audit *w)
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
    struct pt_audit k = pt_audit_walk(&kernel_as);
    check_clean("kernel", &k);
    char why[PT_AUDIT_WHY_MAX];
    CHECK(pt_audit_check(&kernel_as, NULL, 0, why, sizeof(why)) == 0, "kernel: %s", why);

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
    struct pt_audit u = pt_audit_walk(&as);
    check_clean("user", &u);
    CHECK_EQ(u.leaves, k.leaves + 2);

    /* The walk sees each breach: a writable and executable user page, a user page on the
     * kernel's text. The address space is never loaded, and destroying it frees only its
     * tables. */
    CHECK_EQ(as_map_user(&as, USER_BASE + 2 * PAGE_SIZE, page, PTE_W), 0);
    CHECK_EQ(as_map_user(&as, USER_BASE + 3 * PAGE_SIZE, (uint64_t)_kernel_start, PTE_NX), 0);
    struct pt_audit bad = pt_audit_walk(&as);
    CHECK(bad.wx == 1 && bad.first_wx == USER_BASE + 2 * PAGE_SIZE,
          "the walk missed a writable executable page (%u, %#lx)", bad.wx, bad.first_wx);
    CHECK(bad.user_kernel == 1 && bad.first_user_kernel == USER_BASE + 3 * PAGE_SIZE,
          "the walk missed a user page on the kernel (%u, %#lx)", bad.user_kernel,
          bad.first_user_kernel);
    as_destroy(&as);
    pages_free(page, 1);
}

/* A user address space laid out as sched/uspace.c builds a task's (sched/sched.h): code
 * (neither writable nor NX), data and stack (writable, NX), the stack's neighbours unmapped;
 * plus, when plant_va is not 0, one more page at plant_va: pa with flags. */
struct wx_case {
    const char *what;
    uint64_t plant_va, pa, flags;
    const char *refusal; /* what pt_audit_check() must say, NULL: accepted */
};

static void wx_user_case(const struct wx_case *c, uint64_t page)
{
    const uint64_t guards[] = {USER_STACK_VA - PAGE_SIZE, USER_STACK_TOP};
    struct addr_space as;
    if (!CHECK(as_create(&as) == 0, "%s: no address space", c->what))
        return;
    CHECK_EQ(as_map_user(&as, USER_CODE_VA, page, 0), 0);
    CHECK_EQ(as_map_user(&as, USER_DATA_VA, page, PTE_W | PTE_NX), 0);
    CHECK_EQ(as_map_user(&as, USER_STACK_VA, page, PTE_W | PTE_NX), 0);
    if (c->plant_va)
        CHECK_EQ(as_map_user(&as, c->plant_va, c->pa, c->flags), 0);
    char why[PT_AUDIT_WHY_MAX];
    int err = pt_audit_check(&as, guards, sizeof(guards) / sizeof(guards[0]), why, sizeof(why));
    if (!c->refusal) {
        CHECK(err == 0, "%s: refused: %s", c->what, why);
    } else {
        char va[24];
        ksnprintf(va, sizeof(va), "%#lx", c->plant_va);
        CHECK(err == E_INVAL && strstr(why, c->refusal) && strstr(why, va),
              "%s: %s (%s), expected a refusal saying '%s' at %s", c->what, err_name(err), why,
              c->refusal, va);
        test_info("%s: refused: %s", c->what, why);
    }
    as_destroy(&as);
}

TEST(boot, wx_user, "a user address space breaking a rule is refused, one keeping them is not", 0)
{
    uint64_t page = pages_alloc(1);
    if (!CHECK(page != 0, "no page for the user mappings"))
        return;
    const struct wx_case cases[] = {
        {"as a task's", 0, 0, 0, NULL},
        {"code page writable", USER_CODE_VA + PAGE_SIZE, page, PTE_W, "writable and executable"},
        {"user page on the kernel text", USER_DATA_VA + PAGE_SIZE, (uint64_t)_kernel_start, PTE_NX,
         "map kernel memory"},
        {"page below the stack", USER_STACK_VA - PAGE_SIZE, page, PTE_W | PTE_NX, "guard page"},
        {"page above the stack", USER_STACK_TOP, page, PTE_W | PTE_NX, "guard page"},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        wx_user_case(&cases[i], page);
    pages_free(page, 1);
}
