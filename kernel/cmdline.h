/* The kernel command line: the only input a CI run gives btsx.
 *
 * The parser knows the mechanism, not the options. Each layer declares the options it owns next
 * to the code that uses them, with the OPTION_* macros below, and keeps the parsed values in its
 * own variables; the variable's initializer is the option's default. The macros place a
 * descriptor in the btsx_options linker section (as TEST() does for tests), and
 * cmdline_parse() looks every name up there.
 *
 * The line is whitespace-separated key[=value] tokens. A first token starting with '/' is the
 * image path some loaders prepend, and is ignored. Anything else that is not a registered
 * option with a good value is an error that names the option: the design's contract is that a
 * bad command line fails the run cleanly rather than being guessed at. Value forms:
 *   choice   key=NAME, one of the option's names
 *   flag     key (on), key=0 or key=1
 *   u64      key=N, decimal or 0x-hex (leading zeros are decimal, not octal); a count also
 *            has a minimum and may accept one word for a value (smp=all)
 *   list     key=ITEM[,ITEM...], at most as many items, each at most as long, as the storage holds
 */
#ifndef BTSX_KERNEL_CMDLINE_H
#define BTSX_KERNEL_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/errno.h"

#define CMDLINE_MAX_LEN 1024 /* longest accepted command line, excluding the NUL */

/* Error codes of cmdline_parse(), each a distinct entry of the project's error table. */
#define CMDLINE_EUNKNOWN E_NOENT   /* unknown option, or an empty option name */
#define CMDLINE_EVALUE   E_INVAL   /* missing, empty or malformed value */
#define CMDLINE_EDUP     E_EXIST   /* an option given twice */
#define CMDLINE_ETOOLONG E_TOOLONG /* line, list item or item count over its limit */

enum cmdline_kind { CMDLINE_CHOICE, CMDLINE_FLAG, CMDLINE_U64, CMDLINE_LIST };

struct cmdline_choice {
    const char *name;
    int value;
};

/* One registered option. Only the fields of its kind are set. */
struct cmdline_option {
    const char *name;
    enum cmdline_kind kind;
    void *var;   /* int (choice), bool (flag), uint64_t (u64), char[max_items][item_size] (list) */
    bool *given; /* if set: made true when a line gives the option (u64) */
    const struct cmdline_choice *choices; /* choice: the names and their values */
    size_t nchoices;
    unsigned *count; /* list: items stored */
    size_t max_items, item_size;
    const char *noun;   /* list: what an item is called in messages ("item") */
    const char *expect; /* list: the value's form in messages ("ITEM[,ITEM...]") */
    uint64_t min;       /* u64: the smallest number accepted */
    const char *word;   /* u64: if set, a name accepted for word_value ("all") */
    uint64_t word_value;
};

/* The registered options, in link order. The names are the ones GNU ld gives a section whose
 * name is a C identifier, so host programs (the unit tests) get them without a linker script;
 * the kernel's linker.ld defines the same two. */
extern const struct cmdline_option __start_btsx_options[], __stop_btsx_options[];

#define CMDLINE_CAT_(a, b) a##b
#define CMDLINE_CAT(a, b)  CMDLINE_CAT_(a, b)
#define CMDLINE_OPTION_(...)                                                                       \
    static const struct cmdline_option CMDLINE_CAT(cmdline_option_, __COUNTER__)                   \
        __attribute__((used, section("btsx_options"), aligned(8))) = {__VA_ARGS__}

/* OPTION_CHOICE("exit", method, {"debugexit", EXIT_DEBUGEXIT}, {"halt", EXIT_HALT}): var is an
 * int-sized enum that takes the value of the name given. */
#define OPTION_CHOICE(name_, var_, ...)                                                            \
    _Static_assert(sizeof(var_) == sizeof(int), "a choice is stored as an int");                   \
    CMDLINE_OPTION_(.name = name_, .kind = CMDLINE_CHOICE, .var = &(var_),                         \
                    .choices = (const struct cmdline_choice[]){__VA_ARGS__},                       \
                    .nchoices = sizeof((const struct cmdline_choice[]){__VA_ARGS__}) /             \
                                sizeof(struct cmdline_choice))
/* A bool: bare means true, =0 and =1 set it. */
#define OPTION_FLAG(name_, var_)                                                                   \
    _Static_assert(sizeof(var_) == sizeof(bool), "a flag is stored as a bool");                    \
    CMDLINE_OPTION_(.name = name_, .kind = CMDLINE_FLAG, .var = &(var_))
/* A uint64_t; given_ (a bool) becomes true when a line sets it. */
#define OPTION_U64(name_, var_, given_)                                                            \
    _Static_assert(sizeof(var_) == sizeof(uint64_t), "a u64 is stored as a uint64_t");             \
    CMDLINE_OPTION_(.name = name_, .kind = CMDLINE_U64, .var = &(var_), .given = &(given_))
/* A uint64_t count of at least min_, or word_ (a name such as "all") for word_value_; given_ as
 * for OPTION_U64. */
#define OPTION_COUNT(name_, var_, given_, min_, word_, word_value_)                                \
    _Static_assert(sizeof(var_) == sizeof(uint64_t), "a count is stored as a uint64_t");           \
    CMDLINE_OPTION_(.name = name_, .kind = CMDLINE_U64, .var = &(var_), .given = &(given_),        \
                    .min = (min_), .word = (word_), .word_value = (word_value_))
/* A comma-separated list into array_ (char[N][LEN]: at most N items of at most LEN - 1
 * characters) and count_ (unsigned). A line's list replaces the stored one. */
#define OPTION_LIST(name_, expect_, noun_, array_, count_)                                         \
    CMDLINE_OPTION_(.name = name_, .kind = CMDLINE_LIST, .var = (array_), .count = &(count_),      \
                    .max_items = sizeof(array_) / sizeof((array_)[0]),                             \
                    .item_size = sizeof((array_)[0]), .noun = noun_, .expect = expect_)

/* Applies the options in line (NULL = empty) to the registered options' variables. Returns 0,
 * or a CMDLINE_E* code with a message naming the option in err (if err and errlen > 0). The
 * whole line is checked before anything is stored, so on error no variable changes. Each
 * option may appear once per line; options the line does not name keep their values. */
int cmdline_parse(const char *line, char *err, size_t errlen);

#endif /* BTSX_KERNEL_CMDLINE_H */
