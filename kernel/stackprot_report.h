/* The stack protector's reporter (kernel/stackprot_report.c). */
#ifndef BTSX_KERNEL_STACKPROT_REPORT_H
#define BTSX_KERNEL_STACKPROT_REPORT_H

/* Installs it: from kmain, once the console can print. */
void stackprot_report_init(void);

#endif /* BTSX_KERNEL_STACKPROT_REPORT_H */
