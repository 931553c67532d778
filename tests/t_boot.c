/*
 * boot.*: what the loader gave us and what we built from it is sane: the memory map, the
 * frame allocator, the heap, the symbol table and the CPU state the kernel relies on.
 */
#include "kernel/bootinfo.h"
#include "kernel/cpu.h"
#include "kernel/mem.h"
#include "kernel/paging.h"
#include "kernel/symbols.h"
#include "kernel/string.h"
#include "tests/test.h"

#define MIN_USABLE_BYTES (8ULL << 20)
#define FRAME_PROBES     16

extern const char _kernel_start[], _kernel_end[];
extern const char db_foreign_ret[], db_step_loop[]; /* tests/db_code.S */
void kmain(uint32_t magic, uint64_t info);

static bool overlaps(const struct mem_range *a, const struct mem_range *b)
{
    return a->base < b->base + b->len && b->base < a->base + a->len;
}

static bool in_usable(uint64_t a, uint64_t len)
{
    for (unsigned i = 0; i < boot_info.nusable; i++)
        if (a >= boot_info.usable[i].base &&
            a + len <= boot_info.usable[i].base + boot_info.usable[i].len)
            return true;
    return false;
}

TEST(boot, memmap, "the memory map is sane and holds the kernel", 0)
{
    uint64_t total = 0;
    CHECK(boot_info.nusable > 0, "no usable RAM listed");
    CHECK_EQ(boot_info.dropped, 0);
    for (unsigned i = 0; i < boot_info.nusable; i++) {
        const struct mem_range *u = &boot_info.usable[i];
        total += u->len;
        CHECK(u->len > 0 && u->base + u->len > u->base, "usable range %u is empty or wraps", i);
        for (unsigned j = i + 1; j < boot_info.nusable; j++)
            CHECK(!overlaps(u, &boot_info.usable[j]), "usable ranges %u and %u overlap", i, j);
        for (unsigned j = 0; j < boot_info.nreserved; j++)
            CHECK(!overlaps(u, &boot_info.reserved[j]), "usable %u overlaps reserved %u", i, j);
    }
    test_info("%u usable ranges, %lu MiB", boot_info.nusable, total >> 20);
    CHECK(total >= MIN_USABLE_BYTES, "only %lu KiB usable", total >> 10);
    CHECK(in_usable((uint64_t)_kernel_start, (uint64_t)(_kernel_end - _kernel_start)),
          "kernel image [%p, %p) is not inside usable RAM", _kernel_start, _kernel_end);
}

TEST(boot, frames, "frames come from usable RAM, zeroed, never the kernel's", 0)
{
    uint64_t before = frames_free_count(&kernel_frames), got[FRAME_PROBES];
    for (unsigned i = 0; i < FRAME_PROBES; i++) {
        got[i] = pages_alloc(1);
        if (!CHECK(got[i] != 0, "allocation %u failed", i))
            return;
        CHECK(in_usable(got[i], PAGE_SIZE), "frame %#lx outside usable RAM", got[i]);
        CHECK(got[i] >= (uint64_t)_kernel_end || got[i] + PAGE_SIZE <= (uint64_t)_kernel_start,
              "frame %#lx inside the kernel image", got[i]);
        const uint8_t *p = (const uint8_t *)got[i];
        for (unsigned b = 0; b < PAGE_SIZE; b++)
            if (p[b]) {
                test_fail("frame %#lx not zeroed at byte %u", got[i], b);
                break;
            }
        for (unsigned j = 0; j < i; j++)
            CHECK(got[i] != got[j], "frame %#lx handed out twice", got[i]);
    }
    uint64_t run = pages_alloc(8);
    CHECK(run != 0, "no 8-frame contiguous run");
    if (run)
        pages_free(run, 8);
    for (unsigned i = 0; i < FRAME_PROBES; i++)
        pages_free(got[i], 1);
    CHECK_EQ(frames_free_count(&kernel_frames), before);
}

TEST(boot, heap, "the heap allocates, frees and coalesces", 0)
{
    size_t before = heap_free_bytes();
    uint8_t *a = kmalloc(100), *b = kmalloc(5000), *c = kzalloc(64);
    if (!CHECK(a && b && c, "allocation failed"))
        return;
    CHECK(((uintptr_t)a | (uintptr_t)b | (uintptr_t)c) % 16 == 0, "payload not 16-aligned");
    CHECK(b >= a + 100 && c >= b + 5000, "blocks overlap");
    for (unsigned i = 0; i < 64; i++)
        CHECK(c[i] == 0, "kzalloc byte %u not zero", i);
    memset(a, 0xAA, 100);
    memset(b, 0xBB, 5000);
    kfree(b);
    kfree(a);
    kfree(c);
    CHECK_EQ(heap_free_bytes(), before);
    CHECK(kmalloc((size_t)1 << 40) == NULL, "a 1 TiB allocation succeeded");
}

TEST(boot, symbols, "the embedded symbol table resolves kernel addresses", 0)
{
    uint64_t off = 1;
    const char *name = symbol_lookup((uint64_t)kmain, &off);
    if (!CHECK(name != NULL, "no symbol for kmain (%u symbols)", symbol_count()))
        return;
    CHECK(strcmp(name, "kmain") == 0 && off == 0, "kmain resolves to %s+%#lx", name, off);
    name = symbol_lookup((uint64_t)kmain + 3, &off);
    CHECK(name && strcmp(name, "kmain") == 0 && off == 3, "kmain+3 resolves wrongly");
    CHECK_EQ(symbol_address("kmain"), (uint64_t)kmain);
    CHECK(symbol_lookup(0x10, &off) == NULL, "address 0x10 resolved to a symbol");
    /* tests/db_code.S: the RET at db_foreign_ret ends db_foreign_step (END), and four bytes
     * of no function follow before db_step_loop. A label reaches to the next entry; a sized
     * function does not reach past its end. */
    name = symbol_lookup((uint64_t)db_foreign_ret, &off);
    CHECK(name && strcmp(name, "db_foreign_ret") == 0 && off == 0,
          "db_foreign_ret resolves wrongly");
    name = symbol_lookup((uint64_t)db_step_loop - 4, &off);
    CHECK(name == NULL, "the gap after db_foreign_step resolves to %s+%#lx", name ? name : "", off);
    name = symbol_lookup((uint64_t)db_step_loop - 1, &off);
    CHECK(name == NULL, "the gap before db_step_loop resolves to %s+%#lx", name ? name : "", off);
}

TEST(boot, cpu_state, "long mode with the protections the kernel turned on", 0)
{
    CHECK(rdmsr(MSR_EFER) & EFER_LMA, "EFER.LMA clear");
    CHECK(read_cr0() & CR0_WP, "CR0.WP clear: kernel could write read-only pages");
    if (cpu_has_nx())
        CHECK(rdmsr(MSR_EFER) & EFER_NXE, "NX supported but EFER.NXE clear");
    if (cpu_has_smep())
        CHECK(read_cr4() & CR4_SMEP, "SMEP supported but off");
    if (cpu_has_smap())
        CHECK(read_cr4() & CR4_SMAP, "SMAP supported but off");
    uint16_t cs;
    __asm__ volatile("mov %%cs, %0" : "=r"(cs));
    CHECK((cs & 3) == 0, "running at CPL %u", cs & 3);
}
