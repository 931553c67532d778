/* libFuzzer target: the btsx-report/1 formatter, tests/report.c.
 *
 * Facts, tests and counts from the input, into a buffer of a size from the input (its own
 * allocation: AddressSanitizer sees an overrun). The text (tests/report.h) must be the
 * returned number of bytes, NUL-terminated, within the buffer and REPORT_MAX; its lines
 * "key=value" after the version line, each value printable ASCII; the fixed lines present,
 * the version first and r= last; or nothing at all (0) when the buffer is too small.
 */
#include <stdbool.h>

#include "tests/fuzz/fuzz.h"
#include "tests/report.h"

#define NFACTS 6
#define NTESTS 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = {data, size};
    static const char *const keys[] = {"cpu", "be", "seed", "mc", "apic", "x"};
    static const char *const verdicts[] = {"PASS", "FAIL", "NONE"};
    struct report_fact facts[NFACTS], late[NFACTS];
    struct report_test tests[NTESTS];
    char *strings[2 * NFACTS + 2 * NTESTS + 1];
    unsigned ns = 0;

    size_t bufsize = fz_u8(&in);
    unsigned nfacts = fz_u8(&in) % (NFACTS + 1), nlate = fz_u8(&in) % (NFACTS + 1);
    unsigned ntests = fz_u8(&in) % (NTESTS + 1);
    struct report_facts f = {.facts = facts,
                             .nfacts = nfacts,
                             .late = late,
                             .nlate = nlate,
                             .tests = tests,
                             .ntests = ntests};
    f.passed = (unsigned)fz_bytes_le(&in, 4);
    f.failed = (unsigned)fz_bytes_le(&in, 4);
    f.skipped = (unsigned)fz_bytes_le(&in, 4);
    f.verdict = verdicts[fz_u8(&in) % 3];
    f.version = strings[ns++] = fz_string(&in, 64);
    for (unsigned i = 0; i < nfacts; i++)
        facts[i] = (struct report_fact){keys[i], strings[ns++] = fz_string(&in, 64)};
    for (unsigned i = 0; i < nlate; i++)
        late[i] = (struct report_fact){keys[NFACTS - 1 - i], strings[ns++] = fz_string(&in, 64)};
    for (unsigned i = 0; i < ntests; i++) {
        tests[i].status = (enum report_status)(fz_u8(&in) % 3);
        tests[i].name = strings[ns++] = fz_string(&in, 64);
        tests[i].why = strings[ns++] = fz_string(&in, 64);
    }

    char *buf = malloc(bufsize ? bufsize : 1);
    if (!buf)
        abort();
    memset(buf, '@', bufsize ? bufsize : 1);
    size_t len = report_format(&f, buf, bufsize);
    if (len == 0) {
        fz_check(bufsize == 0 || buf[0] == '\0', "empty report but the buffer is not");
    } else {
        fz_check(len < bufsize && len <= REPORT_MAX && buf[len] == '\0' && strlen(buf) == len,
                 "length %zu in a %zu-byte buffer", len, bufsize);
        fz_check(!strncmp(buf, REPORT_VERSION "\n", sizeof(REPORT_VERSION)), "version line");
        fz_check(buf[len - 1] == '\n', "the text does not end a line");
        bool v = false, n = false, r = false;
        for (char *line = buf + sizeof(REPORT_VERSION); *line;) {
            char *eol = strchr(line, '\n'), *eq = memchr(line, '=', (size_t)(eol - line));
            fz_check(eol && eq && eq > line, "not a key=value line: '%.*s'", (int)(eol - line),
                     line);
            for (char *c = line; c < eol; c++)
                fz_check(*c >= 0x20 && *c < 0x7f, "byte 0x%02x in a line", (unsigned char)*c);
            fz_check(!r, "a line after r=");
            v |= !strncmp(line, "v=", 2);
            n |= !strncmp(line, "n=", 2);
            r |= !strncmp(line, "r=", 2);
            line = eol + 1;
        }
        fz_check(v && n && r, "a fixed line is missing (v %d n %d r %d)", v, n, r);
    }
    free(buf);
    for (unsigned i = 0; i < ns; i++)
        free(strings[i]);
    return 0;
}
