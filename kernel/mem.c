/* The frame allocator over the boot memory map, and the kernel heap on top of it. */
#include "kernel/mem.h"

#include <stdbool.h>

#include "kernel/bootinfo.h"
#include "kernel/console.h"
#include "kernel/panic.h"
#include "kernel/spinlock.h"
#include "kernel/string.h"

/* The bitmap covers 16 GiB: plenty for a test kernel; more RAM is reported, not used. */
#define MANAGED_BYTES  (16ULL << 30)
#define BITMAP_WORDS   (MANAGED_BYTES / FRAME_SIZE / FRAMES_PER_WORD)
#define LOW_MEMORY_END 0x100000ULL /* real-mode IVT, BDA, EBDA, VGA, BIOS ROM */
#define HEAP_MAX_BYTES (16ULL << 20)
#define HEAP_MIN_BYTES (1ULL << 20)

extern const char _kernel_start[], _kernel_end[];

struct frame_alloc kernel_frames;
static uint64_t bitmap[BITMAP_WORDS];

void mem_init(void)
{
    struct mem_range keep_out[BOOTINFO_MAX_RANGES + 2];
    size_t n = 0;
    keep_out[n++] = (struct mem_range){0, LOW_MEMORY_END};
    keep_out[n++] =
        (struct mem_range){(uint64_t)_kernel_start, (uint64_t)(_kernel_end - _kernel_start)};
    for (unsigned i = 0; i < boot_info.nloader; i++)
        keep_out[n++] = boot_info.loader[i];

    int err = frames_init(&kernel_frames, bitmap, BITMAP_WORDS, boot_info.usable, boot_info.nusable,
                          keep_out, n);
    if (err)
        panic("memory map unusable: %s", err_str(err));
    if (frames_free_count(&kernel_frames) == 0)
        panic("memory map leaves no free frame after the kernel");
    if (kernel_frames.unmanaged_bytes)
        kprintf("# memory: %lu MiB above %#lx not managed\n", kernel_frames.unmanaged_bytes >> 20,
                kernel_frames.unmanaged_above);
}

/* The frame allocator and the heap are every CPU's: each has a lock. */
static struct spinlock frames_lock, heap_lock;

uint64_t pages_alloc(uint64_t n)
{
    bool irq = spin_lock_irqsave(&frames_lock);
    uint64_t p = n == 1 ? frames_alloc(&kernel_frames) : frames_alloc_contig(&kernel_frames, n, 1);
    spin_unlock_irqrestore(&frames_lock, irq);
    if (p)
        memset((void *)p, 0, n * FRAME_SIZE);
    return p;
}

void pages_free(uint64_t phys, uint64_t n)
{
    bool irq = spin_lock_irqsave(&frames_lock);
    int err = frames_free(&kernel_frames, phys, n);
    spin_unlock_irqrestore(&frames_lock, irq);
    if (err)
        panic("pages_free(%#lx, %lu): %s", phys, n, err_name(err));
}

/*
 * The heap: first fit over one contiguous run of frames, blocks with a header, free blocks
 * coalesced on free. Small and obviously correct beats fast here: the hot paths (#DB, PMI)
 * never allocate.
 */
#define HEAP_ALIGN      16
#define HEAP_MAGIC_USED 0xB75A110CU
#define HEAP_MAGIC_FREE 0xB75AF4EEU

struct block {
    uint32_t magic;
    uint32_t pad;
    size_t size;        /* payload bytes */
    struct block *next; /* address order, all blocks */
    uint64_t reserved;  /* keeps the header 32 bytes, so payloads stay 16-aligned */
};

static struct block *heap_head;

void heap_init(void)
{
    uint64_t bytes = frames_free_count(&kernel_frames) * FRAME_SIZE / 4;
    if (bytes > HEAP_MAX_BYTES)
        bytes = HEAP_MAX_BYTES;
    if (bytes < HEAP_MIN_BYTES)
        bytes = HEAP_MIN_BYTES;
    uint64_t base = pages_alloc(bytes / FRAME_SIZE);
    if (!base)
        panic("no contiguous %lu KiB for the kernel heap", bytes >> 10);
    heap_head = (struct block *)base;
    *heap_head = (struct block){HEAP_MAGIC_FREE, 0, bytes - sizeof(struct block), NULL, 0};
}

void *kmalloc(size_t size)
{
    size = (size + HEAP_ALIGN - 1) & ~(size_t)(HEAP_ALIGN - 1);
    bool irq = spin_lock_irqsave(&heap_lock);
    for (struct block *b = heap_head; b; b = b->next) {
        if (b->magic != HEAP_MAGIC_FREE || b->size < size)
            continue;
        if (b->size >= size + sizeof(struct block) + HEAP_ALIGN) {
            struct block *rest = (struct block *)((char *)(b + 1) + size);
            *rest = (struct block){HEAP_MAGIC_FREE, 0, b->size - size - sizeof(struct block),
                                   b->next, 0};
            b->size = size;
            b->next = rest;
        }
        b->magic = HEAP_MAGIC_USED;
        spin_unlock_irqrestore(&heap_lock, irq);
        return b + 1;
    }
    spin_unlock_irqrestore(&heap_lock, irq);
    return NULL;
}

void *kzalloc(size_t size)
{
    void *p = kmalloc(size);
    if (p)
        memset(p, 0, size);
    return p;
}

void kfree(void *p)
{
    if (!p)
        return;
    struct block *b = (struct block *)p - 1;
    bool irq = spin_lock_irqsave(&heap_lock);
    if (b->magic != HEAP_MAGIC_USED)
        panic("kfree(%p): not an allocated block (double free or corruption)", p);
    b->magic = HEAP_MAGIC_FREE;
    /* Coalesce every run of free neighbours; the list is short enough to walk. */
    for (struct block *c = heap_head; c; c = c->next)
        while (c->magic == HEAP_MAGIC_FREE && c->next && c->next->magic == HEAP_MAGIC_FREE) {
            c->size += sizeof(struct block) + c->next->size;
            c->next = c->next->next;
        }
    spin_unlock_irqrestore(&heap_lock, irq);
}

size_t heap_free_bytes(void)
{
    size_t n = 0;
    bool irq = spin_lock_irqsave(&heap_lock);
    for (struct block *b = heap_head; b; b = b->next)
        if (b->magic == HEAP_MAGIC_FREE)
            n += b->size;
    spin_unlock_irqrestore(&heap_lock, irq);
    return n;
}
