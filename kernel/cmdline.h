/* The kernel command line: the only input a CI run gives btsx.
 *
 * Options are whitespace-separated key[=value] tokens:
 *   tests=GLOB[,GLOB...]     run only tests whose name matches a glob (* = any run, ? = one char)
 *   backend=auto|hw|model    BTS backend
 *   seed=N                   decimal or 0x-hex u64 (leading zeros are decimal, not octal)
 *   verbose | verbose=0|1    extra diagnostics
 *   exit=debugexit|halt|reboot
 *   selftest | selftest=0|1
 *   pmi=fixed|nmi            how LVT PC delivers the threshold interrupt
 *   apic=auto|xapic|x2apic
 *   console=all|serial       serial only: leave the screen alone
 *   dump | dump=0|1          print every trace a test collects (for tools/btsx-trace)
 *   model.layout=auto|core|netburst  the DEBUGCTL bit layout the BTS model interprets
 * A first token starting with '/' is the image path some loaders prepend, and is ignored.
 * Anything else is an error that names the option: the design's contract is that a bad command
 * line fails the run cleanly rather than being guessed at.
 */
#ifndef BTSX_KERNEL_CMDLINE_H
#define BTSX_KERNEL_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/errno.h"

enum backend_choice { BACKEND_AUTO, BACKEND_HW, BACKEND_MODEL };
enum exit_method { EXIT_AUTO, EXIT_DEBUGEXIT, EXIT_HALT, EXIT_REBOOT };
enum pmi_delivery { PMI_FIXED, PMI_NMI };
enum apic_mode { APIC_MODE_AUTO, APIC_MODE_XAPIC, APIC_MODE_X2APIC };
enum console_choice { CONSOLE_ALL, CONSOLE_SERIAL };
/* auto: the CPU's layout from the DS layer's table (the Core layout if it has none). */
enum model_layout_choice { MODEL_LAYOUT_AUTO, MODEL_LAYOUT_CORE, MODEL_LAYOUT_NETBURST };

#define CMDLINE_MAX_GLOBS 16
#define CMDLINE_GLOB_LEN  64   /* including the NUL: a glob has at most 63 characters */
#define CMDLINE_MAX_LEN   1024 /* longest accepted command line, excluding the NUL */

/* Error codes of cmdline_parse(), each a distinct entry of the project's error table. */
#define CMDLINE_EUNKNOWN E_NOENT   /* unknown option, or an empty option name */
#define CMDLINE_EVALUE   E_INVAL   /* missing, empty or malformed value */
#define CMDLINE_EDUP     E_EXIST   /* an option given twice */
#define CMDLINE_ETOOLONG E_TOOLONG /* line, glob or glob count over its limit */

struct btsx_options {
    char globs[CMDLINE_MAX_GLOBS][CMDLINE_GLOB_LEN];
    unsigned nglobs;
    enum backend_choice backend;
    uint64_t seed;
    bool seed_set;
    bool verbose;
    enum exit_method exit;
    bool selftest;
    enum pmi_delivery pmi;
    enum apic_mode apic;
    enum console_choice console;
    bool dump;
    enum model_layout_choice model_layout;
};

/* No globs (every test), auto backend/exit/APIC/model layout, fixed PMI, seed unset, flags off. */
void cmdline_defaults(struct btsx_options *o);

/* Applies the options in line (NULL = empty) on top of *o. Returns 0, or a CMDLINE_E* code with
 * a message naming the option in err (if err and errlen > 0); on error *o is left untouched.
 * Each option may appear once per line. */
int cmdline_parse(const char *line, struct btsx_options *o, char *err, size_t errlen);

/* Whole-string match: '*' matches any run (also empty), '?' exactly one character, everything
 * else itself. Linear-backtracking, so hostile patterns cost O(len(pattern) * len(name)). */
bool glob_match(const char *pattern, const char *name);

/* True if testname matches any glob, or if no globs were given. */
bool cmdline_selects(const struct btsx_options *o, const char *testname);

#endif /* BTSX_KERNEL_CMDLINE_H */
