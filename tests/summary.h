/* The end of a run for a person at the machine: the btsx-report/1 block on the serial log
 * (tests/report.h) and the summary screen, which replaces the log's tail on the screen with
 * what a hardware owner came for: the machine, the backend and why, every failure and skip
 * reason, and the verdict (README "The summary screen").
 *
 * The framework feeds it as the run goes: every header line, and every test that did not
 * pass. The facts it shows are the header lines whose keys the table in summary.c lists.
 */
#ifndef BTSX_TESTS_SUMMARY_H
#define BTSX_TESTS_SUMMARY_H

#include "kernel/con_color.h"
#include "tests/ktap.h"
#include "tests/report.h"

/* Columns at the right of the screen kept for the QR code of the report: on VGA text a
 * version-7 symbol (45 modules) with a 2-module quiet zone, or a version-6 one with the
 * standard's 4, one module a column and two a row (docs/report.md "The QR code"). */
#define SUMMARY_QR_COLS       49
/* Narrower screens (or whatever is left of them) get no QR area: all of it is text. */
#define SUMMARY_MIN_TEXT_COLS 24

/* A "# key: value" header line as the framework printed it, without "# " and newline (also
 * each "# char: ..." diagnostic: the envelope's facts). */
void summary_header(const char *line);
/* A test that did not pass: KTAP_FAIL, KTAP_TIMEOUT or KTAP_SKIP with its first diagnostic
 * line (fail), its reason (timeout, skip). Other statuses are ignored. */
void summary_result(const char *name, enum ktap_status st, const char *why);
/* After the KTAP summary line: prints the report between its two marker lines, then encodes
 * it for the screen and prints the "# report qr:" line that names the symbol (or why there
 * is none). */
void summary_report(const struct ktap *k, const char *verdict);
/* Then, if there is a screen, clears it and draws the summary and the report's QR code;
 * verdict in white on verdict_bg. */
void summary_screen(const struct ktap *k, const char *verdict, enum con_color verdict_bg);

/* The marker lines around the report on the serial log (KTAP diagnostics, like the report's
 * own lines, each of which is "# " and one report line). */
#define SUMMARY_REPORT_BEGIN "# ---- begin " REPORT_VERSION " ----"
#define SUMMARY_REPORT_END   "# ---- end " REPORT_VERSION " ----"

#endif
