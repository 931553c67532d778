/* UndefinedBehaviorSanitizer's entry points (see kernel/ubsan.h). The structures below are the
 * ones GCC and clang pass to the __ubsan_handle_* calls they emit: a source location (file,
 * line, column), type descriptors (a kind, for integers their signedness and width, and the
 * type's name) and, per check, the site's data followed by the values as machine words (an
 * integer of up to 64 bits is the word itself; a wider one is a pointer to it).
 *
 * This file is built without the sanitizer (Makefile: UBSAN_RUNTIME): the runtime must not
 * check itself. It calls no other C file, and formats its reports itself. */
#include "kernel/ubsan.h"

#include <stddef.h>
#include <stdint.h>

struct source_location {
    const char *file;
    uint32_t line;
    uint32_t column; /* bit 31: this site was reported already (the compilers leave it clear) */
};

#define LOCATION_REPORTED (1u << 31)

enum { TYPE_KIND_INTEGER = 0, TYPE_KIND_FLOAT = 1, TYPE_KIND_UNKNOWN = 0xffff };

struct type_descriptor {
    uint16_t kind;
    uint16_t info; /* integers: bit 0 signed, bits 1..15 log2 of the width in bits */
    char name[];   /* as the compiler spells it, quotes included */
};

struct overflow_data {
    struct source_location loc;
    const struct type_descriptor *type;
};

struct shift_data {
    struct source_location loc;
    const struct type_descriptor *lhs_type, *rhs_type;
};

struct out_of_bounds_data {
    struct source_location loc;
    const struct type_descriptor *array_type, *index_type;
};

struct type_mismatch_data {
    struct source_location loc;
    const struct type_descriptor *type;
    uint8_t log_alignment;
    uint8_t type_check_kind;
};

struct alignment_assumption_data {
    struct source_location loc, assumption_loc;
    const struct type_descriptor *type;
};

struct vla_bound_data {
    struct source_location loc;
    const struct type_descriptor *type;
};

struct invalid_value_data {
    struct source_location loc;
    const struct type_descriptor *type;
};

struct nonnull_arg_data {
    struct source_location loc, attr_loc;
    int arg_index;
};

struct nonnull_return_data {
    struct source_location attr_loc;
};

struct unreachable_data {
    struct source_location loc;
};

struct invalid_builtin_data {
    struct source_location loc;
    uint8_t kind; /* 0: ctz, 1: clz */
};

struct pointer_overflow_data {
    struct source_location loc;
};

void (*ubsan_report_hook)(const char *report, bool fatal);

/* One report at a time (a report's own printing may run instrumented code, and another CPU
 * may report at the same moment): the buffer is the holder's. */
static char buf[UBSAN_REPORT_MAX];
static size_t len;
static int busy;
static unsigned early, lost;
static char early_first[UBSAN_REPORT_MAX];

static void put_char(char c)
{
    if (len + 1 < sizeof(buf))
        buf[len++] = c;
    buf[len] = '\0';
}

static void put_str(const char *s)
{
    while (s && *s)
        put_char(*s++);
}

static void put_udec(uint64_t v)
{
    char d[20];
    unsigned n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        put_char(d[--n]);
}

static void put_hex(uint64_t v)
{
    put_str("0x");
    unsigned shift = 60;
    while (shift && !(v >> shift))
        shift -= 4;
    for (;; shift -= 4) {
        put_char("0123456789abcdef"[(v >> shift) & 0xf]);
        if (!shift)
            break;
    }
}

static unsigned type_bits(const struct type_descriptor *t)
{
    return 1u << (t->info >> 1);
}

/* An integer value as its type has it: sign-extended from its width when signed. */
static void put_value(const struct type_descriptor *t, uintptr_t v)
{
    if (t->kind != TYPE_KIND_INTEGER) {
        put_str("a value of type ");
        put_str(t->name);
        return;
    }
    unsigned bits = type_bits(t);
    if (bits > 64) {
        put_str("a ");
        put_udec(bits);
        put_str("-bit value");
        return;
    }
    uint64_t u = (uint64_t)v;
    if (bits < 64)
        u &= (1ULL << bits) - 1;
    if ((t->info & 1) && (u >> (bits - 1)) & 1) {
        put_char('-');
        put_udec(bits < 64 ? (1ULL << bits) - u : -u);
        return;
    }
    put_udec(u);
}

static bool value_negative(const struct type_descriptor *t, uintptr_t v)
{
    unsigned bits = type_bits(t);
    return t->kind == TYPE_KIND_INTEGER && (t->info & 1) && bits <= 64 && (v >> (bits - 1)) & 1;
}

/* Starts a report for loc: false when this site was reported before, or another report is
 * being made (counted: the reporter says how many were lost). */
static bool begin(struct source_location *loc, const char *check)
{
    if (__atomic_fetch_or(&loc->column, LOCATION_REPORTED, __ATOMIC_RELAXED) & LOCATION_REPORTED)
        return false;
    if (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE)) {
        __atomic_fetch_add(&lost, 1, __ATOMIC_RELAXED);
        return false;
    }
    len = 0;
    put_str("ubsan: ");
    put_str(loc->file);
    put_char(':');
    put_udec(loc->line);
    put_char(':');
    put_udec(loc->column & ~LOCATION_REPORTED);
    put_str(": ");
    put_str(check);
    put_str(": ");
    return true;
}

static void copy_report(char *to)
{
    for (size_t i = 0; i < UBSAN_REPORT_MAX; i++)
        to[i] = buf[i];
}

static void end(bool fatal)
{
    if (lost) {
        put_str(" (and ");
        put_udec(__atomic_exchange_n(&lost, 0, __ATOMIC_RELAXED));
        put_str(" more made meanwhile, not shown)");
    }
    if (!ubsan_report_hook) {
        if (early++ == 0)
            copy_report(early_first);
    } else if (!fatal) {
        ubsan_report_hook(buf, false);
    } else {
        /* The hook does not come back: the report is handed over in a buffer of its own, and
         * the next one may start. */
        static char fatal_report[UBSAN_REPORT_MAX];
        copy_report(fatal_report);
        __atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
        ubsan_report_hook(fatal_report, true);
    }
    __atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
    /* A fatal report whose hook returned, or came before there was one. */
    if (fatal)
        __builtin_trap();
}

unsigned ubsan_early_reports(const char **first)
{
    *first = early ? early_first : NULL;
    return early;
}

static void overflow(struct overflow_data *d, uintptr_t lhs, uintptr_t rhs, char op)
{
    if (!begin(&d->loc, "signed-integer-overflow"))
        return;
    put_value(d->type, lhs);
    put_char(' ');
    put_char(op);
    put_char(' ');
    put_value(d->type, rhs);
    put_str(" does not fit ");
    put_str(d->type->name);
    end(false);
}

/* The entry points, by the names and arguments the compilers call them with (only the
 * recovering forms: the kernel is built with -fsanitize-recover=all, and unreachable code has
 * no other). */
void __ubsan_handle_add_overflow(struct overflow_data *d, uintptr_t lhs, uintptr_t rhs);
void __ubsan_handle_sub_overflow(struct overflow_data *d, uintptr_t lhs, uintptr_t rhs);
void __ubsan_handle_mul_overflow(struct overflow_data *d, uintptr_t lhs, uintptr_t rhs);
void __ubsan_handle_negate_overflow(struct overflow_data *d, uintptr_t v);
void __ubsan_handle_divrem_overflow(struct overflow_data *d, uintptr_t lhs, uintptr_t rhs);
void __ubsan_handle_shift_out_of_bounds(struct shift_data *d, uintptr_t lhs, uintptr_t rhs);
void __ubsan_handle_out_of_bounds(struct out_of_bounds_data *d, uintptr_t index);
void __ubsan_handle_type_mismatch_v1(struct type_mismatch_data *d, uintptr_t ptr);
void __ubsan_handle_alignment_assumption(struct alignment_assumption_data *d, uintptr_t ptr,
                                         uintptr_t align, uintptr_t offset);
void __ubsan_handle_vla_bound_not_positive(struct vla_bound_data *d, uintptr_t bound);
void __ubsan_handle_load_invalid_value(struct invalid_value_data *d, uintptr_t v);
void __ubsan_handle_nonnull_arg(struct nonnull_arg_data *d);
void __ubsan_handle_nonnull_return_v1(struct nonnull_return_data *d, struct source_location *loc);
void __ubsan_handle_invalid_builtin(struct invalid_builtin_data *d);
void __ubsan_handle_pointer_overflow(struct pointer_overflow_data *d, uintptr_t base,
                                     uintptr_t result);
__attribute__((noreturn)) void __ubsan_handle_builtin_unreachable(struct unreachable_data *d);

void __ubsan_handle_add_overflow(struct overflow_data *d, uintptr_t lhs, uintptr_t rhs)
{
    overflow(d, lhs, rhs, '+');
}

void __ubsan_handle_sub_overflow(struct overflow_data *d, uintptr_t lhs, uintptr_t rhs)
{
    overflow(d, lhs, rhs, '-');
}

void __ubsan_handle_mul_overflow(struct overflow_data *d, uintptr_t lhs, uintptr_t rhs)
{
    overflow(d, lhs, rhs, '*');
}

void __ubsan_handle_negate_overflow(struct overflow_data *d, uintptr_t v)
{
    if (!begin(&d->loc, "signed-integer-overflow"))
        return;
    put_str("-(");
    put_value(d->type, v);
    put_str(") does not fit ");
    put_str(d->type->name);
    end(false);
}

void __ubsan_handle_divrem_overflow(struct overflow_data *d, uintptr_t lhs, uintptr_t rhs)
{
    bool by_zero = rhs == 0;
    if (!begin(&d->loc, by_zero ? "integer-divide-by-zero" : "signed-integer-overflow"))
        return;
    put_value(d->type, lhs);
    put_str(" / ");
    put_value(d->type, rhs);
    if (!by_zero) {
        put_str(" does not fit ");
        put_str(d->type->name);
    }
    end(false);
}

void __ubsan_handle_shift_out_of_bounds(struct shift_data *d, uintptr_t lhs, uintptr_t rhs)
{
    if (!begin(&d->loc, "shift"))
        return;
    /* The call does not say which way the shift went: the first two reasons hold for both,
     * the last two only a left shift has. */
    put_str("shift of ");
    put_value(d->lhs_type, lhs);
    put_str(" by ");
    put_value(d->rhs_type, rhs);
    if (value_negative(d->rhs_type, rhs)) {
        put_str(": a negative amount");
    } else if (rhs >= type_bits(d->lhs_type)) {
        put_str(": as wide as ");
        put_str(d->lhs_type->name);
        put_str(" or wider");
    } else if (value_negative(d->lhs_type, lhs)) {
        put_str(": a negative value shifted left");
    } else {
        put_str(": the result does not fit ");
        put_str(d->lhs_type->name);
    }
    end(false);
}

void __ubsan_handle_out_of_bounds(struct out_of_bounds_data *d, uintptr_t index)
{
    if (!begin(&d->loc, "bounds"))
        return;
    put_str("index ");
    put_value(d->index_type, index);
    put_str(" out of range for ");
    put_str(d->array_type->name);
    end(false);
}

/* The compilers' kinds of typed access, in their order. */
static const char *const access_kind[] = {
    "load of",
    "store to",
    "reference binding to",
    "member access within",
    "member call on",
    "constructor call on",
    "downcast of",
    "downcast of",
    "upcast of",
    "cast to virtual base of",
    "nonnull binding to",
    "dynamic operation on",
};

void __ubsan_handle_type_mismatch_v1(struct type_mismatch_data *d, uintptr_t ptr)
{
    uintptr_t align = (uintptr_t)1 << d->log_alignment;
    bool misaligned = d->log_alignment && (ptr & (align - 1));
    if (!begin(&d->loc, !ptr ? "null" : misaligned ? "alignment" : "object-size"))
        return;
    put_str(d->type_check_kind < sizeof(access_kind) / sizeof(access_kind[0])
                ? access_kind[d->type_check_kind]
                : "access to");
    put_char(' ');
    put_str(d->type->name);
    if (!ptr) {
        put_str(" through a null pointer");
    } else {
        put_str(" at ");
        put_hex(ptr);
        if (misaligned) {
            put_str(", not aligned to ");
            put_udec(align);
        } else {
            put_str(", past the end of its object");
        }
    }
    end(false);
}

void __ubsan_handle_alignment_assumption(struct alignment_assumption_data *d, uintptr_t ptr,
                                         uintptr_t align, uintptr_t offset)
{
    if (!begin(&d->loc, "alignment"))
        return;
    put_str("assumed alignment ");
    put_udec(align);
    put_str(" of ");
    put_hex(ptr - offset);
    end(false);
}

void __ubsan_handle_vla_bound_not_positive(struct vla_bound_data *d, uintptr_t bound)
{
    if (!begin(&d->loc, "vla-bound"))
        return;
    put_str("array bound ");
    put_value(d->type, bound);
    put_str(" is not positive");
    end(false);
}

void __ubsan_handle_load_invalid_value(struct invalid_value_data *d, uintptr_t v)
{
    if (!begin(&d->loc, "bool/enum"))
        return;
    put_str("load of ");
    put_value(d->type, v);
    put_str(", not a value of ");
    put_str(d->type->name);
    end(false);
}

void __ubsan_handle_nonnull_arg(struct nonnull_arg_data *d)
{
    if (!begin(&d->loc, "nonnull-attribute"))
        return;
    put_str("null passed as argument ");
    put_udec((unsigned)d->arg_index);
    put_str(", declared never null at line ");
    put_udec(d->attr_loc.line);
    end(false);
}

void __ubsan_handle_nonnull_return_v1(struct nonnull_return_data *d, struct source_location *loc)
{
    if (!begin(loc, "returns-nonnull-attribute"))
        return;
    put_str("null returned, declared never null at line ");
    put_udec(d->attr_loc.line);
    end(false);
}

void __ubsan_handle_invalid_builtin(struct invalid_builtin_data *d)
{
    if (!begin(&d->loc, "builtin"))
        return;
    put_str(d->kind == 0 ? "__builtin_ctz" : "__builtin_clz");
    put_str("() of zero");
    end(false);
}

void __ubsan_handle_pointer_overflow(struct pointer_overflow_data *d, uintptr_t base,
                                     uintptr_t result)
{
    if (!begin(&d->loc, "pointer-overflow"))
        return;
    put_str(!base && !result ? "arithmetic on a null pointer"
            : !base          ? "offset applied to a null pointer, giving "
                             : "pointer ");
    if (base) {
        put_hex(base);
        put_str(" moved to ");
    }
    if (base || result)
        put_hex(result);
    end(false);
}

void __ubsan_handle_builtin_unreachable(struct unreachable_data *d)
{
    /* Reported whether or not it was before: the code cannot go on. */
    d->loc.column &= ~LOCATION_REPORTED;
    if (begin(&d->loc, "unreachable")) {
        put_str("__builtin_unreachable() reached");
        end(true);
    }
    __builtin_trap();
}
