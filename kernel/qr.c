/* QR code encoder: ISO/IEC 18004 (QR Code Model 2), byte mode only.
 *
 * The steps follow the standard's clause "Encoding procedure": encode the data into a bit
 * stream (mode indicator, character count, data, terminator, padding), split the codewords into
 * blocks and add Reed-Solomon error correction to each, interleave the blocks, place the
 * function patterns and then the codewords, and finally choose the data mask that gives the
 * lowest penalty and write the format and version information. Clause names are those of the
 * standard; docs/qr.md summarises the design.
 */
#include "kernel/qr.h"

#include "kernel/errno.h"
#include "kernel/string.h"

/* ------------------------------------------------------------------ block structure */

/* Clause "Error correction", table "Error correction characteristics for QR Code": for each
 * version and level, the error-correction codewords per block and the number of blocks. The
 * total codeword count comes from the module count (raw_modules()), and the split into
 * shorter and longer blocks follows from it, so these two numbers are all a version needs. */
struct qr_ec_row {
    uint8_t ec_per_block[QR_LEVELS]; /* L, M, Q, H */
    uint8_t blocks[QR_LEVELS];
};

static const struct qr_ec_row qr_ec_table[QR_VERSION_MAX] = {
    /*  1 */ {{7, 10, 13, 17}, {1, 1, 1, 1}},
    /*  2 */ {{10, 16, 22, 28}, {1, 1, 1, 1}},
    /*  3 */ {{15, 26, 18, 22}, {1, 1, 2, 2}},
    /*  4 */ {{20, 18, 26, 16}, {1, 2, 2, 4}},
    /*  5 */ {{26, 24, 18, 22}, {1, 2, 4, 4}},
    /*  6 */ {{18, 16, 24, 28}, {2, 4, 4, 4}},
    /*  7 */ {{20, 18, 18, 26}, {2, 4, 6, 5}},
    /*  8 */ {{24, 22, 22, 26}, {2, 4, 6, 6}},
    /*  9 */ {{30, 22, 20, 24}, {2, 5, 8, 8}},
    /* 10 */ {{18, 26, 24, 28}, {4, 5, 8, 8}},
    /* 11 */ {{20, 30, 28, 24}, {4, 5, 8, 11}},
    /* 12 */ {{24, 22, 26, 28}, {4, 8, 10, 11}},
    /* 13 */ {{26, 22, 24, 22}, {4, 9, 12, 16}},
    /* 14 */ {{30, 24, 20, 24}, {4, 9, 16, 16}},
    /* 15 */ {{22, 24, 30, 24}, {6, 10, 12, 18}},
    /* 16 */ {{24, 28, 24, 30}, {6, 10, 17, 16}},
    /* 17 */ {{28, 28, 28, 28}, {6, 11, 16, 19}},
    /* 18 */ {{30, 26, 28, 28}, {6, 13, 18, 21}},
    /* 19 */ {{28, 26, 26, 26}, {7, 14, 21, 25}},
    /* 20 */ {{28, 26, 30, 28}, {8, 16, 20, 25}},
    /* 21 */ {{28, 26, 28, 30}, {8, 17, 23, 25}},
    /* 22 */ {{28, 28, 30, 24}, {9, 17, 23, 34}},
    /* 23 */ {{30, 28, 30, 30}, {9, 18, 25, 30}},
    /* 24 */ {{30, 28, 30, 30}, {10, 20, 27, 32}},
    /* 25 */ {{26, 28, 30, 30}, {12, 21, 29, 35}},
    /* 26 */ {{28, 28, 28, 30}, {12, 23, 34, 37}},
    /* 27 */ {{30, 28, 30, 30}, {12, 25, 34, 40}},
    /* 28 */ {{30, 28, 30, 30}, {13, 26, 35, 42}},
    /* 29 */ {{30, 28, 30, 30}, {14, 28, 38, 45}},
    /* 30 */ {{30, 28, 30, 30}, {15, 29, 40, 48}},
    /* 31 */ {{30, 28, 30, 30}, {16, 31, 43, 51}},
    /* 32 */ {{30, 28, 30, 30}, {17, 33, 45, 54}},
    /* 33 */ {{30, 28, 30, 30}, {18, 35, 48, 57}},
    /* 34 */ {{30, 28, 30, 30}, {19, 37, 51, 60}},
    /* 35 */ {{30, 28, 30, 30}, {19, 38, 53, 63}},
    /* 36 */ {{30, 28, 30, 30}, {20, 40, 56, 66}},
    /* 37 */ {{30, 28, 30, 30}, {21, 43, 59, 70}},
    /* 38 */ {{30, 28, 30, 30}, {22, 45, 62, 74}},
    /* 39 */ {{30, 28, 30, 30}, {24, 47, 65, 77}},
    /* 40 */ {{30, 28, 30, 30}, {25, 49, 68, 81}},
};

/* The largest ec_per_block of the table: the degree of the longest generator polynomial. */
#define QR_EC_MAX 30

/* Alignment patterns per side: clause "Alignment patterns" places them on a grid that grows by
 * one row and column every seven versions. */
static unsigned align_count(unsigned version)
{
    return version < 2 ? 0 : version / 7 + 2;
}

/* Modules left for codewords once the function patterns and the format and version areas are
 * taken (clause "Symbol versions and sizes" lists them per version; this derives them):
 * three finders with their separators (8x8 each), two timing patterns between the separators,
 * 31 format modules (two copies of 15, and the dark module), the alignment patterns (5x5, less
 * the three that would overlap finders, and less the timing modules that those in row or
 * column 6 cover) and, from version 7, two 18-module version areas. */
static unsigned raw_modules(unsigned version)
{
    unsigned size = QR_SIZE(version), n = align_count(version);
    unsigned raw = size * size - 3 * 64 - 2 * (size - 16) - 31;

    if (n)
        raw -= 25 * (n * n - 3) - 2 * 5 * (n - 2);
    if (version >= 7)
        raw -= 2 * 18;
    return raw;
}

struct qr_layout {
    unsigned total;     /* codewords in the symbol */
    unsigned data;      /* data codewords */
    unsigned blocks;    /* error-correction blocks */
    unsigned ec;        /* error-correction codewords per block */
    unsigned short_len; /* data codewords of a short block; long blocks have one more */
    unsigned shorts;    /* short blocks: they come first */
};

static void layout(unsigned version, enum qr_level level, struct qr_layout *l)
{
    const struct qr_ec_row *row = &qr_ec_table[version - 1];

    l->total = raw_modules(version) / 8;
    l->blocks = row->blocks[level];
    l->ec = row->ec_per_block[level];
    l->data = l->total - l->blocks * l->ec;
    l->short_len = l->total / l->blocks - l->ec;
    l->shorts = l->blocks - l->total % l->blocks;
}

/* Byte mode's character count indicator: 8 bits up to version 9, 16 bits from version 10
 * (clause "Number of bits in character count indicator"). */
static unsigned count_bits(unsigned version)
{
    return version <= 9 ? 8 : 16;
}

size_t qr_capacity(unsigned version, enum qr_level level)
{
    struct qr_layout l;

    if (version < QR_VERSION_MIN || version > QR_VERSION_MAX || (unsigned)level >= QR_LEVELS)
        return 0;
    layout(version, level, &l);
    /* The 4-bit mode indicator and the count precede the data; the terminator may be cut. */
    return (l.data * 8 - 4 - count_bits(version)) / 8;
}

int qr_fit_level(size_t len, unsigned max_version)
{
    if (max_version < QR_VERSION_MIN || max_version > QR_VERSION_MAX)
        return E_INVAL;
    for (int level = QR_LEVEL_H; level >= QR_LEVEL_L; level--)
        if (qr_capacity(max_version, (enum qr_level)level) >= len)
            return level;
    return E_TOOLONG;
}

/* ------------------------------------------------------------------ Reed-Solomon */

/* Arithmetic in GF(256) modulo the field's prime polynomial x^8 + x^4 + x^3 + x^2 + 1 (clause
 * "Generating the error correction codewords"). Multiplication by shift and add: the encoder
 * multiplies a few thousand times per symbol, so log tables would buy nothing. */
#define GF_POLY 0x11d

static uint8_t gf_mul(uint8_t a, uint8_t b)
{
    unsigned r = 0, x = a;

    for (; b; b >>= 1) {
        if (b & 1)
            r ^= x;
        x <<= 1;
        if (x & 0x100)
            x ^= GF_POLY;
    }
    return (uint8_t)r;
}

/* The generator polynomial of degree n, (x - a^0)(x - a^1)...(x - a^(n-1)) with a = 2 (clause
 * "Generating the error correction codewords"), multiplied out one factor at a time. g[i] is
 * the coefficient of x^i, g[n] = 1. In GF(2^8) subtraction is addition (XOR). */
static void rs_generator(uint8_t *g, unsigned n)
{
    uint8_t root = 1;

    memset(g, 0, n + 1);
    g[0] = 1;
    for (unsigned deg = 0; deg < n; deg++) {
        /* times (x + root): each coefficient takes the one below it plus root times itself */
        for (unsigned j = deg + 1; j > 0; j--)
            g[j] = g[j - 1] ^ gf_mul(g[j], root);
        g[0] = gf_mul(g[0], root);
        root = gf_mul(root, 2);
    }
}

/* The error-correction codewords of one block: the remainder of data(x) * x^n divided by the
 * generator g (the data's first codeword is the highest coefficient). A shift register does the
 * long division: r[j] holds the remainder's coefficient of x^j, and each data codeword feeds
 * back the quotient term it produces. The codewords are the remainder, highest term first. */
static void rs_remainder(const uint8_t *data, unsigned len, const uint8_t *g, unsigned n,
                         uint8_t *ec)
{
    uint8_t r[QR_EC_MAX];

    memset(r, 0, n);
    for (unsigned i = 0; i < len; i++) {
        uint8_t q = data[i] ^ r[n - 1];

        for (unsigned j = n - 1; j > 0; j--)
            r[j] = r[j - 1] ^ gf_mul(g[j], q);
        r[0] = gf_mul(g[0], q);
    }
    for (unsigned i = 0; i < n; i++)
        ec[i] = r[n - 1 - i];
}

/* ------------------------------------------------------------------ module matrix */

static bool bit_get(const uint8_t *map, unsigned i)
{
    return map[i / 8] >> (i % 8) & 1;
}

static void bit_put(uint8_t *map, unsigned i, bool v)
{
    if (v)
        map[i / 8] |= (uint8_t)(1u << (i % 8));
    else
        map[i / 8] &= (uint8_t) ~(1u << (i % 8));
}

static bool dark(const struct qr_code *qr, unsigned x, unsigned y)
{
    return bit_get(qr->modules, y * qr->size + x);
}

static bool is_function(const struct qr_code *qr, unsigned x, unsigned y)
{
    return bit_get(qr->function, y * qr->size + x);
}

static void set_function(struct qr_code *qr, unsigned x, unsigned y, bool is_dark)
{
    bit_put(qr->modules, y * qr->size + x, is_dark);
    bit_put(qr->function, y * qr->size + x, true);
}

static unsigned chebyshev(int dx, int dy)
{
    dx = dx < 0 ? -dx : dx;
    dy = dy < 0 ? -dy : dy;
    return (unsigned)(dx > dy ? dx : dy);
}

/* Clause "Finder pattern" and "Separator": concentric squares around (cx, cy), dark at
 * distances 0, 1 and 3, light at 2, and the light separator at 4 where it is inside the
 * symbol. */
static void draw_finder(struct qr_code *qr, int cx, int cy)
{
    for (int dy = -4; dy <= 4; dy++)
        for (int dx = -4; dx <= 4; dx++) {
            int x = cx + dx, y = cy + dy;
            unsigned d = chebyshev(dx, dy);

            if (x >= 0 && y >= 0 && x < (int)qr->size && y < (int)qr->size)
                set_function(qr, (unsigned)x, (unsigned)y, d != 2 && d != 4);
        }
}

/* Clause "Alignment patterns": 5x5, dark centre and dark outer ring. */
static void draw_alignment(struct qr_code *qr, unsigned cx, unsigned cy)
{
    for (int dy = -2; dy <= 2; dy++)
        for (int dx = -2; dx <= 2; dx++)
            set_function(qr, cx + (unsigned)dx, cy + (unsigned)dy, chebyshev(dx, dy) != 1);
}

/* The centre coordinates (the same on both axes) of the alignment patterns, ascending: the
 * first is 6 (in line with the timing patterns), the last is size - 7, and the ones between
 * are spaced evenly by an even step, counted back from the last so that any slack widens the
 * first gap. That reproduces the standard's annex table "Row/column coordinates of center
 * module of alignment patterns" except at version 32, whose table step is 26 where the rule
 * gives 28. Returns the count. */
static unsigned align_positions(unsigned version, uint8_t *pos)
{
    unsigned n = align_count(version), size = QR_SIZE(version), step;

    if (!n)
        return 0;
    if (version == 32)
        step = 26;
    else /* (size - 13) / (n - 1), rounded up to even */
        step = (size - 13 + 2 * (n - 1) - 1) / (2 * (n - 1)) * 2;
    pos[0] = 6;
    for (unsigned i = n - 1; i >= 1; i--)
        pos[i] = (uint8_t)(size - 7 - (n - 1 - i) * step);
    return n;
}

/* The format information (clause "Format information"): the level's two bits and the mask's
 * three, a BCH(15,5) code with generator x^10 + x^8 + x^5 + x^4 + x^2 + x + 1, and the XOR
 * with 101010000010010 so that no combination is all light. */
static unsigned format_bits(enum qr_level level, unsigned mask)
{
    /* The indicator's bit patterns are not in robustness order: L=01, M=00, Q=11, H=10. */
    static const uint8_t level_bits[QR_LEVELS] = {1, 0, 3, 2};
    unsigned data = (unsigned)level_bits[level] << 3 | mask, rem = data;

    for (int i = 0; i < 10; i++)
        rem = rem << 1 ^ ((rem >> 9 & 1) ? 0x537 : 0);
    return (data << 10 | (rem & 0x3ff)) ^ 0x5412;
}

/* Both copies of the format information: bits 0..7 go down column 8 beside the top-left finder
 * (skipping the timing row) and right to left along row 8 under the top-right finder; bits
 * 8..14 go right to left along row 8 beside the top-left finder (skipping the timing column)
 * and down column 8 beside the bottom-left finder. Bit 14 is the most significant. */
static void draw_format(struct qr_code *qr, unsigned bits)
{
    unsigned s = qr->size;

    for (unsigned i = 0; i < 15; i++) {
        bool b = bits >> i & 1;

        if (i < 6)
            set_function(qr, 8, i, b);
        else if (i < 8)
            set_function(qr, 8, i + 1, b);
        else if (i == 8)
            set_function(qr, 7, 8, b);
        else
            set_function(qr, 14 - i, 8, b);

        if (i < 8)
            set_function(qr, s - 1 - i, 8, b);
        else
            set_function(qr, 8, s - 15 + i, b);
    }
    /* The dark module beside the bottom-left format copy is always dark. */
    set_function(qr, 8, s - 8, true);
}

/* Clause "Version information" (versions 7 and up): six version bits and a BCH(18,6) code with
 * generator x^12 + x^11 + x^10 + x^9 + x^8 + x^5 + x^2 + 1, in two 6x3 blocks beside the
 * top-right and bottom-left finders, one the transpose of the other. */
static void draw_version(struct qr_code *qr)
{
    unsigned rem = qr->version, bits;

    if (qr->version < 7)
        return;
    for (int i = 0; i < 12; i++)
        rem = rem << 1 ^ ((rem >> 11 & 1) ? 0x1f25 : 0);
    bits = qr->version << 12 | (rem & 0xfff);
    for (unsigned i = 0; i < 18; i++) {
        unsigned a = qr->size - 11 + i % 3, b = i / 3;
        bool v = bits >> i & 1;

        set_function(qr, a, b, v);
        set_function(qr, b, a, v);
    }
}

static void draw_function_patterns(struct qr_code *qr)
{
    uint8_t pos[QR_VERSION_MAX / 7 + 2];
    unsigned s = qr->size, n;

    /* Clause "Timing pattern": alternating modules in row 6 and column 6, dark on even
     * coordinates; the finders drawn next overwrite the ends. */
    for (unsigned i = 0; i < s; i++) {
        set_function(qr, 6, i, i % 2 == 0);
        set_function(qr, i, 6, i % 2 == 0);
    }
    draw_finder(qr, 3, 3);
    draw_finder(qr, (int)s - 4, 3);
    draw_finder(qr, 3, (int)s - 4);

    n = align_positions(qr->version, pos);
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++) {
            /* Not where a finder is: the top-left, top-right and bottom-left corners. */
            if ((i == 0 && j == 0) || (i == 0 && j == n - 1) || (i == n - 1 && j == 0))
                continue;
            draw_alignment(qr, pos[i], pos[j]);
        }

    /* Reserve the format areas (the real bits come with the mask), then the version areas. */
    draw_format(qr, 0);
    draw_version(qr);
}

/* Clause "Codeword placement in matrix": two-module-wide columns from the right edge, upwards
 * then downwards in turn, right module before left, skipping function modules. The vertical
 * timing pattern's column 6 is never part of a pair, so the pairs left of it shift by one. The
 * placer walks that order by one counter: pair, row within the pair, side. */
struct placer {
    unsigned step;
};

static bool placer_next(const struct qr_code *qr, struct placer *p, unsigned *x, unsigned *y)
{
    unsigned s = qr->size, pairs = (s - 1) / 2;

    while (p->step < pairs * 2 * s) {
        unsigned pair = p->step / (2 * s), row = p->step % (2 * s) / 2, side = p->step % 2;
        unsigned right = s - 1 - 2 * pair;

        p->step++;
        if (right <= 6)
            right--;
        *x = right - side;
        *y = pair % 2 == 0 ? s - 1 - row : row; /* the first pair goes up */
        if (!is_function(qr, *x, *y))
            return true;
    }
    return false;
}

/* ------------------------------------------------------------------ masks and penalties */

/* Clause "Data mask patterns": condition for inverting module (x, y) = (column j, row i). */
static bool mask_bit(unsigned mask, unsigned x, unsigned y)
{
    switch (mask) {
    case 0:
        return (x + y) % 2 == 0;
    case 1:
        return y % 2 == 0;
    case 2:
        return x % 3 == 0;
    case 3:
        return (x + y) % 3 == 0;
    case 4:
        return (y / 2 + x / 3) % 2 == 0;
    case 5:
        return (x * y) % 2 + (x * y) % 3 == 0;
    case 6:
        return ((x * y) % 2 + (x * y) % 3) % 2 == 0;
    default:
        return ((x + y) % 2 + (x * y) % 3) % 2 == 0;
    }
}

/* XOR is its own inverse: applying a mask twice removes it. */
static void apply_mask(struct qr_code *qr, unsigned mask)
{
    for (unsigned y = 0; y < qr->size; y++)
        for (unsigned x = 0; x < qr->size; x++)
            if (!is_function(qr, x, y) && mask_bit(mask, x, y)) {
                unsigned i = y * qr->size + x;

                bit_put(qr->modules, i, !bit_get(qr->modules, i));
            }
}

/* Penalty weights of clause "Evaluation of data masking results": N1 for a run of five, N2
 * per 2x2 block, N3 per finder-like pattern, N4 per 5% step away from half dark. */
#define PENALTY_N1 3
#define PENALTY_N2 3
#define PENALTY_N3 40
#define PENALTY_N4 10

/* Rules 1 and 3 for one row (vertical = false) or column. The line is cut into runs:
 * runs[0] is the light run at the start (0 long if the line starts dark), so dark runs have odd
 * indices. Rule 1: each run of five or more modules of one colour scores N1 plus one per
 * module beyond five. Rule 3: a dark:light:dark:light:dark sequence in the ratio 1:1:3:1:1
 * (of any unit f) scores N3 once if a light area of at least 4f precedes or follows it; the
 * quiet zone around the symbol is light, so a pattern reaching an edge has its light area.
 * The clause leaves the scaled light area and the edges open; these readings are qrencode's
 * (docs/qr.md), so that both choose the same masks. */
static unsigned penalty_line(const struct qr_code *qr, unsigned line, bool vertical)
{
    uint8_t runs[QR_SIZE_MAX + 1];
    unsigned n = 0, score = 0;

    runs[0] = 0;
    for (unsigned i = 0; i < qr->size; i++) {
        bool d = vertical ? dark(qr, line, i) : dark(qr, i, line);

        if (d != (n % 2 == 1))
            runs[++n] = 0;
        runs[n]++;
    }
    n++; /* runs[0..n-1] */

    for (unsigned i = 0; i < n; i++)
        if (runs[i] >= 5)
            score += PENALTY_N1 + runs[i] - 5;

    for (unsigned i = 3; i + 2 < n; i += 2) {
        unsigned f = runs[i] / 3;
        bool before, after;

        if (runs[i] % 3 || runs[i - 2] != f || runs[i - 1] != f || runs[i + 1] != f ||
            runs[i + 2] != f)
            continue;
        /* runs[0] and runs[n-1] touch the edges: beyond them is the quiet zone. */
        before = i - 3 == 0 || runs[i - 3] >= 4 * f;
        after = i + 3 >= n - 1 || runs[i + 3] >= 4 * f;
        if (before || after)
            score += PENALTY_N3;
    }
    return score;
}

/* Rule 2: every 2x2 block of one colour scores N2 (overlapping blocks count separately). */
static unsigned penalty_blocks(const struct qr_code *qr)
{
    unsigned score = 0;

    for (unsigned y = 0; y + 1 < qr->size; y++)
        for (unsigned x = 0; x + 1 < qr->size; x++) {
            bool c = dark(qr, x, y);

            if (dark(qr, x + 1, y) == c && dark(qr, x, y + 1) == c && dark(qr, x + 1, y + 1) == c)
                score += PENALTY_N2;
        }
    return score;
}

/* Rule 4: the dark share, as a whole percentage rounded to nearest (half up), scores N4 for
 * each full 5% it is away from 50%. The clause gives the steps, not the rounding; this one is
 * qrencode's, so that both choose the same masks. */
static unsigned penalty_balance(unsigned darks, unsigned total)
{
    unsigned percent = (200 * darks + total) / (2 * total);

    return (percent > 50 ? percent - 50 : 50 - percent) / 5 * PENALTY_N4;
}

/* The four rules over the whole symbol, format information included. */
static unsigned penalty(const struct qr_code *qr)
{
    unsigned s = qr->size, score = 0, darks = 0;

    for (unsigned i = 0; i < s; i++)
        score += penalty_line(qr, i, false) + penalty_line(qr, i, true);
    for (unsigned y = 0; y < s; y++)
        for (unsigned x = 0; x < s; x++)
            darks += dark(qr, x, y);
    return score + penalty_blocks(qr) + penalty_balance(darks, s * s);
}

/* ------------------------------------------------------------------ encoding */

struct bitwriter {
    uint8_t *buf;
    unsigned bits;
};

/* The n low bits of value, most significant first, into a zeroed buffer. */
static void put_bits(struct bitwriter *w, unsigned value, unsigned n)
{
    for (unsigned i = n; i-- > 0; w->bits++)
        if (value >> i & 1)
            w->buf[w->bits / 8] |= (uint8_t)(0x80u >> (w->bits % 8));
}

/* Clause "Data encodation" for one byte-mode segment, then "Terminator" and "Bit stream to
 * codeword conversion": at most four zero bits, zeros to the byte boundary, then the pad
 * codewords 11101100 and 00010001 in turn. */
static void encode_data(uint8_t *codewords, unsigned capacity, unsigned version,
                        const uint8_t *data, size_t len)
{
    struct bitwriter w = {codewords, 0};
    unsigned end = capacity * 8;

    memset(codewords, 0, capacity);
    put_bits(&w, 0x4, 4); /* byte mode indicator 0100 */
    put_bits(&w, (unsigned)len, count_bits(version));
    for (size_t i = 0; i < len; i++)
        put_bits(&w, data[i], 8);
    w.bits += end - w.bits < 4 ? end - w.bits : 4;
    w.bits = (w.bits + 7) / 8 * 8;
    for (unsigned i = 0; w.bits < end; i++)
        put_bits(&w, i % 2 ? 0x11 : 0xec, 8);
}

/* The error-correction codewords of every block go after the data codewords (block after
 * block, as in the data), so the interleaver can read both regions the same way. */
static void add_error_correction(uint8_t *cw, const struct qr_layout *l)
{
    uint8_t gen[QR_EC_MAX + 1];
    unsigned off = 0;

    rs_generator(gen, l->ec);
    for (unsigned b = 0; b < l->blocks; b++) {
        unsigned len = l->short_len + (b >= l->shorts);

        rs_remainder(cw + off, len, gen, l->ec, cw + l->data + b * l->ec);
        off += len;
    }
}

/* Clause "Constructing the final message codeword sequence": the first codeword of each block
 * in block order, then the second of each, and so on (the short blocks run out one codeword
 * early), then the error-correction codewords the same way; each codeword goes into the matrix
 * as it comes, most significant bit first. Modules left over are the remainder bits: light. */
static void place_codewords(struct qr_code *qr, const struct qr_layout *l)
{
    struct placer p = {0};
    unsigned x, y;

    for (unsigned i = 0; i <= l->short_len; i++)
        for (unsigned b = 0; b < l->blocks; b++) {
            unsigned byte;

            if (i == l->short_len && b < l->shorts)
                continue;
            /* Block b starts after b short blocks, or after the shorts and b - shorts longs. */
            byte = b * l->short_len + (b > l->shorts ? b - l->shorts : 0) + i;
            for (int bit = 7; bit >= 0; bit--)
                if (placer_next(qr, &p, &x, &y))
                    bit_put(qr->modules, y * qr->size + x, qr->codewords[byte] >> bit & 1);
        }
    for (unsigned i = 0; i < l->ec; i++)
        for (unsigned b = 0; b < l->blocks; b++)
            for (int bit = 7; bit >= 0; bit--)
                if (placer_next(qr, &p, &x, &y))
                    bit_put(qr->modules, y * qr->size + x,
                            qr->codewords[l->data + b * l->ec + i] >> bit & 1);
}

int qr_encode(struct qr_code *qr, const void *data, size_t len, enum qr_level level,
              unsigned version, int mask)
{
    struct qr_layout l;

    qr->version = 0;
    if ((unsigned)level >= QR_LEVELS || version > QR_VERSION_MAX || mask < QR_MASK_AUTO ||
        mask >= QR_MASKS || (len && !data))
        return E_INVAL;
    if (version == QR_VERSION_AUTO) {
        for (version = QR_VERSION_MIN; version <= QR_VERSION_MAX; version++)
            if (qr_capacity(version, level) >= len)
                break;
        if (version > QR_VERSION_MAX)
            return E_TOOLONG;
    } else if (qr_capacity(version, level) < len) {
        return E_TOOLONG;
    }

    qr->size = QR_SIZE(version);
    qr->level = level;
    qr->version = version;
    memset(qr->modules, 0, sizeof(qr->modules));
    memset(qr->function, 0, sizeof(qr->function));

    layout(version, level, &l);
    encode_data(qr->codewords, l.data, version, data, len);
    add_error_correction(qr->codewords, &l);
    draw_function_patterns(qr);
    place_codewords(qr, &l);

    /* Clause "Data masking": try each mask with its format information in place and keep
     * the first with the lowest penalty. */
    if (mask == QR_MASK_AUTO) {
        unsigned best = ~0u;

        for (unsigned m = 0; m < QR_MASKS; m++) {
            unsigned score;

            apply_mask(qr, m);
            draw_format(qr, format_bits(level, m));
            score = penalty(qr);
            if (score < best) {
                best = score;
                mask = (int)m;
            }
            apply_mask(qr, m);
        }
    }
    qr->mask = (unsigned)mask;
    apply_mask(qr, qr->mask);
    draw_format(qr, format_bits(level, qr->mask));
    return 0;
}

bool qr_module(const struct qr_code *qr, int x, int y)
{
    if (!qr->version || x < 0 || y < 0 || x >= (int)qr->size || y >= (int)qr->size)
        return false;
    return dark(qr, (unsigned)x, (unsigned)y);
}
