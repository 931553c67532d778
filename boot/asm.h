/*
 * Symbol declarations for assembly. Every function and data object gets an ELF type and a
 * size, so that the symbol table (tools/mksyms.sh, kernel/symbols.c) knows where each ends
 * and a backtrace never names a function for an address past its end. The build checks that
 * no function symbol of the kernel image has size 0 (tools/check-sizes.sh).
 *
 *   ENTRY(name) ... END(name)          a global function
 *   LOCAL_ENTRY(name) ... END(name)    a function only this file calls or jumps to
 *   DATA(name) ... END(name)           a global data object
 *   LOCAL_DATA(name) ... END(name)     a data object of this file
 *   LABEL(name)                        a global address inside a function (a return address,
 *                                      a branch the tests name): no type, no size of its own
 */
#ifndef BTSX_BOOT_ASM_H
#define BTSX_BOOT_ASM_H

#ifdef __ASSEMBLER__
/* clang-format off */
#define ENTRY(name)       .globl name; .type name, @function; name:
#define LOCAL_ENTRY(name) .type name, @function; name:
#define DATA(name)        .globl name; .type name, @object; name:
#define LOCAL_DATA(name)  .type name, @object; name:
#define END(name)         .size name, . - name
#define LABEL(name)       .globl name; name:
/* clang-format on */
#endif

#endif
