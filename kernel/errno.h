/* btsx error codes: every fallible function returns 0 or one of these negative values.
 *
 * The X-macro below is the single table: the enum, err_name() and err_str() are all generated
 * from it, so adding a code is one line here and the name/message can never drift apart.
 * Append new codes at the end; values are part of the log format and must not be renumbered.
 */
#ifndef BTSX_KERNEL_ERRNO_H
#define BTSX_KERNEL_ERRNO_H

/*     name         value  message */
#define BTSX_ERRORS(X)                                                                             \
    X(E_INVAL, -1, "invalid argument")                                                             \
    X(E_NOMEM, -2, "out of memory")                                                                \
    X(E_RANGE, -3, "value out of range")                                                           \
    X(E_BUSY, -4, "resource busy")                                                                 \
    X(E_NOTSUP, -5, "not supported")                                                               \
    X(E_QUOTA, -6, "quota exceeded")                                                               \
    X(E_ALIGN, -7, "misaligned address or size")                                                   \
    X(E_STATE, -8, "invalid in the current state")                                                 \
    X(E_FAULT, -9, "bad address")                                                                  \
    X(E_NOENT, -10, "no such entry")                                                               \
    X(E_AGAIN, -11, "try again")                                                                   \
    X(E_OVERFLOW, -12, "arithmetic overflow")                                                      \
    X(E_EXIST, -13, "already exists")                                                              \
    X(E_TOOLONG, -14, "too long or too many")                                                      \
    X(E_TIMEDOUT, -15, "timed out")

enum btsx_err {
    E_OK = 0,
#define BTSX_ERR_ENUM(name, value, msg) name = (value),
    BTSX_ERRORS(BTSX_ERR_ENUM)
#undef BTSX_ERR_ENUM
};

/* Room err_name() needs for "E_UNKNOWN(-2147483648)" plus the NUL. */
#define ERR_NAME_UNKNOWN_LEN 24

/* "E_QUOTA" for E_QUOTA, "E_OK" for 0. An unknown code yields "E_UNKNOWN(<code>)" formatted
 * into a static buffer, so that result is only valid until the next unknown-code call. */
const char *err_name(int code);

/* A short lower-case message ("quota exceeded"); "success" for 0, "unknown error" otherwise. */
const char *err_str(int code);

#endif /* BTSX_KERNEL_ERRNO_H */
