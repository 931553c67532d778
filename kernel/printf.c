/* The formatting core behind every kernel print: see printf.h for the supported subset. */
#include "kernel/printf.h"

#include <stdbool.h>
#include <stdint.h>

#include "kernel/errno.h"
#include "kernel/string.h"

/* <limits.h> is not part of the kernel's header set; int is at least as wide as unsigned. */
#define FMT_INT_MAX      ((int)(~0u >> 1))
/* Enough digits for any uintmax_t in the smallest base we print (octal: 3 bits per digit). */
#define FMT_DIGITS_MAX   ((sizeof(uintmax_t) * 8 + 2) / 3)
#define FMT_NO_PRECISION (-1)

#define FL_LEFT  (1u << 0) /* '-': pad on the right */
#define FL_ZERO  (1u << 1) /* '0': pad numbers with zeros after the sign/prefix */
#define FL_PLUS  (1u << 2) /* '+': always print a sign on signed conversions */
#define FL_SPACE (1u << 3) /* ' ': a space where '+' would go */
#define FL_ALT   (1u << 4) /* '#': 0x/0X prefix for hex, leading 0 for octal */

enum fmt_length { LEN_NONE, LEN_HH, LEN_H, LEN_L, LEN_LL, LEN_Z, LEN_T, LEN_J };

struct fmt_spec {
    unsigned flags;
    int width;
    int prec; /* FMT_NO_PRECISION when absent */
    enum fmt_length len;
    char conv;
};

struct fmt_out {
    void (*put)(char c, void *ctx);
    void *ctx;
    int count;
    bool overflow; /* the return value must stay an int: stop instead of wrapping */
};

/* %zd reads the signed counterpart of size_t as ptrdiff_t, %tu reads ptrdiff_t as size_t. */
_Static_assert(sizeof(size_t) == sizeof(ptrdiff_t), "size_t and ptrdiff_t differ in width");

static void out_char(struct fmt_out *o, char c)
{
    if (o->overflow)
        return;
    if (o->count == FMT_INT_MAX) {
        o->overflow = true;
        return;
    }
    o->put(c, o->ctx);
    o->count++;
}

static void out_repeat(struct fmt_out *o, char c, size_t n)
{
    while (n-- && !o->overflow)
        out_char(o, c);
}

static void out_mem(struct fmt_out *o, const char *s, size_t n)
{
    while (n-- && !o->overflow)
        out_char(o, *s++);
}

/* Parses a decimal width/precision; false if it does not fit in an int. */
static bool parse_decimal(const char **pp, int *out)
{
    const char *p = *pp;
    int v = 0;

    while (*p >= '0' && *p <= '9') {
        int d = *p++ - '0';
        if (v > (FMT_INT_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *pp = p;
    *out = v;
    return true;
}

/* hh and h arguments arrive promoted to int: fetch that, then convert as C specifies. */
static intmax_t fetch_signed(va_list *ap, enum fmt_length len)
{
    switch (len) {
    case LEN_HH:
        return (signed char)va_arg(*ap, int);
    case LEN_H:
        return (short)va_arg(*ap, int);
    case LEN_L:
        return va_arg(*ap, long);
    case LEN_LL:
        return va_arg(*ap, long long);
    case LEN_Z:
        return va_arg(*ap, ptrdiff_t);
    case LEN_T:
        return va_arg(*ap, ptrdiff_t);
    case LEN_J:
        return va_arg(*ap, intmax_t);
    case LEN_NONE:
        break;
    }
    return va_arg(*ap, int);
}

static uintmax_t fetch_unsigned(va_list *ap, enum fmt_length len)
{
    switch (len) {
    case LEN_HH:
        return (unsigned char)va_arg(*ap, unsigned int);
    case LEN_H:
        return (unsigned short)va_arg(*ap, unsigned int);
    case LEN_L:
        return va_arg(*ap, unsigned long);
    case LEN_LL:
        return va_arg(*ap, unsigned long long);
    case LEN_Z:
        return va_arg(*ap, size_t);
    case LEN_T:
        return va_arg(*ap, size_t);
    case LEN_J:
        return va_arg(*ap, uintmax_t);
    case LEN_NONE:
        break;
    }
    return va_arg(*ap, unsigned int);
}

/* Layout: [spaces][sign or 0x][zeros][digits][spaces]. Zeros come from the precision, from
 * '#' on octal, and from the '0' flag (which C ignores when a precision is given). */
static void emit_integer(struct fmt_out *o, const struct fmt_spec *sp, uintmax_t mag, bool negative)
{
    static const char lower[] = "0123456789abcdef";
    static const char upper[] = "0123456789ABCDEF";
    const char *set = sp->conv == 'X' ? upper : lower;
    unsigned base = 10;
    char digits[FMT_DIGITS_MAX];
    char prefix[2];
    size_t nd = 0, npre = 0, zeros = 0, total, pad = 0;
    bool is_signed = sp->conv == 'd' || sp->conv == 'i';

    if (sp->conv == 'o')
        base = 8;
    else if (sp->conv == 'x' || sp->conv == 'X' || sp->conv == 'p')
        base = 16;

    /* C: a zero value with precision 0 produces no digits at all. */
    if (!(mag == 0 && sp->prec == 0)) {
        uintmax_t v = mag;
        do {
            digits[nd++] = set[v % base];
            v /= base;
        } while (v);
    }

    if (is_signed) {
        if (negative)
            prefix[npre++] = '-';
        else if (sp->flags & FL_PLUS)
            prefix[npre++] = '+';
        else if (sp->flags & FL_SPACE)
            prefix[npre++] = ' ';
    }
    if (sp->conv == 'p' || ((sp->flags & FL_ALT) && base == 16 && mag != 0)) {
        prefix[npre++] = '0';
        prefix[npre++] = sp->conv == 'X' ? 'X' : 'x';
    }

    if (sp->prec > 0 && (size_t)sp->prec > nd)
        zeros = (size_t)sp->prec - nd;
    /* '#' on octal raises the precision just enough that the first digit is a 0. */
    if ((sp->flags & FL_ALT) && base == 8 && zeros == 0 && (nd == 0 || digits[nd - 1] != '0'))
        zeros = 1;

    total = npre + zeros + nd;
    if (sp->width > 0 && (size_t)sp->width > total)
        pad = (size_t)sp->width - total;

    if (!(sp->flags & FL_LEFT) && !((sp->flags & FL_ZERO) && sp->prec == FMT_NO_PRECISION))
        out_repeat(o, ' ', pad);
    out_mem(o, prefix, npre);
    if (!(sp->flags & FL_LEFT) && (sp->flags & FL_ZERO) && sp->prec == FMT_NO_PRECISION)
        out_repeat(o, '0', pad);
    out_repeat(o, '0', zeros);
    while (nd)
        out_char(o, digits[--nd]);
    if (sp->flags & FL_LEFT)
        out_repeat(o, ' ', pad);
}

/* %s and %c: space padding only; C leaves the '0' flag undefined here, we ignore it. */
static void emit_text(struct fmt_out *o, const struct fmt_spec *sp, const char *s, size_t len)
{
    size_t pad = 0;

    if (sp->width > 0 && (size_t)sp->width > len)
        pad = (size_t)sp->width - len;
    if (!(sp->flags & FL_LEFT))
        out_repeat(o, ' ', pad);
    out_mem(o, s, len);
    if (sp->flags & FL_LEFT)
        out_repeat(o, ' ', pad);
}

/* Reads flags, width, precision and length after a '%'. False on a width or precision that
 * does not fit in an int. */
static bool parse_spec(const char **pp, va_list *ap, struct fmt_spec *sp)
{
    const char *p = *pp;

    sp->flags = 0;
    sp->width = 0;
    sp->prec = FMT_NO_PRECISION;
    sp->len = LEN_NONE;

    for (;; p++) {
        if (*p == '-')
            sp->flags |= FL_LEFT;
        else if (*p == '0')
            sp->flags |= FL_ZERO;
        else if (*p == '+')
            sp->flags |= FL_PLUS;
        else if (*p == ' ')
            sp->flags |= FL_SPACE;
        else if (*p == '#')
            sp->flags |= FL_ALT;
        else
            break;
    }

    if (*p == '*') {
        int w = va_arg(*ap, int);
        p++;
        /* C: a negative '*' width is a '-' flag plus its magnitude. */
        if (w < 0) {
            if (w < -FMT_INT_MAX)
                return false;
            sp->flags |= FL_LEFT;
            w = -w;
        }
        sp->width = w;
    } else if (!parse_decimal(&p, &sp->width)) {
        return false;
    }

    if (*p == '.') {
        p++;
        if (*p == '*') {
            int pr = va_arg(*ap, int);
            p++;
            /* C: a negative '*' precision is taken as if it were omitted. */
            sp->prec = pr < 0 ? FMT_NO_PRECISION : pr;
        } else if (!parse_decimal(&p, &sp->prec)) {
            return false;
        }
    }

    switch (*p) {
    case 'h':
        p++;
        sp->len = LEN_H;
        if (*p == 'h') {
            p++;
            sp->len = LEN_HH;
        }
        break;
    case 'l':
        p++;
        sp->len = LEN_L;
        if (*p == 'l') {
            p++;
            sp->len = LEN_LL;
        }
        break;
    case 'z':
        p++;
        sp->len = LEN_Z;
        break;
    case 't':
        p++;
        sp->len = LEN_T;
        break;
    case 'j':
        p++;
        sp->len = LEN_J;
        break;
    default:
        break;
    }

    sp->conv = *p;
    *pp = p;
    return true;
}

int fmt_vformat(void (*put)(char c, void *ctx), void *ctx, const char *fmt, va_list ap)
{
    struct fmt_out o = {put, ctx, 0, false};
    va_list args;

    /* va_list may be an array type (it is on x86-64): copy it so helpers can take &args. */
    va_copy(args, ap);
    while (*fmt && !o.overflow) {
        const char *start = fmt;
        struct fmt_spec sp;

        if (*fmt != '%') {
            out_char(&o, *fmt++);
            continue;
        }
        fmt++;
        if (!parse_spec(&fmt, &args, &sp)) {
            o.overflow = true;
            break;
        }
        if (sp.conv == '\0') {
            /* A '%' cut off by the end of the string: show what was there. */
            out_mem(&o, start, (size_t)(fmt - start));
            break;
        }
        fmt++;

        switch (sp.conv) {
        case 'd':
        case 'i': {
            intmax_t v = fetch_signed(&args, sp.len);
            /* Negate in unsigned so INTMAX_MIN does not overflow. */
            emit_integer(&o, &sp, v < 0 ? 0 - (uintmax_t)v : (uintmax_t)v, v < 0);
            break;
        }
        case 'u':
        case 'x':
        case 'X':
        case 'o':
            emit_integer(&o, &sp, fetch_unsigned(&args, sp.len), false);
            break;
        case 'p':
            /* Fixed width so every address in a log has the same shape. */
            sp.prec = FMT_POINTER_DIGITS;
            sp.flags &= FL_LEFT;
            emit_integer(&o, &sp, (uintptr_t)va_arg(args, void *), false);
            break;
        case 'c': {
            char c = (char)va_arg(args, int);
            emit_text(&o, &sp, &c, 1);
            break;
        }
        case 's': {
            const char *s = va_arg(args, const char *);
            if (!s)
                s = "(null)";
            /* strnlen: with a precision the array need not be NUL-terminated. */
            emit_text(&o, &sp, s,
                      sp.prec == FMT_NO_PRECISION ? strlen(s) : strnlen(s, (size_t)sp.prec));
            break;
        }
        case '%':
            out_char(&o, '%');
            break;
        default:
            out_mem(&o, start, (size_t)(fmt - start));
            break;
        }
    }
    va_end(args);
    return o.overflow ? E_OVERFLOW : o.count;
}

struct snbuf {
    char *buf;
    size_t size;
    size_t pos; /* characters produced so far, including those that did not fit */
};

static void snbuf_put(char c, void *ctx)
{
    struct snbuf *b = ctx;

    /* Keep the last byte for the NUL. */
    if (b->pos + 1 < b->size)
        b->buf[b->pos] = c;
    b->pos++;
}

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct snbuf b = {buf, size, 0};
    int ret = fmt_vformat(snbuf_put, &b, fmt, ap);

    if (size)
        buf[b.pos < size ? b.pos : size - 1] = '\0';
    return ret;
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    int ret;

    va_start(ap, fmt);
    ret = kvsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return ret;
}
