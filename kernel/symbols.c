#include "kernel/symbols.h"

#include "kernel/printf.h"
#include "kernel/string.h"

/* Emitted by tools/mksyms.sh into .ksyms; weak so the first link pass has an empty table. */
extern const uint64_t ksym_count __attribute__((weak));
extern const uint64_t ksym_addrs[] __attribute__((weak));
extern const uint64_t ksym_sizes[] __attribute__((weak));
extern const uint32_t ksym_name_offsets[] __attribute__((weak));
extern const char ksym_names[] __attribute__((weak));
extern const char _text_start[], _kernel_end[];

#define BACKTRACE_MAX_FRAMES 16

unsigned symbol_count(void)
{
    return &ksym_count ? (unsigned)ksym_count : 0;
}

const char *symbol_lookup(uint64_t addr, uint64_t *offset)
{
    unsigned n = symbol_count();
    if (n == 0 || addr < ksym_addrs[0] || addr >= (uint64_t)_kernel_end)
        return NULL;
    unsigned lo = 0, hi = n; /* find the last address <= addr */
    while (hi - lo > 1) {
        unsigned mid = lo + (hi - lo) / 2;
        if (ksym_addrs[mid] <= addr)
            lo = mid;
        else
            hi = mid;
    }
    /* Past the end of the function or object (padding, or code the table does not know):
     * naming the symbol below would point at the wrong code. Size 0 is a label outside every
     * sized symbol (tools/mksyms.sh), which reaches to the next entry. */
    if (ksym_sizes[lo] && addr - ksym_addrs[lo] >= ksym_sizes[lo])
        return NULL;
    *offset = addr - ksym_addrs[lo];
    return &ksym_names[ksym_name_offsets[lo]];
}

uint64_t symbol_address(const char *name)
{
    for (unsigned i = 0; i < symbol_count(); i++)
        if (strcmp(&ksym_names[ksym_name_offsets[i]], name) == 0)
            return ksym_addrs[i];
    return 0;
}

void symbol_format(uint64_t addr, char *buf, size_t len)
{
    uint64_t off;
    const char *name = symbol_lookup(addr, &off);
    if (name)
        ksnprintf(buf, len, "%s+%#lx (%#lx)", name, off, addr);
    else
        ksnprintf(buf, len, "%#lx", addr);
}

static int plausible_frame(uint64_t rbp)
{
    /* Kernel stacks are identity-mapped RAM; anything else ends the walk. */
    return rbp >= 0x1000 && rbp < (1ULL << 47) && (rbp & 7) == 0;
}

void backtrace_from(uint64_t rbp, void (*out)(const char *fmt, ...))
{
    out("backtrace:\n");
    for (int i = 0; i < BACKTRACE_MAX_FRAMES && plausible_frame(rbp); i++) {
        const uint64_t *frame = (const uint64_t *)rbp;
        uint64_t ret = frame[1];
        if (ret < (uint64_t)_text_start || ret >= (uint64_t)_kernel_end)
            break;
        char sym[SYMBOL_TEXT_MAX];
        symbol_format(ret, sym, sizeof(sym));
        out("  %s\n", sym);
        if (frame[0] <= rbp) /* frames must go up the stack */
            break;
        rbp = frame[0];
    }
}
