/* libFuzzer target: the DS layout and trace-configuration checks, ds/layout.c.
 *
 * ds_layout_bts(): an accepted description satisfies every rule of ds/layout.h (checked here
 * from the rules, in 128-bit arithmetic); a rejected one leaves the area as it was.
 * ds_pending() and ds_read_circular() on an area whose base is a real buffer and whose
 * index and maximum come from the input: a count only for a sound geometry, never a read
 * outside the buffer (AddressSanitizer), the records in the order the header describes.
 * ds_trace_bytes(): the page-rounded sum, or E_OVERFLOW exactly when it exceeds 64 bits.
 */
#include <stdbool.h>

#include "ds/layout.h"
#include "tests/fuzz/fuzz.h"

typedef unsigned __int128 u128;

static bool canonical(uint64_t a)
{
    return (int64_t)a >> (DS_VADDR_BITS - 1) == 0 || (int64_t)a >> (DS_VADDR_BITS - 1) == -1;
}

/* Values near the edges come often from a byte that picks them; otherwise 8 raw bytes. */
static uint64_t pick_u64(struct fz *in)
{
    static const uint64_t edges[] = {0,
                                     8,
                                     BTS_RECORD_SIZE,
                                     2 * BTS_RECORD_SIZE,
                                     BTS_THRESH_CIRCULAR,
                                     0x00007ffffffffff8ull,
                                     0xffff800000000000ull,
                                     0x0000800000000000ull,
                                     0xfffffffffffffff8ull - 2 * BTS_RECORD_SIZE};
    uint8_t sel = fz_u8(in);
    if (sel < sizeof(edges) / sizeof(edges[0]))
        return edges[sel] + fz_u8(in) * (uint64_t)BTS_RECORD_SIZE;
    return fz_u64(in);
}

static void check_layout(struct fz *in)
{
    uint64_t base = pick_u64(in), size = pick_u64(in), thresh = pick_u64(in);
    unsigned mode = fz_u8(in) % (BTS_MODE_COUNT + 1);
    struct ds_area ds, before;
    memset(&ds, 0x3c, sizeof(ds));
    before = ds;

    int rc = ds_layout_bts(&ds, base, size, thresh, (enum bts_buf_mode)mode);
    if (rc) {
        fz_check(rc == E_INVAL || rc == E_ALIGN || rc == E_RANGE || rc == E_OVERFLOW, "rc %d", rc);
        fz_check(!memcmp(&ds, &before, sizeof(ds)), "rejected (%d) but the area changed", rc);
        return;
    }
    u128 end = (u128)base + size;
    fz_check(mode < BTS_MODE_COUNT && base && base % BTS_BASE_ALIGN == 0, "bad base accepted");
    fz_check(size % BTS_RECORD_SIZE == 0 && size / BTS_RECORD_SIZE >= BTS_MIN_RECORDS,
             "bad size %llu accepted", (unsigned long long)size);
    fz_check(end <= UINT64_MAX && canonical(base) && canonical((uint64_t)end - 1) &&
                 !((base ^ ((uint64_t)end - 1)) >> 63),
             "non-canonical buffer accepted");
    fz_check(ds.bts_base == base && ds.bts_index == base && ds.bts_abs_max == (uint64_t)end,
             "fields");
    fz_check(!memcmp(&ds.pebs_base, &before.pebs_base, sizeof(ds) - 4 * sizeof(uint64_t)),
             "the PEBS fields changed");
    u128 t = mode == BTS_MODE_CIRCULAR && thresh == BTS_THRESH_CIRCULAR
                 ? (u128)size + BTS_RECORD_SIZE
                 : thresh;
    fz_check(t % BTS_RECORD_SIZE == 0, "misaligned threshold accepted");
    if (mode == BTS_MODE_INTERRUPT)
        fz_check(t >= BTS_RECORD_SIZE && t < size, "interrupt threshold out of range accepted");
    else
        fz_check(t > size && (u128)base + t <= UINT64_MAX, "circular threshold in reach");
    fz_check(ds.bts_thresh == (uint64_t)((u128)base + t), "threshold field");
    uint64_t n;
    fz_check(ds_pending(&ds, &n) == 0 && n == 0, "a fresh area is not empty");
}

static void check_read(struct fz *in)
{
    size_t nbytes = fz_bytes_le(in, 2) % 2048;
    unsigned skew = fz_u8(in) % 9; /* base misaligned by up to 8 bytes */
    uint8_t *buf = malloc(nbytes + skew + 1);
    if (!buf)
        abort();
    memset(buf, 0, nbytes + skew + 1);
    for (size_t i = 0; i < nbytes && in->left; i++)
        buf[skew + i] = fz_u8(in) & 0x81 ? fz_u8(in) : 0; /* mostly zero slots */
    uint64_t base = (uint64_t)(uintptr_t)(buf + skew);
    struct ds_area ds = {.bts_base = base,
                         .bts_index = base + (int16_t)fz_bytes_le(in, 2),
                         .bts_abs_max = base + nbytes};
    uint64_t pend;
    int prc = ds_pending(&ds, &pend);
    uint64_t max = fz_u8(in) % 128;
    struct bts_record *out = malloc((max ? max : 1) * sizeof(*out));
    if (!out)
        abort();
    int64_t rc = ds_read_circular(&ds, out, max);
    bool sound = ds.bts_index >= base && ds.bts_index <= ds.bts_abs_max &&
                 (ds.bts_index - base) % BTS_RECORD_SIZE == 0;
    fz_check((prc == 0) == sound, "ds_pending %d for a %s index", prc, sound ? "sound" : "bad");
    if (!prc)
        fz_check(pend == (ds.bts_index - base) / BTS_RECORD_SIZE, "pending count");
    bool geometry = base % BTS_BASE_ALIGN == 0 && nbytes % BTS_RECORD_SIZE == 0 &&
                    nbytes / BTS_RECORD_SIZE >= BTS_MIN_RECORDS && sound;
    if (!geometry) {
        fz_check(rc == E_RANGE, "read_circular %lld on a corrupted area", (long long)rc);
    } else {
        uint64_t nrec = nbytes / BTS_RECORD_SIZE, oldest = pend % nrec, held = nrec;
        const struct bts_record *r = (const void *)(buf + skew);
        if (!(r[oldest].from | r[oldest].to | r[oldest].flags)) {
            oldest = 0;
            held = pend;
        }
        uint64_t want = held < max ? held : max;
        fz_check(rc >= 0 && (uint64_t)rc == want, "read %lld records, expected %llu", (long long)rc,
                 (unsigned long long)want);
        for (uint64_t i = 0; i < want; i++)
            fz_check(!memcmp(&out[i], &r[(oldest + i) % nrec], sizeof(*out)),
                     "record %llu out of order", (unsigned long long)i);
    }
    free(out);
    free(buf);
}

static void check_quota(struct fz *in)
{
    uint64_t hw = pick_u64(in), ring = pick_u64(in), bytes = 0x1234;
    u128 page = DS_QUOTA_PAGE;
    u128 want = page + ((u128)hw * BTS_RECORD_SIZE + page - 1) / page * page +
                ((u128)ring * BTS_RECORD_SIZE + page - 1) / page * page;
    int rc = ds_trace_bytes(hw, ring, &bytes);
    if (want > UINT64_MAX)
        fz_check(rc == E_OVERFLOW && bytes == 0x1234, "overflow not reported (%d)", rc);
    else
        fz_check(rc == 0 && bytes == (uint64_t)want, "quota %llu, expected %llu (rc %d)",
                 (unsigned long long)bytes, (unsigned long long)want, rc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = {data, size};
    switch (fz_u8(&in) % 3) {
    case 0:
        check_layout(&in);
        break;
    case 1:
        check_read(&in);
        break;
    default:
        check_quota(&in);
        break;
    }
    return 0;
}
