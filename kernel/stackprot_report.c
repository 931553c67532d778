/* What a smashed canary does once the console and the symbol table are up: a report naming
 * the function whose check failed, then the innermost recovery point ends (the running test
 * fails with the report as its reason), or, with none, a panic. Reached only through
 * stackprot_fail_hook: kernel/stackprot.c calls nothing (see kernel/stackprot.h). */
#include "kernel/stackprot_report.h"

#include "kernel/panic.h"
#include "kernel/printf.h"
#include "kernel/recover.h"
#include "kernel/stackprot.h"
#include "kernel/symbols.h"

static void __attribute__((noreturn)) stackprot_report(uint64_t at)
{
    /* Static: the message outlives this frame (recover_abort_here() keeps the pointer). */
    static char why[128];
    char where[64];
    symbol_format(at, where, sizeof(where));
    ksnprintf(why, sizeof(why), "stack protector: canary overwritten, found at %s", where);
    if (recover_active())
        recover_abort_here(why);
    panic("%s", why);
}

void stackprot_report_init(void)
{
    stackprot_fail_hook = stackprot_report;
}
