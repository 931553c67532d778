/* What an UndefinedBehaviorSanitizer report does once the console is up. Inside a test (under a
 * recovery point) the report fails the running test, which goes on: the operation already
 * happened, with whatever result the machine gave, as in the ordinary kernel, so the test
 * fails with the report as its reason and the run continues. A report that cannot go on (code
 * marked unreachable was reached) ends the test instead, through its recovery point. Outside
 * any test (booting, between tests) the kernel panics: nothing would fail otherwise. Reached
 * only through ubsan_report_hook: kernel/ubsan.c calls nothing (see kernel/ubsan.h). Built
 * without the sanitizer, like kernel/ubsan.c. */
#include "kernel/ubsan_report.h"

#include "kernel/panic.h"
#include "kernel/recover.h"
#include "kernel/ubsan.h"

static void (*fail_test)(const char *fmt, ...);

static void report(const char *text, bool fatal)
{
    if (!recover_active())
        panic("%s", text);
    if (fail_test)
        fail_test("%s", text);
    if (fatal)
        recover_abort_here(text); /* kernel/ubsan.c keeps the text for us */
}

void ubsan_report_init(void (*fail)(const char *fmt, ...))
{
    fail_test = fail;
    ubsan_report_hook = report;
    const char *first;
    unsigned n = ubsan_early_reports(&first);
    if (n)
        panic("%u report(s) before the console was up, the first: %s", n, first);
}
