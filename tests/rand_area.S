/*
 * Where tests/t_rand.c runs its random programs in kernel mode: executable pages inside the
 * traced-code range (linker.ld), so that the trace tests' accounting (in_traced_code(),
 * trace_split()) treats the programs as known code. The kernel maps text read-only; t_rand.c
 * writes each program here with CR0.WP clear, interrupts off. int3 until then. A function
 * symbol, not an object: it is code, and disassemblers (test_decode_objdump) must see it so.
 */
#include "boot/asm.h"
#include "tests/rand_area.h"

    .section .text.traced.rand, "ax"
    .balign 4096
ENTRY(rand_area)
    .fill RAND_AREA_BYTES, 1, 0xcc
END(rand_area)
