/* Glob matching of names: the shell's * and ?, without brackets or escapes. */
#ifndef BTSX_KERNEL_GLOB_H
#define BTSX_KERNEL_GLOB_H

#include <stdbool.h>

/* Whole-string match: '*' matches any run (also empty), '?' exactly one character, everything
 * else itself. Linear-backtracking, so hostile patterns cost O(len(pattern) * len(name)). */
bool glob_match(const char *pattern, const char *name);

#endif /* BTSX_KERNEL_GLOB_H */
