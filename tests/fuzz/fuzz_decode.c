/* libFuzzer target: the x86-64 instruction decoder, ds/decode.c.
 *
 * The input is a byte choosing the RIP (see below), then the code bytes (in an allocation of
 * exactly their size, so AddressSanitizer catches a read past them). Invariants
 * (ds/decode.h): the result is a length 1..15 or an error with kind INSN_INVALID and len 0;
 * a decoded instruction decodes the same from exactly its own bytes and is truncated with one
 * byte less; its kind is the one the SDM's opcode maps (Vol. 2, Appendix A) give its opcode,
 * checked here from the bytes with a table of its own; direct branches' displacement is the
 * instruction's last 1 or 4 bytes and target = rip + len + rel.
 */
#include <stdbool.h>

#include "ds/decode.h"
#include "tests/fuzz/fuzz.h"

static bool is_prefix(uint8_t b)
{
    static const uint8_t legacy[] = {0x26, 0x2e, 0x36, 0x3e, 0x64, 0x65,
                                     0x66, 0x67, 0xf0, 0xf2, 0xf3};
    if (b >= 0x40 && b <= 0x4f) /* REX */
        return true;
    return memchr(legacy, b, sizeof(legacy)) != NULL;
}

/* The kind the opcode at code[op] has, and the size of a direct branch's displacement. */
static unsigned expected_kind(const uint8_t *code, size_t len, size_t op, unsigned *disp)
{
    uint8_t b = code[op];
    *disp = 0;
    if (b == 0xc4 || b == 0xc5 || b == 0x62) /* VEX, EVEX: no branch in their maps */
        return INSN_OTHER;
    if (b == 0x0f) {
        fz_check(op + 1 < len, "0F escape as the last byte");
        uint8_t b2 = code[op + 1];
        if (b2 >= 0x80 && b2 <= 0x8f) {
            *disp = 4;
            return INSN_JCC;
        }
        switch (b2) {
        case 0x05:
            return INSN_SYSCALL;
        case 0x07:
            return INSN_SYSRET;
        case 0x34:
            return INSN_SYSENTER;
        case 0x35:
            return INSN_SYSEXIT;
        case 0x0b:
            return INSN_UD2;
        default:
            return INSN_OTHER;
        }
    }
    if (b >= 0x70 && b <= 0x7f) {
        *disp = 1;
        return INSN_JCC;
    }
    switch (b) {
    case 0xe0:
        *disp = 1;
        return INSN_LOOPNE;
    case 0xe1:
        *disp = 1;
        return INSN_LOOPE;
    case 0xe2:
        *disp = 1;
        return INSN_LOOP;
    case 0xe3:
        *disp = 1;
        return INSN_JRCXZ;
    case 0xeb:
        *disp = 1;
        return INSN_JMP_REL;
    case 0xe9:
        *disp = 4;
        return INSN_JMP_REL;
    case 0xe8:
        *disp = 4;
        return INSN_CALL_REL;
    case 0xc3:
        return INSN_RET;
    case 0xc2:
        return INSN_RET_IMM;
    case 0xca:
    case 0xcb:
        return INSN_RET_FAR;
    case 0xcf:
        return INSN_IRET;
    case 0xcc:
        return INSN_INT3;
    case 0xcd:
        return INSN_INT;
    case 0xce:
        return INSN_INTO;
    case 0xf1:
        return INSN_INT1;
    case 0xff: {
        fz_check(op + 1 < len, "FF without its ModRM byte");
        static const uint8_t grp5[8] = {INSN_OTHER,   INSN_OTHER,   INSN_CALL_IND, INSN_CALL_FAR,
                                        INSN_JMP_IND, INSN_JMP_FAR, INSN_OTHER,    INSN_OTHER};
        return grp5[(code[op + 1] >> 3) & 7];
    }
    default:
        return INSN_OTHER;
    }
}

static void check_decoded(const uint8_t *code, uint64_t rip, const struct insn *in)
{
    size_t len = in->len, op = 0;
    while (op < len && is_prefix(code[op]))
        op++;
    fz_check(op < len, "a %zu-byte instruction of prefixes only", len);
    unsigned disp;
    unsigned kind = expected_kind(code, len, op, &disp);
    fz_check(in->kind == kind, "opcode %02x (at %zu): kind %s, the opcode map says %s", code[op],
             op, insn_kind_name(in->kind), insn_kind_name(kind));
    if (kind == INSN_JCC)
        fz_check(in->cc == (code[code[op] == 0x0f ? op + 1 : op] & 0xf), "jcc condition %u",
                 in->cc);
    if (kind == INSN_INT)
        fz_check(in->vector == code[len - 1], "int %u decoded as vector %u", code[len - 1],
                 in->vector);
    if (kind == INSN_INT3 || kind == INSN_INT1 || kind == INSN_INTO)
        fz_check(in->vector == (kind == INSN_INT3   ? 3
                                : kind == INSN_INT1 ? 1
                                                    : 4),
                 "vector %u", in->vector);
    fz_check(insn_has_target(in) == (disp != 0), "has_target disagrees with the kind");
    if (disp) {
        int64_t rel =
            disp == 1 ? (int8_t)code[len - 1]
                      : (int32_t)(uint32_t)(code[len - 4] | code[len - 3] << 8 |
                                            code[len - 2] << 16 | (uint32_t)code[len - 1] << 24);
        fz_check(in->rel == rel, "displacement %lld, the bytes say %lld", (long long)in->rel,
                 (long long)rel);
        fz_check(in->target == rip + len + (uint64_t)rel, "target");
    }
    fz_check(insn_is_branch(in) == (kind != INSN_OTHER && kind != INSN_UD2),
             "insn_is_branch disagrees with the kind %s", insn_kind_name(kind));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The first byte chooses the RIP: near one of the ends where rip + len + rel wraps (less
     * the second byte), 8 raw bytes, or a plain user address. */
    static const uint64_t rips[] = {0x7fffffffffffffffull, 0xffffffffffffffffull,
                                    0xffffffff80000000ull, 0x00007ffffffff000ull};
    uint64_t rip = 0x401000;
    uint8_t sel = size ? data[0] : 0xff;
    size_t skip = size ? 1 : 0;
    if (sel < sizeof(rips) / sizeof(rips[0]) && size >= 2) {
        rip = rips[sel] - data[1];
        skip = 2;
    } else if (sel == sizeof(rips) / sizeof(rips[0]) && size >= 9) {
        memcpy(&rip, data + 1, sizeof(rip));
        skip = 9;
    }
    data += skip;
    size -= skip;
    uint8_t *code = malloc(size ? size : 1);
    if (!code)
        abort();
    memcpy(code, data, size);

    struct insn in, again;
    memset(&in, 0xa5, sizeof(in));
    int rc = insn_decode(code, size, rip, &in);
    if (rc < 0) {
        fz_check(rc == INSN_ERR_TRUNCATED || rc == INSN_ERR_INVALID, "error %d", rc);
        fz_check(in.kind == INSN_INVALID && in.len == 0, "an error left kind %u len %u", in.kind,
                 in.len);
        if (size > INSN_MAX_LEN)
            fz_check(rc == INSN_ERR_INVALID, "truncated with %zu bytes available", size);
    } else {
        fz_check(rc >= 1 && rc <= INSN_MAX_LEN && (size_t)rc <= size && in.len == rc,
                 "length %d (len %u) from %zu bytes", rc, in.len, size);
        fz_check(in.kind < INSN_INVALID, "kind %u for a decoded instruction", in.kind);
        check_decoded(code, rip, &in);
        /* Exactly its bytes suffice; one fewer is a truncated instruction. */
        fz_check(insn_decode(code, in.len, rip, &again) == rc && !memcmp(&again, &in, sizeof(in)),
                 "decoding from exactly %d bytes differs", rc);
        fz_check(insn_decode(code, in.len - 1u, rip, &again) == INSN_ERR_TRUNCATED,
                 "%d-byte instruction not truncated at %d bytes", rc, rc - 1);
    }
    free(code);
    return 0;
}
