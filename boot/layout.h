/* Segment selectors and boot constants shared by assembly and C. */
#ifndef BTSX_BOOT_LAYOUT_H
#define BTSX_BOOT_LAYOUT_H

/* GDT layout. The order of the user entries is fixed by SYSRET: it loads
 * CS = STAR[63:48] + 16 and SS = STAR[63:48] + 8 (SDM Vol. 2B, SYSRET). */
#define GDT_KERNEL_CS 0x08
#define GDT_KERNEL_DS 0x10
#define GDT_USER_CS32 0x18 /* placeholder: SYSRET base, never loaded */
#define GDT_USER_DS   0x20
#define GDT_USER_CS   0x28
#define GDT_TSS       0x30 /* 16-byte system descriptor */
#define GDT_ENTRIES   8

#define RPL_USER 3

#define BOOT_STACK_SIZE 65536
/* CPUs btsx can run: the static per-CPU tables (kernel/gdt.c, kernel/smp.c) have this many. */
#define SMP_MAX_CPUS    16
#define IST_STACK_SIZE  8192

/* Loader magics in EAX at entry. */
#define MB1_BOOTLOADER_MAGIC 0x2BADB002
#define MB2_BOOTLOADER_MAGIC 0x36D76289

#endif
