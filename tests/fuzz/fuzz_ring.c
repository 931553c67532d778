/* libFuzzer target: the trace ring, ds/ring.c, against a reference ring.
 *
 * The input picks a capacity and a policy, then a sequence of operations (append, drain, get,
 * get_range, clear). The reference keeps the records in a plain array, oldest first, shifting
 * on every removal: too slow for the kernel, obvious enough to trust. After every operation the
 * two must agree on the results, count, space, lost, overflowed and every record held. The
 * ring's storage is an allocation of exactly cap records (AddressSanitizer sees an overrun).
 */
#include <stdbool.h>

#include "ds/ring.h"
#include "tests/fuzz/fuzz.h"

#define CAP_MAX 40
#define OPS_MAX 64
#define N_MAX   (2 * CAP_MAX + 3)

struct ref {
    struct bts_record rec[CAP_MAX];
    uint64_t cap, count, lost;
    enum bts_policy policy;
    bool overflowed;
};

static void ref_push(struct ref *m, const struct bts_record *r)
{
    if (m->count < m->cap) {
        m->rec[m->count++] = *r;
    } else { /* WRAP: the oldest goes */
        memmove(&m->rec[0], &m->rec[1], (m->cap - 1) * sizeof(*r));
        m->rec[m->cap - 1] = *r;
        m->lost++;
    }
}

static uint64_t ref_append(struct ref *m, const struct bts_record *src, uint64_t n)
{
    uint64_t stored = 0;
    for (uint64_t i = 0; i < n; i++) {
        bool full = m->count == m->cap;
        if (m->policy == BTS_POLICY_WRAP) {
            ref_push(m, &src[i]);
            stored++;
        } else if (m->policy == BTS_POLICY_STOP) {
            if (full || m->overflowed) {
                m->overflowed = true;
                m->lost++;
            } else {
                ref_push(m, &src[i]);
                stored++;
            }
        } else {
            if (full)
                break;
            ref_push(m, &src[i]);
            stored++;
        }
    }
    return stored;
}

static uint64_t ref_drain(struct ref *m, struct bts_record *out, uint64_t max)
{
    uint64_t n = max < m->count ? max : m->count;
    memcpy(out, m->rec, n * sizeof(*out));
    memmove(&m->rec[0], &m->rec[n], (m->count - n) * sizeof(*out));
    m->count -= n;
    return n;
}

static void agree(const struct bts_ring *r, const struct ref *m, unsigned op)
{
    fz_check(ring_count(r) == m->count && ring_space(r) == m->cap - m->count,
             "op %u: count %llu space %llu, reference %llu of %llu", op,
             (unsigned long long)ring_count(r), (unsigned long long)ring_space(r),
             (unsigned long long)m->count, (unsigned long long)m->cap);
    fz_check(r->lost == m->lost && r->overflowed == m->overflowed,
             "op %u: lost %llu overflowed %d, reference %llu %d", op, (unsigned long long)r->lost,
             r->overflowed, (unsigned long long)m->lost, m->overflowed);
    for (uint64_t i = 0; i < m->count; i++) {
        struct bts_record got;
        fz_check(ring_get(r, i, &got) == 0 && !memcmp(&got, &m->rec[i], sizeof(got)),
                 "op %u: record %llu differs", op, (unsigned long long)i);
    }
    struct bts_record got;
    fz_check(ring_get(r, m->count, &got) == E_NOENT, "op %u: a record past the count", op);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = {data, size};
    struct ref m = {.cap = fz_u8(&in) % CAP_MAX + 1,
                    .policy = (enum bts_policy)(fz_u8(&in) % BTS_POLICY_COUNT)};
    struct bts_record *storage = malloc(m.cap * sizeof(*storage));
    struct bts_ring r;
    static uint64_t serial; /* records are told apart by their contents */
    if (!storage)
        abort();
    fz_check(ring_init(&r, storage, m.cap, m.policy) == 0, "ring_init");
    agree(&r, &m, 0);

    for (unsigned op = 1; op <= OPS_MAX && in.left; op++) {
        uint8_t code = fz_u8(&in);
        uint64_t n = fz_u8(&in) % N_MAX, first = fz_u8(&in) % N_MAX;
        struct bts_record src[N_MAX], out[N_MAX], want[N_MAX];
        for (uint64_t i = 0; i < n; i++)
            src[i] = (struct bts_record){++serial, code, first};
        switch (code % 5) {
        case 0:
        case 1: {
            uint64_t got = ring_append(&r, src, n), exp = ref_append(&m, src, n);
            fz_check(got == exp, "op %u: append of %llu stored %llu, reference %llu", op,
                     (unsigned long long)n, (unsigned long long)got, (unsigned long long)exp);
            break;
        }
        case 2: {
            uint64_t got = ring_drain(&r, out, n), exp = ref_drain(&m, want, n);
            fz_check(got == exp && !memcmp(out, want, got * sizeof(*out)), "op %u: drain of %llu",
                     op, (unsigned long long)n);
            break;
        }
        case 3: {
            uint64_t got = ring_get_range(&r, first, n, out);
            uint64_t exp = first >= m.count ? 0 : n < m.count - first ? n : m.count - first;
            fz_check(got == exp &&
                         !memcmp(out, &m.rec[first < m.count ? first : 0], got * sizeof(*out)),
                     "op %u: get_range(%llu, %llu)", op, (unsigned long long)first,
                     (unsigned long long)n);
            break;
        }
        default:
            ring_clear(&r);
            m.count = m.lost = 0;
            m.overflowed = false;
            break;
        }
        agree(&r, &m, op);
    }
    free(storage);
    return 0;
}
