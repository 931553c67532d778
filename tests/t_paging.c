/*
 * paging.*: the protections the page tables promise. Each case provokes the fault and
 * passes only if the fault happened, with the right vector and error code.
 */
#include "kernel/cpu.h"
#include "kernel/mem.h"
#include "kernel/paging.h"
#include "kernel/recover.h"
#include "kernel/string.h"
#include "kernel/user.h"
#include "tests/test.h"

#define USER_CODE_VA  USER_BASE
#define USER_STACK_VA (USER_BASE + 0x10000)

static void check_pf(const struct fault_info *f, unsigned want_err, unsigned mask, uint64_t cr2)
{
    CHECK(f->vector == VEC_PF, "vector %u, expected #PF", f->vector);
    CHECK((f->error_code & mask) == want_err, "#PF error code %#lx, expected %#x under mask %#x",
          f->error_code, want_err, mask);
    CHECK_EQ(f->cr2, cr2);
}

static void write_byte(void *p)
{
    *(volatile uint8_t *)p = 0xCC;
}
static void read_byte(void *p)
{
    (void)*(volatile uint8_t *)p;
}
static void call_at(void *p)
{
    ((void (*)(void))p)();
}

TEST(paging, write_text, "writing kernel text faults and leaves it unchanged", 0)
{
    struct fault_info f;
    uint8_t *target = (uint8_t *)(uintptr_t)read_byte;
    uint8_t before = *target;
    if (!CHECK(test_expect_fault(write_byte, target, &f), "write to text did not fault"))
        return;
    check_pf(&f, PF_ERR_P | PF_ERR_W, PF_ERR_P | PF_ERR_W | PF_ERR_U, (uint64_t)target);
    CHECK_EQ(*target, before);
}

TEST(paging, write_rodata, "writing read-only data faults", 0)
{
    static const uint32_t constant = 0x600DF00D;
    struct fault_info f;
    if (!CHECK(test_expect_fault(write_byte, (void *)&constant, &f), "no fault"))
        return;
    check_pf(&f, PF_ERR_P | PF_ERR_W, PF_ERR_P | PF_ERR_W, (uint64_t)&constant);
    CHECK_EQ(constant, 0x600DF00D);
}

TEST(paging, exec_data, "executing from data faults (NX)", 0)
{
    if (!cpu_has_nx()) {
        test_skip("no NX (CPUID.80000001H:EDX.NX=0)");
        return;
    }
    static uint8_t code[16] = {0xC3}; /* ret, in .data */
    struct fault_info f;
    if (!CHECK(test_expect_fault(call_at, code, &f), "executing .data did not fault"))
        return;
    check_pf(&f, PF_ERR_P | PF_ERR_I, PF_ERR_P | PF_ERR_I | PF_ERR_W, (uint64_t)code);
}

TEST(paging, null, "page 0 is unmapped", 0)
{
    struct fault_info f;
    if (!CHECK(test_expect_fault(read_byte, (void *)8, &f), "reading address 8 did not fault"))
        return;
    check_pf(&f, 0, PF_ERR_P | PF_ERR_W, 8);
}

/* A user address space with one code page and one stack page. */
struct user_env {
    struct addr_space as;
    uint64_t code, stack;
};

static bool user_env_make(struct user_env *u, const uint8_t *code, size_t len)
{
    u->code = pages_alloc(1);
    u->stack = pages_alloc(1);
    if (!u->code || !u->stack || as_create(&u->as) != 0)
        return false;
    memcpy((void *)u->code, code, len);
    return as_map_user(&u->as, USER_CODE_VA, u->code, 0) == 0 &&
           as_map_user(&u->as, USER_STACK_VA, u->stack, PTE_W | PTE_NX) == 0;
}

static void user_env_free(struct user_env *u)
{
    as_switch(&kernel_as);
    if (u->as.pml4)
        as_destroy(&u->as);
    if (u->code)
        pages_free(u->code, 1);
    if (u->stack)
        pages_free(u->stack, 1);
}

struct user_run {
    struct user_env *env;
    uint64_t arg;
};

static void run_user(void *p)
{
    struct user_run *r = p;
    as_switch(&r->env->as);
    user_enter(USER_CODE_VA, USER_STACK_VA + PAGE_SIZE, r->arg, 0);
}

TEST(paging, user_reads_kernel, "user mode reading kernel memory faults", 0)
{
    static const uint8_t code[] = {0x48, 0x8B, 0x07, 0x0F, 0x0B}; /* mov (%rdi),%rax; ud2 */
    struct user_env u = {0};
    if (CHECK(user_env_make(&u, code, sizeof(code)), "cannot build the user address space")) {
        struct user_run r = {&u, (uint64_t)&kernel_as};
        struct fault_info f;
        if (CHECK(test_expect_fault(run_user, &r, &f), "user code returned")) {
            CHECK(f.user, "the fault was not taken at CPL 3");
            check_pf(&f, PF_ERR_P | PF_ERR_U, PF_ERR_P | PF_ERR_U | PF_ERR_W, r.arg);
        }
    }
    user_env_free(&u);
}

TEST(paging, user_runs, "user mode runs its own code (and reaches its ud2)", 0)
{
    static const uint8_t code[] = {0x48, 0x89, 0xE0, 0x0F, 0x0B}; /* mov %rsp,%rax; ud2 */
    struct user_env u = {0};
    if (CHECK(user_env_make(&u, code, sizeof(code)), "cannot build the user address space")) {
        struct user_run r = {&u, 0};
        struct fault_info f;
        if (CHECK(test_expect_fault(run_user, &r, &f), "user code returned")) {
            CHECK(f.vector == VEC_UD && f.user, "vector %u user %d, expected #UD at CPL 3",
                  f.vector, f.user);
            CHECK_EQ(f.rip, USER_CODE_VA + 3);
        }
    }
    user_env_free(&u);
}

static void kernel_touch_user(void *p)
{
    struct user_run *r = p;
    as_switch(&r->env->as);
    if (r->arg)
        call_at((void *)USER_CODE_VA);
    else
        read_byte((void *)USER_CODE_VA);
}

static void smep_smap_case(bool exec)
{
    static const uint8_t code[] = {0xC3};
    struct user_env u = {0};
    if (CHECK(user_env_make(&u, code, sizeof(code)), "cannot build the user address space")) {
        struct user_run r = {&u, exec};
        struct fault_info f;
        if (CHECK(test_expect_fault(kernel_touch_user, &r, &f), "kernel touched a user page"))
            check_pf(&f, PF_ERR_P | (exec ? PF_ERR_I : 0), PF_ERR_P | PF_ERR_I | PF_ERR_U,
                     USER_CODE_VA);
    }
    user_env_free(&u);
}

TEST(paging, smep, "the kernel cannot execute user pages (SMEP)", 0)
{
    if (!cpu_has_smep()) {
        test_skip("no SMEP (CPUID.07H:EBX.SMEP=0)");
        return;
    }
    smep_smap_case(true);
}

TEST(paging, smap, "the kernel cannot read user pages outside user_access (SMAP)", 0)
{
    if (!cpu_has_smap()) {
        test_skip("no SMAP (CPUID.07H:EBX.SMAP=0)");
        return;
    }
    smep_smap_case(false);
}
