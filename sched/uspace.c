/*
 * User tasks' address spaces: the code copied to USER_CODE_VA, a data page and a stack page
 * of their own (sched/sched.h has the layout), their release, and the first entry to CPL 3.
 * Scheduling them is sched/sched.c's job.
 */
#include "kernel/console.h"
#include "kernel/errno.h"
#include "kernel/mem.h"
#include "kernel/paging.h"
#include "kernel/ptaudit.h"
#include "kernel/smp.h"
#include "kernel/string.h"
#include "kernel/user.h"
#include "sched/internal.h"
#include "sched/sched.h"

/* The task's release hook (task_free()). */
static void uspace_free(struct task *t)
{
    if (t->as.pml4) /* as_create() may have failed */
        as_destroy(&t->as);
    for (unsigned i = 0; i < t->npages; i++)
        pages_free(t->pages[i], 1);
    t->npages = 0;
}

/* The task's entry: its first switch lands here, on its kernel stack; it never returns. */
static void uspace_enter(void *arg)
{
    struct task *t = arg;
    user_enter(t->user_entry, USER_STACK_TOP, t->user_arg, t->user_arg2);
}

static int map_user_page(struct task *t, uint64_t va, uint64_t flags, const void *src, uint64_t len)
{
    if (t->npages == USER_MAX_PAGES)
        return E_NOMEM;
    uint64_t p = pages_alloc(1);
    if (!p)
        return E_NOMEM;
    t->pages[t->npages++] = p;
    if (src)
        memcpy((void *)p, src, len);
    return as_map_user(&t->as, va, p, flags);
}

/* The address space as built keeps the rules (kernel/ptaudit.h), the user stack's neighbours
 * unmapped too (an overflow or underflow faults); a breach is said, and the task refused. */
static int uspace_audit(struct task *t)
{
    const uint64_t guards[] = {USER_STACK_VA - PAGE_SIZE, USER_STACK_TOP};
    char why[PT_AUDIT_WHY_MAX];
    int err = pt_audit_check(&t->as, guards, sizeof(guards) / sizeof(guards[0]), why, sizeof(why));
    if (err)
        kprintf_diag("task %s refused: its address space breaks a rule: %s\n", t->name, why);
    return err;
}

static struct task *user_create(unsigned cpu, const char *name, const void *code, uint64_t len,
                                uint64_t entry_offset, uint64_t arg, uint64_t arg2)
{
    if (len == 0 || entry_offset >= len || !smp_cpu(cpu))
        return NULL;
    struct task *t = task_alloc(name);
    if (!t)
        return NULL;
    t->cpu = cpu;
    t->user = true;
    t->release = uspace_free;
    t->entry = uspace_enter;
    t->arg = t;
    int err = as_create(&t->as);
    uint64_t pages = (len + PAGE_SIZE - 1) / PAGE_SIZE;
    for (uint64_t i = 0; !err && i < pages; i++) {
        uint64_t chunk = len - i * PAGE_SIZE < PAGE_SIZE ? len - i * PAGE_SIZE : PAGE_SIZE;
        err = map_user_page(t, USER_CODE_VA + i * PAGE_SIZE, 0,
                            (const uint8_t *)code + i * PAGE_SIZE, chunk);
    }
    if (!err)
        err = map_user_page(t, USER_DATA_VA, PTE_W | PTE_NX, NULL, 0);
    if (!err)
        err = map_user_page(t, USER_STACK_VA, PTE_W | PTE_NX, NULL, 0);
    if (!err)
        err = uspace_audit(t);
    if (err) {
        task_free(t);
        return NULL;
    }
    t->user_entry = USER_CODE_VA + entry_offset;
    t->user_arg = arg;
    t->user_arg2 = arg2;
    t->code_src = (uint64_t)code;
    t->code_len = len;
    return t;
}

struct task *task_create_user(const char *name, const void *code, uint64_t len,
                              uint64_t entry_offset, uint64_t arg, uint64_t arg2)
{
    struct task *t = user_create(this_cpu()->cpu, name, code, len, entry_offset, arg, arg2);
    if (t)
        task_enqueue_new(t);
    return t;
}

struct task *task_create_user_on(unsigned cpu, const char *name, const void *code, uint64_t len,
                                 uint64_t entry_offset, uint64_t arg, uint64_t arg2)
{
    return user_create(cpu, name, code, len, entry_offset, arg, arg2);
}

void task_launch(struct task *t)
{
    task_enqueue_new(t);
}
