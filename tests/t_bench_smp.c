/*
 * bench.smp_stream: stream throughput with one CPU and with two CPUs tracing at once, measured
 * in the same run (tests/smpstream.h: a tracee and its tracer on each CPU, the stream policy,
 * nothing lost). A figure, not a verdict: it prints the ratio of the records moved per second
 * by two CPUs to those moved by one against the target (at least 1.6 on two cores; an emulator
 * whose vCPUs share a loaded host's cores may not reach it), and fails only if a stream fails
 * or it cannot measure. Skips on one CPU.
 *
 * Beside it, in the same run, what the machine itself gives two CPUs: a loop that never traps,
 * and a loop that takes a software interrupt every pass, as the model takes a #DB at every
 * instruction it steps. On hardware both ratios come near 2. QEMU TCG delivers every exception
 * holding its global lock, so its vCPUs take exceptions one at a time: the trap loop's ratio is
 * the ceiling of the model's streams there, and the stream's ratio is read against it.
 */
#include "kernel/apic.h"
#include "kernel/cpu.h"
#include "kernel/smp.h"
#include "kernel/trap.h"
#include "sched/sched.h"
#include "tests/btscheck.h"
#include "tests/smpstream.h"
#include "tests/test.h"

#define BENCH_LOOPS                                                                                \
    (test_volume(200000) + 1) /* per stream: a rate, not a soak (make check runs it) */
#define RATIO_SCALE 100
#define TARGET_X100 160
#define MAX_CPUS    2

/* Streams on CPUs 0..ncpus-1 at once; the records moved per second, or 0 on a failure. */
static uint64_t streams(unsigned ncpus)
{
    static struct stream_job jobs[MAX_CPUS];
    struct task *tracers[MAX_CPUS] = {0};
    unsigned made = 0;
    for (; made < ncpus; made++) {
        jobs[made] = (struct stream_job){.cpu = made, .loops = BENCH_LOOPS};
        if (!stream_prepare(&jobs[made]))
            break;
        tracers[made] = task_create_on(made, "tracer", stream_drain, &jobs[made]);
        if (!CHECK(tracers[made], "no tracer task on cpu %u", made)) {
            bts_release(&jobs[made].tr);
            jobs[made].ready = false;
            task_launch(jobs[made].tracee); /* untraced: it runs to its end */
            task_join(jobs[made].tracee, NULL);
            break;
        }
    }
    /* Started together, timed from the first start to the last tracer's end. */
    uint64_t t0 = rdtsc(), records = 0;
    for (unsigned i = 0; i < made; i++)
        stream_start(&jobs[i], tracers[i]);
    for (unsigned i = 0; i < made; i++)
        task_join(tracers[i], NULL);
    uint64_t us = tsc_to_us(rdtsc() - t0);
    for (unsigned i = 0; i < made; i++) {
        records += jobs[i].jnz + jobs[i].irets;
        stream_finish(&jobs[i], ncpus == 1 ? "one cpu" : "two cpus");
    }
    if (made < ncpus || test_failed() || us == 0)
        return 0;
    uint64_t rate = records * 1000000 / us;
    test_diag("bench: smp stream, %u CPU%s tracing: %lu records in %lu ms, %lu records/s", ncpus,
              ncpus == 1 ? "" : "s", records, us / 1000, rate);
    return rate;
}

/* Passes per CPU: a few hundred milliseconds each under QEMU TCG. */
#define PLAIN_PASSES (test_volume(40000000) + 1)
#define TRAP_PASSES  (test_volume(300000) + 1)

static void plain_loop(void *arg)
{
    uint64_t n = *(const uint64_t *)arg;
    __asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n));
}

static void trap_loop(void *arg)
{
    for (uint64_t n = *(const uint64_t *)arg; n; n--)
        __asm__ volatile("int %0" : : "i"(VEC_TEST_SOFTINT) : "memory");
}

static void ignore_trap(struct trap_frame *f)
{
    (void)f;
}

/* Runs fn(passes) on CPUs 0..ncpus-1 at once; passes per second over all, or 0 on a failure. */
static uint64_t loops(unsigned ncpus, void (*fn)(void *), uint64_t passes)
{
    struct task *t[MAX_CPUS] = {0};
    uint64_t t0 = rdtsc();
    unsigned made = 0;
    for (; made < ncpus; made++)
        if (!CHECK(t[made] = task_create_on(made, "loop", fn, &passes), "no task on cpu %u", made))
            break;
    for (unsigned i = 0; i < made; i++)
        task_join(t[i], NULL);
    uint64_t us = tsc_to_us(rdtsc() - t0);
    return made < ncpus || us == 0 ? 0 : passes * ncpus * 1000000 / us;
}

/* The ratio of two CPUs' rate to one's, times RATIO_SCALE (0: no figure). */
static uint64_t loop_ratio(const char *what, void (*fn)(void *), uint64_t passes)
{
    uint64_t one = loops(1, fn, passes), two = one ? loops(2, fn, passes) : 0;
    if (!one || !two)
        return 0;
    uint64_t r = two * RATIO_SCALE / one;
    test_diag("bench: smp %s, %lu passes/s on 1 CPU, %lu on 2: ratio %lu.%02lu", what, one, two,
              r / RATIO_SCALE, r % RATIO_SCALE);
    return r;
}

TEST(bench, smp_stream, "stream throughput with 1 and with 2 CPUs tracing at once (a figure)",
     600000)
{
    if (smp_online() < MAX_CPUS) {
        test_skip("one CPU online: nothing to compare");
        return;
    }
    if (!bts_require())
        return;
    uint64_t plain = loop_ratio("plain loop", plain_loop, PLAIN_PASSES);
    trap_handler_t old = trap_set_handler(VEC_TEST_SOFTINT, ignore_trap);
    trap_handler_t old_ap = trap_set_ap_handler(VEC_TEST_SOFTINT, ignore_trap);
    uint64_t trap = loop_ratio("trap loop (an interrupt per pass)", trap_loop, TRAP_PASSES);
    trap_set_handler(VEC_TEST_SOFTINT, old);
    trap_set_ap_handler(VEC_TEST_SOFTINT, old_ap);
    if (!CHECK(plain && trap, "no figure: a loop task failed"))
        return;
    uint64_t one = streams(1);
    uint64_t two = one ? streams(2) : 0;
    if (!CHECK(one && two, "no figure: a stream failed"))
        return;
    uint64_t r = two * RATIO_SCALE / one;
    test_diag("bench: smp stream 2/1 CPUs ratio %lu.%02lu (target >= %u.%02u): %s; the trap "
              "loop's %lu.%02lu, the plain loop's %lu.%02lu",
              r / RATIO_SCALE, r % RATIO_SCALE, TARGET_X100 / RATIO_SCALE,
              TARGET_X100 % RATIO_SCALE, r >= TARGET_X100 ? "met" : "MISSED", trap / RATIO_SCALE,
              trap % RATIO_SCALE, plain / RATIO_SCALE, plain % RATIO_SCALE);
}
