/* Shared by the libFuzzer targets of tests/fuzz/ (tests/fuzz/fuzz.mk builds them).
 *
 * A target reads its input as a stream of values with the fz_* readers: past the end they
 * return zeros, so every input, however short, is a valid run. A broken invariant calls
 * fz_fail(), which prints it and aborts: libFuzzer keeps the input as a crash artifact.
 */
#ifndef BTSX_TESTS_FUZZ_H
#define BTSX_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fz {
    const uint8_t *p;
    size_t left;
};

static inline uint8_t fz_u8(struct fz *in)
{
    if (!in->left)
        return 0;
    in->left--;
    return *in->p++;
}

/* n (<= 8) bytes, little-endian. */
static inline uint64_t fz_bytes_le(struct fz *in, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)fz_u8(in) << (8 * i);
    return v;
}

static inline uint64_t fz_u64(struct fz *in)
{
    return fz_bytes_le(in, 8);
}

/* A NUL-terminated copy, in its own allocation of exactly its size (so AddressSanitizer sees a
 * read past it), of the next bytes up to a NUL byte or max_len bytes; the caller frees it. */
static inline char *fz_string(struct fz *in, size_t max_len)
{
    size_t n = 0;
    while (n < in->left && n < max_len && in->p[n])
        n++;
    char *s = malloc(n + 1);
    if (!s)
        abort();
    memcpy(s, in->p, n);
    s[n] = '\0';
    in->p += n;
    in->left -= n;
    if (in->left && n < max_len) { /* the terminating NUL */
        in->p++;
        in->left--;
    }
    return s;
}

#define fz_fail(...)                                                                               \
    do {                                                                                           \
        fprintf(stderr, "%s:%d: invariant broken: ", __FILE__, __LINE__);                          \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
        abort();                                                                                   \
    } while (0)

#define fz_check(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fz_fail(__VA_ARGS__);                                                                  \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* BTSX_TESTS_FUZZ_H */
