/* btsx-report/1: the run's facts as a compact, versioned text a phone can read from a QR code
 * on the summary screen and a host tool can read from the serial log (docs/report.md).
 *
 * Pure: report_format() only formats (it builds on the host for tests/unit/test_report.c);
 * tests/summary.c gathers the facts. One "key=value" line each, the version line first:
 *
 *   btsx-report/1
 *   v=0.1.0                       btsx version
 *   cpu=QEMU TCG CPU version 2.5+ (each fact of the run: report_fact keys)
 *   n=12/4/2                      passed/failed/skipped, as the KTAP summary counts them
 *   f=selftest.fail:expected 5    a failed test and its first diagnostic line
 *   t=selftest.hang:after 50 ms   a timed-out test and its reason
 *   s=2:no BTS                    how many tests were skipped for one reason, and the reason
 *   more=3                        fact, failure or skip lines left out for the size limit
 *   r=FAIL                        verdict: PASS, FAIL or NONE (no test ran)
 *
 * A value never holds a line break: '\\' is written "\\\\", a byte outside printable ASCII
 * "\\xHH". A value longer than REPORT_VALUE_MAX bytes is cut and ends in REPORT_CUT.
 */
#ifndef BTSX_TESTS_REPORT_H
#define BTSX_TESTS_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#define REPORT_VERSION   "btsx-report/1"
/* The whole text, newlines included: what a version-7 QR symbol at level L holds in byte mode
 * (154 bytes). Its 45x45 modules and a 2-module quiet zone are 49 modules: 49 columns and the
 * 25 rows of an 80x25 text screen at two modules a cell (tests/summary.h, SUMMARY_QR_COLS). */
#define REPORT_MAX       154
#define REPORT_VALUE_MAX 28  /* bytes of one value after escaping, REPORT_CUT included */
#define REPORT_CUT       "~" /* ends a value that was cut */

enum report_status { REPORT_FAIL, REPORT_TIMEOUT, REPORT_SKIP };

struct report_fact {
    const char *key; /* short, [a-z]+ */
    const char *value;
};

struct report_test {
    const char *name;
    enum report_status status;
    const char *why; /* first diagnostic line (fail, timeout) or the skip reason */
};

struct report_facts {
    const char *version;
    const struct report_fact *facts; /* in output order; a NULL or empty value is left out */
    unsigned nfacts;
    const struct report_fact *late; /* facts that matter less than the failures: after them */
    unsigned nlate;
    unsigned passed, failed, skipped;
    const struct report_test *tests; /* the failed, timed-out and skipped tests, in run order */
    unsigned ntests;
    const char *verdict; /* "PASS", "FAIL" or "NONE" */
};

/* Writes the report into buf (at most size bytes, NUL included) and returns its length.
 * The version line, v=, n= and r= always appear. Then, in this order, the facts, (n=,) the
 * failures, the late facts and the skip groups, as long as they fit REPORT_MAX (and size);
 * from the first one that does not, the rest are left out and counted in one "more=N" line
 * before r=.
 * Returns 0 (buf empty) if size cannot hold even the fixed lines. */
size_t report_format(const struct report_facts *f, char *buf, size_t size);

#endif
