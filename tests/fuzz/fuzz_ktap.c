/* libFuzzer target: the KTAP emitter, tests/ktap.c.
 *
 * The input is a sequence of calls (header line, plan, diagnostic, result with any status,
 * summary) with strings from the input. Every line handed to put() must be one KTAP line: a
 * terminated string shorter than KTAP_LINE_MAX ending in its only '\n', with no '\r'; every
 * result line is "ok N " or "not ok N " with N the next number, and the counters add up.
 */
#include <stdbool.h>

#include "tests/fuzz/fuzz.h"
#include "tests/ktap.h"

struct sink {
    unsigned lines, results;
};

static void put(const char *line, void *ctx)
{
    struct sink *s = ctx;
    size_t len = strnlen(line, KTAP_LINE_MAX);
    fz_check(len < KTAP_LINE_MAX, "a line of %zu bytes or more", len);
    fz_check(len >= 1 && line[len - 1] == '\n' && !memchr(line, '\n', len - 1),
             "line %u is not one line: '%s'", s->lines, line);
    fz_check(!memchr(line, '\r', len), "a carriage return in '%s'", line);
    if (s->lines == 0)
        fz_check(!strcmp(line, KTAP_VERSION_LINE "\n"), "first line '%s'", line);
    s->lines++;
    unsigned n;
    int used = 0;
    if (sscanf(line, "ok %u%n", &n, &used) == 1 || sscanf(line, "not ok %u%n", &n, &used) == 1) {
        fz_check(n == ++s->results, "result %u numbered %u", s->results, n);
        fz_check(line[used] == ' ' && line[used + 1] != '#' && line[used + 1] != '\n',
                 "a result line without a name: '%s'", line);
    } else {
        fz_check(line[0] == '#' || !strncmp(line, "1..", 3) || s->lines == 1,
                 "neither result, plan nor diagnostic: '%s'", line);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = {data, size};
    struct sink s = {0, 0};
    struct ktap k;
    ktap_begin(&k, put, &s);

    for (unsigned op = 0; op < 32 && in.left; op++) {
        uint8_t code = fz_u8(&in);
        char *a = fz_string(&in, 3 * KTAP_LINE_MAX);
        int rc;
        switch (code % 5) {
        case 0:
            rc = ktap_header_line(&k, "%s", a);
            fz_check(rc == 0 || rc == E_STATE, "header rc %d", rc);
            break;
        case 1:
            rc = ktap_plan(&k, fz_u8(&in));
            fz_check(rc == 0 || rc == E_STATE, "plan rc %d", rc);
            break;
        case 2:
            fz_check(ktap_diag(&k, "%s", a) == 0, "diag failed");
            break;
        case 3: {
            unsigned before = ktap_count(&k);
            enum ktap_status st = (enum ktap_status)(code / 5 % 6); /* 5: not a status */
            char *why = fz_string(&in, 3 * KTAP_LINE_MAX);
            rc = code & 0x80 ? ktap_result(&k, st, a, NULL) : ktap_result(&k, st, a, "%s", why);
            fz_check(rc == 0 || rc == E_INVAL, "result rc %d", rc);
            fz_check(ktap_count(&k) == before + (rc == 0), "count after rc %d", rc);
            free(why);
            break;
        }
        default:
            ktap_summary(&k);
            break;
        }
        free(a);
        fz_check(k.passed + k.failed + k.skipped == ktap_count(&k) && s.results == ktap_count(&k),
                 "counters %u+%u+%u, %u results", k.passed, k.failed, k.skipped, s.results);
    }
    return 0;
}
