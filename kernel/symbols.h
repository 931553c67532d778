/*
 * The kernel's own symbol table, embedded by a second link (see the Makefile and
 * tools/mksyms.sh): addresses sorted, names packed, looked up by binary search.
 */
#ifndef BTSX_KERNEL_SYMBOLS_H
#define BTSX_KERNEL_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#define SYMBOL_TEXT_MAX 96

/* Name and offset of the symbol at or below addr; NULL when outside the kernel or past the
 * end of that symbol's function or object. */
const char *symbol_lookup(uint64_t addr, uint64_t *offset);
/* Address of a symbol by exact name, 0 if absent (of names sharing an address, the table
 * keeps one: tools/mksyms.sh). */
uint64_t symbol_address(const char *name);
/* "name+0x1f" or the bare hex address. */
void symbol_format(uint64_t addr, char *buf, size_t len);
unsigned symbol_count(void);
/* Walks the frame-pointer chain from rbp and prints symbolised return addresses. */
void backtrace_from(uint64_t rbp, void (*out)(const char *fmt, ...));

#endif
