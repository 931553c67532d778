/*
 * The in-kernel test framework. A test is declared with TEST(suite, name, description,
 * timeout_ms) { body }, which places a descriptor in the .btsx_tests linker section; the
 * runner selects tests by glob (tests=...), runs each inside a recovery point with a LAPIC
 * watchdog, and reports KTAP. A test's status only gets worse: pass < skip < fail.
 */
#ifndef BTSX_TESTS_TEST_H
#define BTSX_TESTS_TEST_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/printf.h"

#define TEST_TIMEOUT_DEFAULT_MS 10000
#define TEST_FLAG_SELFTEST      (1u << 0) /* only with selftest=1: built to go wrong */

struct test_case {
    const char *name; /* "suite.case" */
    const char *desc;
    void (*fn)(void);
    unsigned timeout_ms;
    unsigned flags;
    const char *file; /* tests run in link order of files, declaration order within */
    unsigned line;
};

/* The general form: sym names the C function, name is the KTAP name. */
#define TEST_DEFINE(sym, name, description, timeout, fl)                                           \
    static void test_##sym(void);                                                                  \
    static const struct test_case tc_##sym                                                         \
        __attribute__((used, section(".btsx_tests." #sym), aligned(8))) = {                        \
            name, description, test_##sym, timeout, fl, __FILE__, __LINE__,                        \
    };                                                                                             \
    static void test_##sym(void)
#define TEST_FLAGS(suite, case, description, timeout, fl)                                          \
    TEST_DEFINE(suite##_##case, #suite "." #case, description, timeout, fl)
#define TEST(suite, case, description, timeout) TEST_FLAGS(suite, case, description, timeout, 0)

/* Results, from inside a test. */
void test_fail(const char *fmt, ...) BTSX_PRINTF_LIKE(1, 2);
void test_skip(const char *fmt, ...) BTSX_PRINTF_LIKE(1, 2);
void test_diag(const char *fmt, ...) BTSX_PRINTF_LIKE(1, 2);
/* Diagnostics shown only with `verbose`. */
void test_info(const char *fmt, ...) BTSX_PRINTF_LIKE(1, 2);
bool test_failed(void);
/* The running test's name; whether `dump` asked for every collected trace to be printed. */
const char *test_current_name(void);
bool test_dump_traces(void);
struct fault_info;
/* Runs fn(arg) and reports whether it faulted, with the details; a watchdog timeout inside
 * still ends the test. */
bool test_expect_fault(void (*fn)(void *), void *arg, struct fault_info *fault);

#define CHECK(cond, ...)                                                                           \
    ({                                                                                             \
        bool ok_ = (cond);                                                                         \
        if (!ok_) {                                                                                \
            test_diag("check failed at %s:%d: %s", __FILE__, __LINE__, #cond);                     \
            test_fail(__VA_ARGS__);                                                                \
        }                                                                                          \
        ok_;                                                                                       \
    })
#define CHECK_EQ(a, b)                                                                             \
    ({                                                                                             \
        uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                           \
        bool ok_ = a_ == b_;                                                                       \
        if (!ok_)                                                                                  \
            test_fail("%s:%d: %s == %#lx, expected %s == %#lx", __FILE__, __LINE__, #a, a_, #b,    \
                      b_);                                                                         \
        ok_;                                                                                       \
    })

/* The run's pseudo-random numbers (xorshift64*, seeded from `seed=`). */
uint64_t test_rand(void);
uint64_t test_seed(void);
/* How much of a long test's full volume (a count of branches, rounds, ...) this run does:
 * volume=quick scales it down to a tenth (at least 1). */
uint64_t test_volume(uint64_t full);
/* A test that is long by design (a soak: rand.programs=1000000) says it is still making
 * progress: its watchdog (LAPIC and NMI) counts its timeout again from now. */
void test_progress(void);

/* Hooks run after every test, whatever its outcome, to put shared state back (disable
 * tracing, EOI abandoned interrupts, ...). Registered like tests, in their own section. */
struct test_cleanup {
    const char *name;
    void (*fn)(void);
};
#define TEST_CLEANUP(fn_)                                                                          \
    static const struct test_cleanup cleanup_##fn_                                                 \
        __attribute__((used, section(".btsx_cleanup"), aligned(8))) = {#fn_, fn_}

/* Header lines other layers add (for example the DS layer's backend choice). */
struct test_header {
    void (*fn)(void (*line)(const char *fmt, ...));
};
#define TEST_HEADER(fn_)                                                                           \
    static const struct test_header header_##fn_                                                   \
        __attribute__((used, section(".btsx_header"), aligned(8))) = {fn_}

/* Runs the tests the framework's options select (tests=, selftest) and ends the machine with
 * the contract's exit code; cmdline is the line for the header, cmdline_error (if set) why it
 * was refused, and then no test runs. */
__attribute__((noreturn)) void test_run_all(const char *cmdline, const char *cmdline_error);

#endif
