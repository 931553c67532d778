/*
 * The cursor both screen consoles share (VGA text and the framebuffer's character grid):
 * control characters, tab stops and the deferred wrap, so that a full-width line followed
 * by a newline does not leave an empty line.
 */
#ifndef BTSX_KERNEL_TEXTCURSOR_H
#define BTSX_KERNEL_TEXTCURSOR_H

#include <stdbool.h>

struct text_cursor {
    unsigned row, col; /* col == cols: the wrap is pending */
    unsigned rows, cols;
};

/* Applies one byte. For a printable byte it returns true with the cell to draw in (*row, *col)
 * and advances; scroll() is called whenever a new line is needed below the last row. */
bool text_cursor_put(struct text_cursor *tc, char c, unsigned tab, void (*scroll)(void),
                     unsigned *row, unsigned *col);

#endif
