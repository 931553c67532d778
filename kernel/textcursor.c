#include "kernel/textcursor.h"

static void newline(struct text_cursor *tc, void (*scroll)(void))
{
    tc->col = 0;
    if (tc->row + 1 < tc->rows)
        tc->row++;
    else
        scroll();
}

bool text_cursor_put(struct text_cursor *tc, char c, unsigned tab, void (*scroll)(void),
                     unsigned *row, unsigned *col)
{
    switch (c) {
    case '\n':
        newline(tc, scroll);
        return false;
    case '\r':
        tc->col = 0;
        return false;
    case '\t':
        if (tc->col >= tc->cols)
            newline(tc, scroll);
        tc->col = (tc->col / tab + 1) * tab;
        if (tc->col > tc->cols)
            tc->col = tc->cols; /* the last tab stop is the pending wrap */
        return false;
    case '\b':
        if (tc->col > 0)
            tc->col--;
        return false;
    default:
        if (tc->col >= tc->cols)
            newline(tc, scroll);
        *row = tc->row;
        *col = tc->col++;
        return true;
    }
}
