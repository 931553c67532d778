/* The formatting core: a C99-style printf engine that writes through a per-character callback,
 * so the console, ksnprintf() and the KTAP emitter all share one implementation.
 *
 * Supported: conversions d i u x X o c s p %; flags - 0 + space #; width and precision,
 * including *; length modifiers hh h l ll z t j. No floating point (the kernel is built
 * -mno-sse) and no %n (a format string must never write memory).
 * Deliberate differences from C: %s with NULL prints "(null)" (truncated by a precision like
 * any string); %p always prints "0x" and 16 lower-case hex digits, so addresses line up in logs.
 * An unknown conversion is printed verbatim (the '%' and the character).
 */
#ifndef BTSX_KERNEL_PRINTF_H
#define BTSX_KERNEL_PRINTF_H

#include <stdarg.h>
#include <stddef.h>

/* Hex digits in a %p: the full width of a 64-bit address. */
#define FMT_POINTER_DIGITS 16

#define BTSX_PRINTF_LIKE(fmt_idx, first_arg) __attribute__((format(printf, fmt_idx, first_arg)))

/* Formats fmt into put(), one character at a time. Returns the number of characters
 * produced, or E_OVERFLOW (nothing more is produced) if a width, a precision or the total
 * would exceed INT_MAX. */
int fmt_vformat(void (*put)(char c, void *ctx), void *ctx, const char *fmt, va_list ap)
    BTSX_PRINTF_LIKE(3, 0);

/* C99 snprintf semantics: writes at most size-1 characters and a NUL when size > 0 (buf may
 * be NULL when size is 0), returns the length the full output would have had (or a negative
 * code from fmt_vformat). */
int ksnprintf(char *buf, size_t size, const char *fmt, ...) BTSX_PRINTF_LIKE(3, 4);
int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap) BTSX_PRINTF_LIKE(3, 0);

#endif /* BTSX_KERNEL_PRINTF_H */
