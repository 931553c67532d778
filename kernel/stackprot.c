/* The stack protector's canary, chosen at boot, and the compiler's call when a frame's copy
 * changed (the report itself is kernel/stackprot_report.c's). */
#include "kernel/stackprot.h"

#include <stdbool.h>

#include "kernel/cpu.h"

#define CPUID_1_ECX_RDRAND    (1u << 30) /* SDM Vol. 2A, CPUID leaf 01H, ECX bit 30 */
#define CPUID_7_EBX_RDSEED    (1u << 18) /* SDM Vol. 2A, CPUID leaf 07H subleaf 0, EBX bit 18 */
#define RANDOM_RETRIES        10         /* then the next source */
#define CANARY_LOW_BYTE_CLEAR (~(uint64_t)0xff)

/* Zero until stackprot_init(): every function that runs before it checks against zero. */
uint64_t __stack_chk_guard;
static enum stackprot_source source = STACKPROT_TSC;
void (*stackprot_fail_hook)(uint64_t at);

/* RDRAND and RDSEED may fail (CF=0) while the generator refills (SDM Vol. 1, "Random Number
 * Generator Instructions"): try a few times. */
static bool __attribute__((no_stack_protector)) hw_random(bool seed, uint64_t *out)
{
    for (unsigned i = 0; i < RANDOM_RETRIES; i++) {
        uint64_t v;
        bool ok;
        if (seed)
            __asm__ volatile("rdseed %0" : "=r"(v), "=@ccc"(ok));
        else
            __asm__ volatile("rdrand %0" : "=r"(v), "=@ccc"(ok));
        if (ok) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* splitmix64's finaliser: spreads the TSC's few changing low bits over the whole word. */
static uint64_t __attribute__((no_stack_protector)) mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void __attribute__((no_stack_protector)) stackprot_init(void)
{
    uint64_t v = 0;
    uint32_t max_leaf = cpuid(0).eax;
    bool have_rdseed = max_leaf >= 7 && (cpuid_count(7, 0).ebx & CPUID_7_EBX_RDSEED);
    if (have_rdseed && hw_random(true, &v)) {
        source = STACKPROT_RDSEED;
    } else if ((cpuid(1).ecx & CPUID_1_ECX_RDRAND) && hw_random(false, &v)) {
        source = STACKPROT_RDRAND;
    } else {
        /* No generator: the TSC at boot, and again after CPUID (whose cost varies, more so
         * under an emulator), mixed. Guessable by someone who can time the boot: it guards
         * against accidents, not an attacker. */
        uint64_t t0 = rdtsc();
        (void)cpuid(0);
        v = mix64(t0) ^ mix64(rdtsc() + 0x9e3779b97f4a7c15ull);
        source = STACKPROT_TSC;
    }
    /* A zero low byte, as glibc does: a runaway string copy stops at it rather than
     * writing past it with the canary's own bytes. Never zero as a whole: zero is the
     * value before this function ran. */
    v &= CANARY_LOW_BYTE_CLEAR;
    __stack_chk_guard = v ? v : 0x5a5a5a5a5a5a5a00ull;
}

enum stackprot_source stackprot_source(void)
{
    return source;
}

const char *stackprot_source_name(enum stackprot_source s)
{
    static const char *const names[] = {"rdseed", "rdrand", "tsc"};
    return s <= STACKPROT_TSC ? names[s] : "?";
}

void __attribute__((no_stack_protector)) __stack_chk_fail(void)
{
    /* The call is the protected function's last instruction (nothing follows a noreturn
     * call), so the return address may lie just past its end: name the call itself. */
    uint64_t at = (uint64_t)__builtin_return_address(0) - 1;
    if (stackprot_fail_hook)
        stackprot_fail_hook(at);
    /* No reporter yet (or it returned): an invalid-opcode exception here, which the trap
     * handler reports with this function's name and the caller in the backtrace. */
    __builtin_trap();
}
