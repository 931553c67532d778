/* 16550 UART on COM1, 115200 8N1. Copes with a missing UART by dropping output. */
#ifndef BTSX_KERNEL_SERIAL_H
#define BTSX_KERNEL_SERIAL_H

#include <stdbool.h>

#define COM1_PORT 0x3F8

/* Returns false when no UART answers (the output is then dropped). */
bool serial_init(void);
bool serial_present(void);
void serial_putc(char c);
/* Waits until everything written has left the UART. */
void serial_flush(void);

#endif
