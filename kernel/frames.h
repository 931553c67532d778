/* Physical frame allocator logic, pure: the kernel hands it the memory map and the bitmap.
 *
 * One bit per 4 KiB frame, 1 = used. Initialisation starts with everything used, frees the
 * usable ranges rounded inward to whole frames, then re-marks the reserved ranges (kernel
 * image, boot modules, ...) rounded outward, so a frame is free only if it is entirely usable
 * and touches no reserved byte. Input ranges may overlap and come in any order.
 * Frame 0 is never handed out: a physical address of 0 is the "none" return value, and real
 * mode data (IVT/BDA) lives there.
 * Memory beyond the bitmap's capacity is not managed; frame_alloc records how much usable
 * memory that leaves out, for an "N MiB above X not managed" report.
 */
#ifndef BTSX_KERNEL_FRAMES_H
#define BTSX_KERNEL_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/errno.h"

#define FRAME_SHIFT       12
#define FRAME_SIZE        (1ull << FRAME_SHIFT)
#define FRAMES_PER_WORD   64
/* 2^64 bytes of physical address space hold 2^52 frames: a bigger bitmap is never needed. */
#define FRAMES_MAX_FRAMES (1ull << (64 - FRAME_SHIFT))

struct mem_range {
    uint64_t base, len;
}; /* also used for reserved ranges */

struct frame_alloc {
    uint64_t *bitmap;
    uint64_t nframes; /* frames the bitmap covers: phys [0, nframes * FRAME_SIZE) */
    uint64_t free;    /* frames currently free */
    uint64_t hint;    /* where frames_alloc() starts looking */
    /* Usable memory at or above unmanaged_above that the bitmap cannot describe, in bytes
     * (overlapping usable ranges counted once; reserved ranges not subtracted). */
    uint64_t unmanaged_above;
    uint64_t unmanaged_bytes;
};

/* Builds the allocator over bitmap[0 .. bitmap_words). Returns 0, E_INVAL for a NULL pointer
 * or an empty bitmap, or E_OVERFLOW if a range wraps past 2^64; on error nothing is written. */
int frames_init(struct frame_alloc *fa, uint64_t *bitmap, size_t bitmap_words,
                const struct mem_range *usable, size_t nusable, const struct mem_range *reserved,
                size_t nreserved);

/* One frame: its physical address, or 0 when none is free. */
uint64_t frames_alloc(struct frame_alloc *fa);

/* n contiguous frames whose first frame number is a multiple of align_frames (so the
 * address is aligned to align_frames * FRAME_SIZE). Lowest fit; 0 when none fits or when n or
 * align_frames is 0. */
uint64_t frames_alloc_contig(struct frame_alloc *fa, uint64_t n, uint64_t align_frames);

/* Frees n frames starting at phys. Errors change nothing: E_ALIGN (phys not frame-aligned),
 * E_INVAL (n == 0), E_RANGE (outside the bitmap, or frame 0), E_STATE (a frame already free:
 * double free). Freeing a reserved frame cannot be detected and is the caller's bug. */
int frames_free(struct frame_alloc *fa, uint64_t phys, uint64_t n);

uint64_t frames_free_count(const struct frame_alloc *fa);

/* Validates a firmware memory map before it is trusted. Returns 0 and (if total is not NULL)
 * the sum of the lengths, or: E_NOENT for an empty map, E_INVAL for a zero-length entry,
 * E_OVERFLOW when base + len or the total wraps past 2^64. */
int memmap_check(const struct mem_range *usable, size_t n, uint64_t *total);

#endif /* BTSX_KERNEL_FRAMES_H */
