/* QR code encoder (ISO/IEC 18004, QR Code Model 2): byte mode, versions 1..40, the four
 * error-correction levels, mask selection by the standard's penalty rules.
 *
 * A pure module: no allocation, no floating point, no large stack frames. The caller owns the
 * struct qr_code (11.3 KiB: keep it static, not on a kernel stack), which holds the
 * module matrix and the codeword workspace for the largest version. docs/qr.md describes the
 * design and its limits.
 */
#ifndef BTSX_KERNEL_QR_H
#define BTSX_KERNEL_QR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QR_VERSION_MIN   1
#define QR_VERSION_MAX   40
/* Modules per side of a version-v symbol (clause "Symbol versions and sizes"). */
#define QR_SIZE(v)       (17 + 4 * (v))
#define QR_SIZE_MAX      QR_SIZE(QR_VERSION_MAX)
/* One bit per module of the largest symbol. */
#define QR_BITMAP_BYTES  ((QR_SIZE_MAX * QR_SIZE_MAX + 7) / 8)
/* Codewords (data and error correction) of the largest symbol: its 29648 free modules / 8. */
#define QR_CODEWORDS_MAX 3706

/* For qr_encode(): pick the smallest version that fits, or the mask with the lowest penalty. */
#define QR_VERSION_AUTO 0
#define QR_MASK_AUTO    (-1)
#define QR_MASKS        8

/* Error-correction levels, in order of increasing robustness (and size). */
enum qr_level {
    QR_LEVEL_L, /* recovers about 7% of the codewords */
    QR_LEVEL_M, /* about 15% */
    QR_LEVEL_Q, /* about 25% */
    QR_LEVEL_H, /* about 30% */
    QR_LEVELS
};

struct qr_code {
    unsigned version;    /* 1..40 */
    unsigned size;       /* modules per side: QR_SIZE(version) */
    enum qr_level level; /* the level encoded in the format information */
    unsigned mask;       /* 0..7: the data mask applied */
    /* Module (x, y) is bit (y * size + x); a set bit is a dark module. */
    uint8_t modules[QR_BITMAP_BYTES];
    /* The function patterns and the format/version areas: never masked, never data. */
    uint8_t function[QR_BITMAP_BYTES];
    /* The data codewords of every block, then the error-correction codewords of every block. */
    uint8_t codewords[QR_CODEWORDS_MAX];
};

/* Bytes that byte mode fits into a version/level symbol; 0 for an invalid version or level. */
size_t qr_capacity(unsigned version, enum qr_level level);

/* The most robust level at which len bytes fit in a symbol of at most max_version, so a caller
 * with a size budget trades robustness for size. E_TOOLONG if not even level L fits, E_INVAL
 * for a max_version outside 1..40. */
int qr_fit_level(size_t len, unsigned max_version);

/* Encodes len bytes of data in byte mode into qr. version is QR_VERSION_AUTO (the smallest
 * that fits at level) or 1..40 (forced; E_TOOLONG if the data does not fit); mask is
 * QR_MASK_AUTO (the lowest penalty, the first on a tie) or 0..7 (forced). Returns 0, or
 * E_INVAL / E_TOOLONG; on error qr holds no symbol (qr->version is 0). */
int qr_encode(struct qr_code *qr, const void *data, size_t len, enum qr_level level,
              unsigned version, int mask);

/* True if module (x, y) is dark. Coordinates outside the symbol are the quiet zone: light. */
bool qr_module(const struct qr_code *qr, int x, int y);

#endif /* BTSX_KERNEL_QR_H */
