/* Physical memory: the frame allocator over the boot memory map, and the kernel heap. */
#ifndef BTSX_KERNEL_MEM_H
#define BTSX_KERNEL_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/frames.h"

extern struct frame_alloc kernel_frames;

/* Builds the frame allocator from boot_info, keeping out the kernel image, the loader's data
 * and the first MiB. Panics with a clear message on a map it cannot use. */
void mem_init(void);
/* n physically contiguous, zeroed 4 KiB frames (identity-mapped, so also virtually
 * contiguous); 0 when there are none. */
uint64_t pages_alloc(uint64_t n);
void pages_free(uint64_t phys, uint64_t n);

void heap_init(void);
void *kmalloc(size_t size);
void *kzalloc(size_t size);
void kfree(void *p);
size_t heap_free_bytes(void);

#endif
