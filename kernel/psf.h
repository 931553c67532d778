/*
 * PSF1 and PSF2 bitmap console fonts (the formats Linux's console tools use): parsing,
 * validation, and the map from Latin-1 code points to glyphs that the font's unicode table
 * gives. Glyph rows are row_bytes bytes, the most significant bit the leftmost pixel.
 * No drawing here: kernel/fbcon.c draws with what this returns.
 */
#ifndef BTSX_KERNEL_PSF_H
#define BTSX_KERNEL_PSF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct psf_font {
    const uint8_t *glyphs;
    uint32_t count;         /* glyphs */
    uint32_t width, height; /* pixels */
    uint32_t row_bytes, glyph_bytes;
    const uint8_t *table, *table_end; /* unicode table; table is NULL if there is none */
    bool table_utf8;                  /* PSF2 (UTF-8) rather than PSF1 (16-bit) entries */
};

/* A byte is a Latin-1 code point, so the code point -> glyph map has 256 entries. */
#define PSF_LATIN1_MAP_SIZE 256
#define PSF_GLYPH_NONE      UINT32_MAX

/* Parses len bytes at font into *f (which points into font) and checks all of it, the
 * unicode table's termination too. Returns 0, or E_INVAL (bad magic, no glyphs, empty
 * glyphs, shorter than its header says, unterminated unicode table) or E_NOTSUP (a PSF2
 * version or header this code does not know), with *why naming the check that failed. */
int psf_parse(const uint8_t *font, size_t len, struct psf_font *f, const char **why);
/* The glyph of each Latin-1 code point: with a unicode table, the first glyph whose entry
 * lists it (sequences aside), else PSF_GLYPH_NONE; without one, the code point itself as a
 * glyph index where the font has that many glyphs. f must come from psf_parse(). */
void psf_latin1_map(const struct psf_font *f, uint32_t map[PSF_LATIN1_MAP_SIZE]);

#endif
