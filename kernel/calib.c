#include "kernel/calib.h"

uint64_t median_u64(uint64_t *v, unsigned n)
{
    for (unsigned i = 1; i < n; i++)
        for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return v[n / 2];
}

static bool close_to(uint64_t ref, uint64_t v, unsigned pct)
{
    if (ref == 0 || v == 0)
        return false;
    uint64_t d = ref > v ? ref - v : v - ref;
    return d * 100 <= ref * pct;
}

bool calib_agree(const struct calib_round *a, const struct calib_round *b, unsigned pct)
{
    return close_to(a->timer_hz, b->timer_hz, pct) && close_to(a->tsc_hz, b->tsc_hz, pct);
}

struct calib_round calib_choose(const struct calib_round *r, unsigned n, unsigned pct, bool *agreed)
{
    for (unsigned i = n; i-- > 1;)
        if (calib_agree(&r[i - 1], &r[i], pct)) {
            *agreed = true;
            return r[i];
        }
    *agreed = false;
    uint64_t timer[CALIB_ROUNDS_MAX], tsc[CALIB_ROUNDS_MAX];
    if (n > CALIB_ROUNDS_MAX)
        n = CALIB_ROUNDS_MAX;
    for (unsigned i = 0; i < n; i++) {
        timer[i] = r[i].timer_hz;
        tsc[i] = r[i].tsc_hz;
    }
    return (struct calib_round){median_u64(timer, n), median_u64(tsc, n)};
}
