/* Byte-at-a-time string and memory routines for the freestanding kernel.
 *
 * Simple over fast: the kernel copies little, and these must be obviously right because the
 * compiler itself emits calls to memcpy/memset/memmove/memcmp (struct copies, zeroing).
 */
#include "kernel/string.h"

#include <stdint.h>

#if defined(BTSX_HOST) && !defined(BTSX_STRING_TEST)
/* Host builds take libc's routines (see string.h); nothing to compile here. */
typedef int string_c_host_build_is_empty;
#else

/* GCC's loop-distribution pass recognises the loops below as memset/memcpy idioms and would
 * compile memset() into a call to memset(): infinite recursion. Clang skips idiom recognition
 * inside functions with these names, and does not know the optimize attribute. */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_IDIOM_CALLS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define NO_IDIOM_CALLS
#endif

/* Eight bytes a store where the addresses allow it: a page is zeroed or copied in 512 stores
 * instead of 4096 (under QEMU's TCG each store into a page it translated code from costs a
 * search of that page's translations, so copying code there, as the rand.* tests and user
 * tasks do, is dominated by the number of stores). */
typedef uint64_t __attribute__((may_alias)) word_t;
#define WORD_MASK (sizeof(word_t) - 1)

NO_IDIOM_CALLS void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;

    if ((((uintptr_t)d | (uintptr_t)s) & WORD_MASK) == 0)
        for (; n >= sizeof(word_t); n -= sizeof(word_t), d += sizeof(word_t), s += sizeof(word_t))
            *(word_t *)d = *(const word_t *)s;
    while (n--)
        *d++ = *s++;
    return dst;
}

NO_IDIOM_CALLS void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;

    /* Copy backwards only when dst starts inside the source: otherwise forward is safe. */
    if ((uintptr_t)d - (uintptr_t)s >= n) {
        while (n--)
            *d++ = *s++;
    } else {
        d += n;
        s += n;
        while (n--)
            *--d = *--s;
    }
    return dst;
}

NO_IDIOM_CALLS void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;

    for (; n && ((uintptr_t)d & WORD_MASK); n--)
        *d++ = (unsigned char)c;
    word_t w = (unsigned char)c * 0x0101010101010101ull;
    for (; n >= sizeof(word_t); n -= sizeof(word_t), d += sizeof(word_t))
        *(word_t *)d = w;
    while (n--)
        *d++ = (unsigned char)c;
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *p = a, *q = b;

    for (; n; n--, p++, q++)
        if (*p != *q)
            return *p < *q ? -1 : 1;
    return 0;
}

size_t strlen(const char *s)
{
    const char *p = s;

    while (*p)
        p++;
    return (size_t)(p - s);
}

size_t strnlen(const char *s, size_t maxlen)
{
    size_t n = 0;

    while (n < maxlen && s[n])
        n++;
    return n;
}

/* C compares strings as unsigned char; a plain-char compare would order UTF-8 wrongly. */
int strcmp(const char *a, const char *b)
{
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;

    while (*p && *p == *q) {
        p++;
        q++;
    }
    return (*p > *q) - (*p < *q);
}

int strncmp(const char *a, const char *b, size_t n)
{
    const unsigned char *p = (const unsigned char *)a, *q = (const unsigned char *)b;

    for (; n; n--, p++, q++) {
        if (*p != *q)
            return *p < *q ? -1 : 1;
        if (!*p)
            break;
    }
    return 0;
}

/* As in C, an empty needle is found at the start of the haystack. */
char *strstr(const char *haystack, const char *needle)
{
    size_t n = strlen(needle);

    for (;; haystack++) {
        if (!strncmp(haystack, needle, n))
            return (char *)haystack;
        if (!*haystack)
            return NULL;
    }
}

/* As in C, the terminating NUL is part of the string: strchr(s, 0) finds it. */
char *strchr(const char *s, int c)
{
    for (;; s++) {
        if (*s == (char)c)
            return (char *)s;
        if (!*s)
            return NULL;
    }
}

size_t strlcpy(char *dst, const char *src, size_t size)
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
