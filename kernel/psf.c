#include "kernel/psf.h"

#include "kernel/errno.h"

/* PSF1: 4-byte header, then 256 or 512 glyphs 8 pixels wide and charsize rows high, then an
 * optional unicode table of little-endian 16-bit code points. */
#define PSF1_MAGIC0       0x36
#define PSF1_MAGIC1       0x04
#define PSF1_HEADER_SIZE  4
#define PSF1_OFF_MODE     2
#define PSF1_OFF_CHARSIZE 3
#define PSF1_MODE512      0x01 /* 512 glyphs instead of 256 */
#define PSF1_MODEHASTAB   0x02 /* a unicode table follows the glyphs */
#define PSF1_MODEHASSEQ   0x04 /* ... and it may contain sequences */
#define PSF1_GLYPHS       256
#define PSF1_GLYPHS_512   512
#define PSF1_WIDTH        8
#define PSF1_SEPARATOR    0xFFFF /* ends one glyph's entry */
#define PSF1_STARTSEQ     0xFFFE /* the rest of the entry is combining sequences */

/* PSF2: a header of little-endian 32-bit fields (headersize may exceed PSF2_HEADER_SIZE),
 * then length glyphs of charsize bytes, then an optional UTF-8 unicode table. */
#define PSF2_MAGIC             0x864AB572u
#define PSF2_MAXVERSION        0
#define PSF2_HEADER_SIZE       32
#define PSF2_OFF_VERSION       4
#define PSF2_OFF_HEADERSIZE    8
#define PSF2_OFF_FLAGS         12
#define PSF2_OFF_LENGTH        16
#define PSF2_OFF_CHARSIZE      20
#define PSF2_OFF_HEIGHT        24
#define PSF2_OFF_WIDTH         28
#define PSF2_HAS_UNICODE_TABLE 0x01
#define PSF2_SEPARATOR         0xFF /* never valid UTF-8, so unambiguous */
#define PSF2_STARTSEQ          0xFE

/* UTF-8 two-byte sequences: 110xxxxx 10xxxxxx. Leads 0xC0/0xC1 would be overlong. */
#define UTF8_LEAD2_MIN  0xC2
#define UTF8_LEAD2_MAX  0xDF
#define UTF8_LEAD2_BITS 0x1F
#define UTF8_CONT_MASK  0xC0
#define UTF8_CONT       0x80
#define UTF8_CONT_BITS  0x3F
#define UTF8_CONT_SHIFT 6

static int reject(const char **why, int err, const char *text)
{
    *why = text;
    return err;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int psf1_parse(const uint8_t *font, size_t len, struct psf_font *f, const char **why)
{
    uint8_t mode = font[PSF1_OFF_MODE];
    uint64_t table_at;

    f->count = mode & PSF1_MODE512 ? PSF1_GLYPHS_512 : PSF1_GLYPHS;
    f->width = PSF1_WIDTH;
    f->height = font[PSF1_OFF_CHARSIZE];
    f->row_bytes = 1;
    f->glyph_bytes = f->height;
    if (!f->height)
        return reject(why, E_INVAL, "font: zero-height glyphs");
    table_at = PSF1_HEADER_SIZE + (uint64_t)f->count * f->glyph_bytes;
    if (table_at > len)
        return reject(why, E_INVAL, "font: truncated glyph data");
    f->glyphs = font + PSF1_HEADER_SIZE;
    f->table = mode & (PSF1_MODEHASTAB | PSF1_MODEHASSEQ) ? font + table_at : NULL;
    f->table_end = font + len;
    f->table_utf8 = false;
    return 0;
}

static int psf2_parse(const uint8_t *font, size_t len, struct psf_font *f, const char **why)
{
    uint32_t header_size = le32(font + PSF2_OFF_HEADERSIZE);
    uint64_t table_at;

    if (le32(font + PSF2_OFF_VERSION) > PSF2_MAXVERSION)
        return reject(why, E_NOTSUP, "font: unknown PSF2 version");
    if (header_size < PSF2_HEADER_SIZE)
        return reject(why, E_INVAL, "font: PSF2 header size too small");
    if (header_size > len)
        return reject(why, E_INVAL, "font: truncated header");
    f->count = le32(font + PSF2_OFF_LENGTH);
    f->glyph_bytes = le32(font + PSF2_OFF_CHARSIZE);
    f->height = le32(font + PSF2_OFF_HEIGHT);
    f->width = le32(font + PSF2_OFF_WIDTH);
    if (!f->count)
        return reject(why, E_INVAL, "font: no glyphs");
    if (!f->width || !f->height)
        return reject(why, E_INVAL, "font: zero-sized glyphs");
    f->row_bytes = (uint32_t)(((uint64_t)f->width + 7) / 8);
    if ((uint64_t)f->row_bytes * f->height != f->glyph_bytes)
        return reject(why, E_INVAL, "font: glyph size is not height x row bytes");
    table_at = header_size + (uint64_t)f->count * f->glyph_bytes;
    if (table_at > len)
        return reject(why, E_INVAL, "font: truncated glyph data");
    f->glyphs = font + header_size;
    f->table = le32(font + PSF2_OFF_FLAGS) & PSF2_HAS_UNICODE_TABLE ? font + table_at : NULL;
    f->table_end = font + len;
    f->table_utf8 = true;
    return 0;
}

static int psf_parse_header(const uint8_t *font, size_t len, struct psf_font *f, const char **why)
{
    if (font && len >= PSF2_HEADER_SIZE && le32(font) == PSF2_MAGIC)
        return psf2_parse(font, len, f, why);
    if (font && len >= 2 && font[0] == PSF1_MAGIC0 && font[1] == PSF1_MAGIC1) {
        if (len < PSF1_HEADER_SIZE)
            return reject(why, E_INVAL, "font: truncated header");
        return psf1_parse(font, len, f, why);
    }
    return reject(why, E_INVAL, "font: not PSF1 or PSF2 (bad magic)");
}

/* Reads one code point of a PSF2 entry at *p, or returns PSF_GLYPH_NONE for a code point above
 * U+07FF (three- and four-byte sequences are skipped a byte at a time: their lead and
 * continuation bytes never look like a separator or a one/two-byte character). */
static uint32_t utf8_next(const uint8_t **p, const uint8_t *end)
{
    uint8_t lead = *(*p)++;

    if (lead < UTF8_CONT)
        return lead;
    if (lead >= UTF8_LEAD2_MIN && lead <= UTF8_LEAD2_MAX && *p < end &&
        (**p & UTF8_CONT_MASK) == UTF8_CONT)
        return (uint32_t)(lead & UTF8_LEAD2_BITS) << UTF8_CONT_SHIFT | (*(*p)++ & UTF8_CONT_BITS);
    return PSF_GLYPH_NONE;
}

/* Walks the unicode table: one entry per glyph, each a list of code points, optionally
 * followed by sequences (ignored), ended by a separator. With a map, records the first glyph
 * that claims each Latin-1 code point; without one, only checks that every glyph's entry is
 * terminated inside the font. */
static int psf_table_walk(const struct psf_font *f, uint32_t *map, const char **why)
{
    const uint8_t *p = f->table, *end = f->table_end;

    for (uint32_t glyph = 0; glyph < f->count; glyph++) {
        bool in_sequences = false;

        for (;;) {
            uint32_t cp;

            if (f->table_utf8) {
                if (p >= end)
                    return reject(why, E_INVAL, "font: unterminated unicode table");
                if (*p == PSF2_SEPARATOR) {
                    p++;
                    break;
                }
                if (*p == PSF2_STARTSEQ) {
                    p++;
                    in_sequences = true;
                    continue;
                }
                cp = utf8_next(&p, end);
            } else {
                if (end - p < 2)
                    return reject(why, E_INVAL, "font: unterminated unicode table");
                cp = (uint32_t)p[0] | (uint32_t)p[1] << 8;
                p += 2;
                if (cp == PSF1_SEPARATOR)
                    break;
                if (cp == PSF1_STARTSEQ) {
                    in_sequences = true;
                    continue;
                }
            }
            if (map && !in_sequences && cp < PSF_LATIN1_MAP_SIZE && map[cp] == PSF_GLYPH_NONE)
                map[cp] = glyph;
        }
    }
    return 0;
}

int psf_parse(const uint8_t *font, size_t len, struct psf_font *f, const char **why)
{
    int err = psf_parse_header(font, len, f, why);
    if (!err && f->table)
        err = psf_table_walk(f, NULL, why);
    return err;
}

void psf_latin1_map(const struct psf_font *f, uint32_t map[PSF_LATIN1_MAP_SIZE])
{
    const char *why;

    for (unsigned i = 0; i < PSF_LATIN1_MAP_SIZE; i++)
        map[i] = f->table || i >= f->count ? PSF_GLYPH_NONE : i;
    if (f->table)
        (void)psf_table_walk(f, map, &why); /* cannot fail: psf_parse() walked it */
}
