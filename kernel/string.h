/* The freestanding kernel's string and memory routines.
 *
 * Kernel builds get the implementations in kernel/string.c. Host builds (-DBTSX_HOST: the unit
 * tests) use the C library's instead, so a module under test runs against a known-good libc.
 * kernel/string.c itself is tested on the host by building it with -DBTSX_STRING_TEST, which
 * renames every routine to kstr_* so it can sit next to libc's.
 */
#ifndef BTSX_KERNEL_STRING_H
#define BTSX_KERNEL_STRING_H

#include <stddef.h>

#if defined(BTSX_HOST) && !defined(BTSX_STRING_TEST)

#include <string.h>

/* glibc only gained strlcpy in 2.38; give older hosts the kernel's semantics. */
#if defined(__GLIBC__) && (__GLIBC__ < 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ < 38))
static inline size_t strlcpy(char *dst, const char *src, size_t size)
{
    size_t len = strlen(src);

    if (size) {
        size_t n = len < size - 1 ? len : size - 1;
        memcpy(dst, src, n);
        dst[n] = '\0';
    }
    return len;
}
#endif

#else /* kernel, or the host test of kernel/string.c */

#ifdef BTSX_STRING_TEST
#define memcpy  kstr_memcpy
#define memmove kstr_memmove
#define memset  kstr_memset
#define memcmp  kstr_memcmp
#define strlen  kstr_strlen
#define strnlen kstr_strnlen
#define strcmp  kstr_strcmp
#define strncmp kstr_strncmp
#define strchr  kstr_strchr
#define strstr  kstr_strstr
#define strlcpy kstr_strlcpy
#endif

void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t maxlen);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
char *strstr(const char *haystack, const char *needle);
/* Copies at most size-1 bytes and always NUL-terminates when size > 0; returns strlen(src)
 * so the caller can detect truncation (result >= size). */
size_t strlcpy(char *dst, const char *src, size_t size);

#endif

#endif /* BTSX_KERNEL_STRING_H */
