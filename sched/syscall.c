#include "sched/syscall.h"

#include "boot/layout.h"
#include "ds/bts.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/errno.h"
#include "kernel/paging.h"
#include "kernel/string.h"
#include "kernel/trap.h"
#include "sched/sched.h"

#define STAR_KERNEL_SHIFT 32
#define STAR_USER_SHIFT   48
/* What SYSCALL clears in RFLAGS: no interrupts or single-stepping until the kernel stack is
 * in place, and the ABI's direction and alignment-check flags. */
#define SYSCALL_FMASK     (RFLAGS_IF | RFLAGS_TF | RFLAGS_DF | RFLAGS_AC)
#define SYSCALL_INSN_LEN  2 /* 0F 05 */

void syscall_init(void)
{
    wrmsr(MSR_STAR, ((uint64_t)GDT_KERNEL_CS << STAR_KERNEL_SHIFT) |
                        ((uint64_t)(GDT_USER_CS32 | RPL_USER) << STAR_USER_SHIFT));
    wrmsr(MSR_LSTAR, (uint64_t)syscall_entry);
    wrmsr(MSR_FMASK, SYSCALL_FMASK);
    wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_SCE);
}

/* Is [p, p+len) inside the caller's own mapped user pages (writable if asked)? */
static bool user_range_ok(uint64_t p, uint64_t len, bool write)
{
    if (len == 0)
        return true;
    if (p < USER_BASE || p >= USER_END || len > USER_END - p)
        return false;
    const struct addr_space *as = &task_current()->as;
    for (uint64_t a = p & ~(PAGE_SIZE - 1); a < p + len; a += PAGE_SIZE) {
        uint64_t e = as_lookup(as, a);
        if (!(e & PTE_P) || !(e & PTE_U) || (write && !(e & PTE_W)))
            return false;
    }
    return true;
}

static int64_t sys_write(uint64_t buf, uint64_t len, uint64_t a2)
{
    (void)a2;
    if (len > SYS_WRITE_MAX)
        return E_RANGE;
    if (!user_range_ok(buf, len, false))
        return E_FAULT;
    char text[SYS_WRITE_MAX + 1];
    user_access_begin();
    for (uint64_t i = 0; i < len; i++)
        text[i] = ((const char *)buf)[i];
    user_access_end();
    /* The bytes are the task's, the console's lines the kernel's: a CR (or a VT, FF or
     * escape sequence) would let a terminal, or a reader that splits lines as Python's
     * str.splitlines does, see a line the kernel never wrote; a NUL would cut the text short.
     * A newline stays: the diagnostic goes on with its own "# " prefix. */
    for (uint64_t i = 0; i < len; i++)
        if ((text[i] < ' ' || text[i] > '~') && text[i] != '\n' && text[i] != '\t')
            text[i] = '?';
    text[len] = '\0';
    kprintf_diag("task %u: %s", task_current()->id, text);
    return (int64_t)len;
}

static int64_t sys_trace(uint64_t op, uint64_t buf, uint64_t max)
{
    struct bts_trace *t = task_current()->trace;
    if (!t)
        return E_STATE;
    switch (op) {
    case TRACE_OP_ENABLE:
        return bts_enable(t);
    case TRACE_OP_DISABLE:
        return bts_disable(t);
    case TRACE_OP_COUNT:
        return (int64_t)bts_count(t);
    case TRACE_OP_DRAIN: {
        if (max > UINT64_MAX / sizeof(struct bts_record) ||
            !user_range_ok(buf, max * sizeof(struct bts_record), true))
            return E_FAULT;
        struct bts_record r;
        int64_t n = 0;
        /* One record at a time through a kernel copy: the window for user access stays small.
         * The ABI asks no alignment of buf: copied as bytes, not stored as a struct (a
         * misaligned struct store is undefined behaviour, which the UBSan kernel reports). */
        while ((uint64_t)n < max && bts_drain_raw(t, &r, 1) == 1) {
            user_access_begin();
            memcpy((uint8_t *)buf + (uint64_t)n * sizeof(r), &r, sizeof(r));
            user_access_end();
            n++;
        }
        return n;
    }
    default:
        return E_INVAL;
    }
}

static int64_t sys_yield(uint64_t a0, uint64_t a1, uint64_t a2)
{
    (void)a0, (void)a1, (void)a2;
    task_yield();
    return 0;
}

static int64_t sys_exit(uint64_t status, uint64_t a1, uint64_t a2)
{
    (void)a1, (void)a2;
    task_exit((int)status);
}

/* The rest of this call runs on the new CPU. */
static int64_t sys_migrate(uint64_t cpu, uint64_t a1, uint64_t a2)
{
    (void)a1, (void)a2;
    return cpu < SMP_MAX_CPUS ? task_migrate((unsigned)cpu) : E_INVAL;
}

/* Indexed by number: SYS_COUNT is its size, so every number below it has a handler and a
 * new call is one entry (and one more SYS_COUNT) in sched/syscall.h. */
static int64_t (*const syscall_table[SYS_COUNT])(uint64_t, uint64_t, uint64_t) = {
    [SYS_YIELD] = sys_yield, [SYS_EXIT] = sys_exit,       [SYS_WRITE] = sys_write,
    [SYS_TRACE] = sys_trace, [SYS_MIGRATE] = sys_migrate,
};

void syscall_dispatch(struct syscall_frame *f);
void syscall_dispatch(struct syscall_frame *f)
{
    if (syscall_entry_hook)
        syscall_entry_hook(f->rip - SYSCALL_INSN_LEN, (uint64_t)syscall_entry, f->rflags);
    irq_enable();
    /* All 64 bits of RAX are the number: 0x100000002 is no SYS_WRITE. */
    int64_t ret = f->rax < SYS_COUNT ? syscall_table[f->rax](f->rdi, f->rsi, f->rdx) : E_INVAL;
    irq_disable();
    f->rax = (uint64_t)ret;
    if (syscall_exit_hook)
        syscall_exit_hook((uint64_t)syscall_sysretq, f->rip, &f->rflags);
}
