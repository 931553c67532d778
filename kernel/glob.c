/* Glob matching (see glob.h). */
#include "kernel/glob.h"

#include <stddef.h>

bool glob_match(const char *pattern, const char *name)
{
    /* Where to resume after the most recent '*': only the latest star ever needs revisiting,
     * because an earlier star can absorb anything a later one could. */
    const char *star_p = NULL, *star_n = NULL;
    const char *p = pattern, *n = name;

    if (!pattern || !name)
        return false;
    while (*n) {
        if (*p == '*') {
            star_p = ++p; /* first try matching the empty run */
            star_n = n;
        } else if (*p == '?' || *p == *n) {
            p++;
            n++;
        } else if (star_p) {
            p = star_p; /* let the star swallow one more character */
            n = ++star_n;
        } else {
            return false;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}
