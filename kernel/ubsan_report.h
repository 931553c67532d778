/* What an UndefinedBehaviorSanitizer report does (kernel/ubsan_report.c), in the kernel built
 * with UBSAN=1 only. */
#ifndef BTSX_KERNEL_UBSAN_REPORT_H
#define BTSX_KERNEL_UBSAN_REPORT_H

/* Installs the reporter: from kmain, once the console can print. fail is the test framework's
 * way of failing the running test with a reason (test_fail()); the kernel cannot call the
 * framework, which sits above it. Makes the reports that came before, if any. */
void ubsan_report_init(void (*fail)(const char *fmt, ...));

#endif /* BTSX_KERNEL_UBSAN_REPORT_H */
