/* The test runner: selection, containment (faults, hangs), KTAP output, verdict and exit. */
#include "tests/test.h"

#include <stdarg.h>

#include "ds/bts.h"
#include "kernel/apic.h"
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/glob.h"
#include "kernel/nmiwd.h"
#include "kernel/recover.h"
#include "kernel/shutdown.h"
#include "kernel/string.h"
#include "kernel/symbols.h"
#include "kernel/timer.h"
#include "sched/sched.h"
#include "tests/ktap.h"
#include "tests/summary.h"

#define BTSX_VERSION "0.1.0"
#define MAX_TESTS    512
#define MAX_GLOBS    32 /* the mutation run (tools/btsx/mutate.py) names up to 32 */
#define GLOB_LEN     64 /* including the NUL: a glob has at most 63 characters */

extern const struct test_case __tests_start[], __tests_end[];
extern const struct test_cleanup __cleanup_start[], __cleanup_end[];
extern const struct test_header __header_start[], __header_end[];

enum outcome { OUT_PASS, OUT_SKIP, OUT_FAIL }; /* ordered: status only gets worse */

/* The framework's options; each is described in the README's option table. */
static char globs[MAX_GLOBS][GLOB_LEN];
static unsigned nglobs; /* 0: every test */
OPTION_LIST("tests", "GLOB[,GLOB...]", "glob", globs, nglobs);
static uint64_t seed_opt;
static bool seed_given; /* else the TSC at boot */
OPTION_U64("seed", seed_opt, seed_given);
static bool verbose;
OPTION_FLAG("verbose", verbose);
static bool selftest; /* also run the tests built to go wrong (TEST_FLAG_SELFTEST) */
OPTION_FLAG("selftest", selftest);
static bool dump;
OPTION_FLAG("dump", dump);
/* The long tests' volume: full, or a tenth of it where an emulator steps slowly (Bochs: a
 * million single steps take minutes) and the run is about the CPU model, not the volume. */
static int volume_div = 1;
OPTION_CHOICE("volume", volume_div, {"full", 1}, {"quick", 10});

static struct ktap ktap;
static const struct test_case *running;
static enum outcome outcome;
static char reason[KTAP_LINE_MAX];
static uint64_t rng_state, seed;
static bool reported[MAX_TESTS];
static const struct test_case *order[MAX_TESTS];

/* The compiler may emit a file's descriptors in any order; put them back in source order:
 * files keep their link order, tests within a file go by line. */
static unsigned collect_tests(void)
{
    unsigned n = 0;
    for (const struct test_case *tc = __tests_start; tc < __tests_end && n < MAX_TESTS; tc++) {
        unsigned i = n++;
        while (i > 0 && order[i - 1]->file == tc->file && order[i - 1]->line > tc->line) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = tc;
    }
    return n;
}

static void ktap_out(const char *line, void *ctx)
{
    (void)ctx;
    kputs(line);
}

static void vset_outcome(enum outcome o, const char *fmt, va_list ap)
{
    if (o < outcome)
        return;
    if (o > outcome || reason[0] == '\0')
        kvsnprintf(reason, sizeof(reason), fmt, ap);
    outcome = o;
}

void test_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    va_list aq;
    va_copy(aq, ap);
    char msg[KTAP_LINE_MAX];
    kvsnprintf(msg, sizeof(msg), fmt, aq);
    va_end(aq);
    ktap_diag(&ktap, "FAIL: %s", msg);
    vset_outcome(OUT_FAIL, fmt, ap);
    va_end(ap);
}

void test_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vset_outcome(OUT_SKIP, fmt, ap);
    va_end(ap);
}

static void vdiag(const char *fmt, va_list ap)
{
    char msg[KTAP_LINE_MAX * 2];
    kvsnprintf(msg, sizeof(msg), fmt, ap);
    ktap_diag(&ktap, "%s", msg);
    /* The envelope's facts (tests/t_char.c) are for the summary screen too. */
    if (strncmp(msg, "char: ", 6) == 0)
        summary_header(msg);
}

void test_diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vdiag(fmt, ap);
    va_end(ap);
}

void test_info(const char *fmt, ...)
{
    if (!verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    vdiag(fmt, ap);
    va_end(ap);
}

bool test_expect_fault(void (*fn)(void *), void *arg, struct fault_info *fault)
{
    struct recovery r = {.report = false};
    enum recover_reason why = recover_run(&r, fn, arg);
    if (why == RECOVER_TIMEOUT)
        recover_propagate(why); /* the watchdog is the test's, not the probe's */
    if (why == RECOVER_ABORT)
        recover_abort_here(r.why); /* a broken stack is the test's failure, not a fault */
    *fault = r.fault;
    return why == RECOVER_FAULT;
}

bool test_failed(void)
{
    return outcome == OUT_FAIL;
}

const char *test_current_name(void)
{
    return running ? running->name : "none";
}

bool test_dump_traces(void)
{
    return dump;
}
uint64_t test_seed(void)
{
    return seed;
}

uint64_t test_volume(uint64_t full)
{
    uint64_t n = full / (uint64_t)volume_div;
    return n ? n : 1;
}

uint64_t test_rand(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1DULL;
}

static bool selected(const struct test_case *tc)
{
    if ((tc->flags & TEST_FLAG_SELFTEST) && !selftest)
        return false;
    if (nglobs == 0)
        return true;
    for (unsigned i = 0; i < nglobs; i++)
        if (glob_match(globs[i], tc->name))
            return true;
    return false;
}

/* Once the watchdog ended a task, it looks again this often for the rest of the test. */
#define WATCHDOG_GRACE_US   500000
/* The NMI watchdog comes this long after the LAPIC one, so it only ever fires when the test is
 * overdue and the LAPIC timer could not stop it (interrupts off). */
#define NMI_WATCHDOG_LAG_US 200000
static bool watchdog_hit;
static int watchdog_timer = -1; /* the running test's LAPIC watchdog timer */

static void nmi_watchdog_fired(struct trap_frame *f);
static void watchdog_fired(struct trap_frame *f, void *arg);

/* The lag after the deadline: the other CPUs that have not answered spin with interrupts off. */
static void watchdog_nmi_aps(struct trap_frame *f, void *arg)
{
    (void)f;
    (void)arg;
    sched_watchdog_nmi();
}

/* aps: also ask the other CPUs to end the test's tasks they run (not from the NMI, which may
 * have interrupted an IPI being sent: the cleanup asks them then, sched_watchdog_collect()). */
static void watchdog_end(struct trap_frame *f, bool aps)
{
    unsigned asked = aps ? sched_watchdog_ask() : 0;
    if (asked)
        timer_start_us(NMI_WATCHDOG_LAG_US, watchdog_nmi_aps, NULL);
    if (!sched_in_runner()) {
        /* The test's tasks are what hangs: end the one running (or, if nothing can run,
         * make the runner's wait give up), and keep watching. A task of the test on another
         * CPU ends there and wakes its joiner, so the runner is left to that at the deadline;
         * from the grace period on, it gives up whatever it waits for. */
        bool again = watchdog_hit;
        watchdog_hit = true;
        timer_start_us(WATCHDOG_GRACE_US, watchdog_fired, NULL);
        nmi_watchdog_arm_us(WATCHDOG_GRACE_US + NMI_WATCHDOG_LAG_US, nmi_watchdog_fired);
        if (!sched_in_idle())
            sched_abort_current("stopped by the watchdog");
        else if (!asked || again)
            sched_abort_runner();
        return;
    }
    if (!recover_from_trap(f, RECOVER_TIMEOUT))
        kprintf("# watchdog fired outside a test\n");
}

static void watchdog_fired(struct trap_frame *f, void *arg)
{
    (void)arg;
    watchdog_end(f, true);
}

/* The test ran past its deadline with interrupts off: say where, then end it like the LAPIC
 * watchdog would have. The NMI may have landed where its frame stays on the NMI IST stack
 * (kernel/isr.S: the SYSCALL window, or code on another IST stack; trap_can_block() is false
 * there). Both ways of ending are still right there, because neither ever returns to the
 * interrupted context, so nothing depends on that stack surviving: task_exit() abandons the
 * task with whatever it had on the IST stack (the next NMI may overwrite it), and
 * recover_from_trap() IRETs to a trampoline on the runner's own stack. What would be wrong
 * there is anything that blocks and comes back, which the watchdog never does. */
static void nmi_watchdog_fired(struct trap_frame *f)
{
    char sym[SYMBOL_TEXT_MAX];
    symbol_format(f->rip, sym, sizeof(sym));
    ktap_diag(&ktap, "NMI watchdog: %s overdue with interrupts %s, at %s (RIP %#lx, RFLAGS %#lx)",
              test_current_name(), (f->rflags & RFLAGS_IF) ? "on" : "off", sym, f->rip, f->rflags);
    if (!trap_from_user(f))
        backtrace_from(f->rbp, kprintf_diag);
    watchdog_end(f, false);
}

static void run_fn(void *arg)
{
    const struct test_case *tc = arg;
    irq_enable();
    tc->fn();
    irq_disable();
}

void test_progress(void)
{
    bool irq = irq_save();
    /* Once the watchdog fired, the test is being stopped: nothing to push back. */
    if (running && !watchdog_hit && watchdog_timer >= 0) {
        unsigned timeout = running->timeout_ms ? running->timeout_ms : TEST_TIMEOUT_DEFAULT_MS;
        timer_cancel(watchdog_timer);
        watchdog_timer = timer_start_us((uint64_t)timeout * 1000, watchdog_fired, NULL);
        nmi_watchdog_arm_us((uint64_t)timeout * 1000 + NMI_WATCHDOG_LAG_US, nmi_watchdog_fired);
    }
    irq_restore(irq);
}

static void cleanup_after_test(bool timed_out)
{
    irq_disable();
    nmi_watchdog_cancel();
    timer_cancel_all();
    watchdog_timer = -1;
    /* Before the cleanups free the test's tasks: none may still run on another CPU. */
    if (timed_out)
        sched_watchdog_collect(NMI_WATCHDOG_LAG_US, WATCHDOG_GRACE_US);
    for (const struct test_cleanup *c = __cleanup_start; c < __cleanup_end; c++)
        c->fn();
    unsigned stuck = apic_eoi_all();
    if (stuck)
        ktap_diag(&ktap, "cleanup: %u interrupt(s) left in service, EOI sent", stuck);
}

static void run_one(const struct test_case *tc, unsigned index)
{
    outcome = OUT_PASS;
    reason[0] = '\0';
    running = tc;
    watchdog_hit = false;
    struct recovery r = {.report = true};
    unsigned timeout = tc->timeout_ms ? tc->timeout_ms : TEST_TIMEOUT_DEFAULT_MS;
    uint64_t t0 = rdtsc();
    watchdog_timer = timer_start_us((uint64_t)timeout * 1000, watchdog_fired, NULL);
    nmi_watchdog_arm_us((uint64_t)timeout * 1000 + NMI_WATCHDOG_LAG_US, nmi_watchdog_fired);
    enum recover_reason why = recover_run(&r, run_fn, (void *)tc);
    cleanup_after_test(why == RECOVER_TIMEOUT || watchdog_hit);
    uint64_t us = tsc_to_us(rdtsc() - t0);

    if (verbose)
        ktap_diag(&ktap, "%s took %lu us", tc->name, us);
    /* st and line: the result and its first diagnostic line, for the summary too. */
    enum ktap_status st = KTAP_PASS;
    char line[KTAP_LINE_MAX];
    strlcpy(line, reason, sizeof(line));
    if (why == RECOVER_TIMEOUT || watchdog_hit) {
        st = KTAP_TIMEOUT;
        ksnprintf(line, sizeof(line), "after %u ms", timeout);
    } else if (why == RECOVER_FAULT) {
        st = KTAP_FAIL;
        if (outcome != OUT_FAIL)
            ksnprintf(line, sizeof(line), "exception %u (%s)", r.fault.vector,
                      trap_vector_name(r.fault.vector));
    } else if (why == RECOVER_ABORT) {
        st = KTAP_FAIL;
        strlcpy(line, r.why, sizeof(line));
    } else if (outcome == OUT_FAIL) {
        st = KTAP_FAIL;
    } else if (outcome == OUT_SKIP) {
        st = KTAP_SKIP;
    }
    if (st == KTAP_TIMEOUT || st == KTAP_SKIP)
        ktap_result(&ktap, st, tc->name, "%s", line);
    else
        ktap_result(&ktap, st, tc->name, NULL);
    if (why == RECOVER_FAULT)
        ktap_diag(&ktap, "^ %s ended by exception %u (%s)", tc->name, r.fault.vector,
                  trap_vector_name(r.fault.vector));
    else if (why == RECOVER_ABORT)
        ktap_diag(&ktap, "^ %s ended: %s", tc->name, r.why);
    summary_result(tc->name, st, line);
    if (index < MAX_TESTS)
        reported[index] = true;
}

static void header_line(const char *fmt, ...)
{
    char buf[KTAP_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    kvsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    ktap_header_line(&ktap, "%s", buf);
    summary_header(buf);
}

static void print_header(const char *cmdline)
{
    ktap_begin(&ktap, ktap_out, NULL);
    header_line("btsx %s", BTSX_VERSION);
    /* The microcode revision last: anything matching the text before it still matches. */
    uint32_t ucode;
    char ucode_text[16] = "unknown";
    if (cpu_microcode_rev(&ucode) == 0)
        ksnprintf(ucode_text, sizeof(ucode_text), "0x%x", ucode);
    header_line("cpu: %s (family %#x model %#x stepping %u) ucode %s", cpu_caps.brand,
                cpu_caps.family, cpu_caps.model, cpu_caps.stepping, ucode_text);
    header_line("hypervisor: %s", cpu_caps.hypervisor[0] ? cpu_caps.hypervisor : "none");
    header_line("boot: %s", boot_path_name(boot_info.path));
    header_line("screen: %s %ux%u", console_screen_name(), boot_info.fb.width, boot_info.fb.height);
    header_line("cmdline: %s", cmdline);
    header_line("seed: %lu", seed);
    header_line("volume: %s", volume_div == 1 ? "full" : "quick (the long tests run a tenth)");
    header_line("apic: %s%s, timer %lu Hz (%s), tsc %lu Hz", apic_is_x2apic() ? "x2apic" : "xapic",
                apic_note(), apic_timer_hz(), apic_timer_source(), tsc_hz());
    header_line("watchdog: %s", nmi_watchdog_describe());
    for (const struct test_header *h = __header_start; h < __header_end; h++)
        h->fn(header_line);
}

static __attribute__((noreturn)) void finish(enum exit_code code)
{
    ktap_summary(&ktap);
    bool pass = code == EXIT_CODE_PASS;
    const char *verdict = pass ? "PASS" : code == EXIT_CODE_FAILURE ? "FAIL" : "NO TESTS RUN";
    summary_report(&ktap, verdict);
    /* The verdict, in colour on the screen; a KTAP diagnostic line on serial. */
    enum con_color bg = pass ? CON_GREEN : CON_RED;
    console_set_color(CON_WHITE, bg);
    kprintf("# verdict: %s", verdict);
    console_set_color(CON_LIGHT_GREY, CON_BLACK);
    kputs("\n");
    /* Last, so that whatever the exit does (QEMU's exit port, a halt) this stays on screen. */
    summary_screen(&ktap, verdict, bg);
    machine_exit(code);
}

void test_run_all(const char *cmdline, const char *cmdline_error)
{
    seed = seed_given ? seed_opt : rdtsc();
    rng_state = seed ? seed : 1;
    bts_model_seed(seed);
    print_header(cmdline);

    if (cmdline_error) {
        ktap_diag(&ktap, "error: bad command line: %s", cmdline_error);
        ktap_plan(&ktap, 0);
        finish(EXIT_CODE_NO_TESTS);
    }

    unsigned total = collect_tests(), n = 0;
    for (unsigned i = 0; i < total; i++)
        n += selected(order[i]);
    if (n == 0) {
        ktap_diag(&ktap, "error: the selection matches no test (%u glob(s) given, %u tests built)",
                  nglobs, total);
        ktap_plan(&ktap, 0);
        finish(EXIT_CODE_NO_TESTS);
    }
    ktap_plan(&ktap, n + 1); /* + framework.all_reported */

    unsigned index = 0;
    for (unsigned i = 0; i < total; i++)
        if (selected(order[i]))
            run_one(order[i], index++);

    /* The synthetic last check: every selected test reported exactly once. */
    unsigned missing = 0;
    for (unsigned i = 0; i < n && i < MAX_TESTS; i++)
        missing += !reported[i];
    if (total == MAX_TESTS || missing || ktap_count(&ktap) != n)
        ktap_result(&ktap, KTAP_FAIL, "framework.all_reported", NULL);
    else
        ktap_result(&ktap, KTAP_PASS, "framework.all_reported", NULL);

    finish(ktap.failed ? EXIT_CODE_FAILURE : EXIT_CODE_PASS);
}
