/* Name and message lookup for the error table in errno.h. */
#include "kernel/errno.h"

#include <stddef.h>

struct err_entry {
    int code;
    const char *name;
    const char *msg;
};

static const struct err_entry err_table[] = {
#define BTSX_ERR_ENTRY(name, value, msg) {(value), #name, (msg)},
    BTSX_ERRORS(BTSX_ERR_ENTRY)
#undef BTSX_ERR_ENTRY
};

#define ERR_TABLE_LEN      (sizeof(err_table) / sizeof(err_table[0]))
#define ERR_UNKNOWN_PREFIX "E_UNKNOWN("

static const struct err_entry *err_lookup(int code)
{
    for (size_t i = 0; i < ERR_TABLE_LEN; i++)
        if (err_table[i].code == code)
            return &err_table[i];
    return NULL;
}

/* Hand-rolled so this module has no dependency on printf: error reporting must work even
 * when the formatter is what broke. */
static void format_unknown(char *buf, int code)
{
    char digits[ERR_NAME_UNKNOWN_LEN];
    size_t n = 0, pos = 0;
    /* Work in unsigned so INT_MIN negates without overflow. */
    unsigned int mag = code < 0 ? 0u - (unsigned int)code : (unsigned int)code;

    for (const char *p = ERR_UNKNOWN_PREFIX; *p; p++)
        buf[pos++] = *p;
    if (code < 0)
        buf[pos++] = '-';
    do {
        digits[n++] = (char)('0' + mag % 10);
        mag /= 10;
    } while (mag);
    while (n)
        buf[pos++] = digits[--n];
    buf[pos++] = ')';
    buf[pos] = '\0';
}

const char *err_name(int code)
{
    static char unknown[ERR_NAME_UNKNOWN_LEN];
    const struct err_entry *e;

    if (code == E_OK)
        return "E_OK";
    e = err_lookup(code);
    if (e)
        return e->name;
    format_unknown(unknown, code);
    return unknown;
}

const char *err_str(int code)
{
    const struct err_entry *e;

    if (code == E_OK)
        return "success";
    e = err_lookup(code);
    return e ? e->msg : "unknown error";
}
