/*
 * ds/decode.c - length and branch decoder for 64-bit mode (see decode.h).
 *
 * Layout of an instruction (SDM Vol. 2A 2.1, 2.2.1, 2.3, 2.7):
 *   legacy prefixes* [REX] opcode [ModRM [SIB] [disp]] [imm]
 *   legacy prefixes* (VEX C4/C5 | EVEX 62) opcode ModRM [SIB] [disp] [imm8]
 * The opcode tables give, per opcode, whether a ModRM byte follows and which
 * immediate; the few group members that differ are handled in insn_decode()
 * and group_member_invalid().
 *
 * Intel, not AMD (AMD APM Vol. 3): Intel ignores 66 on near jmp/call/jcc in
 * 64-bit mode (SDM Vol. 2A 2.2.1.7 and the Jcc page: rel32, 64-bit RIP); AMD
 * honours it (rel16, RIP truncated to 16 bits). AMD's 3DNow! (0F 0F), femms
 * (0F 0E), SSE4a with immediates (66/F2 0F 78/79), XOP (8F /1-7) and VIA's
 * PadLock (0F A6/A7) are #UD on Intel and decode as invalid here.
 * FWAIT (9B) is an instruction of its own even before x87 opcodes ("fstsw" is
 * two instructions, SDM FSTSW), as single-stepping sees it.
 */
#include "ds/decode.h"

/* Immediate (or relative displacement) that follows the opcode/ModRM. */
enum imm_kind {
    IMM_NONE,
    IMM_B,     /* 1 byte (ib, rel8) */
    IMM_W,     /* 2 bytes (iw) */
    IMM_Z,     /* 2 with 66 (and no REX.W), else 4 (iz) */
    IMM_V,     /* 8 with REX.W, 2 with 66, else 4 (mov r, imm: B8+r) */
    IMM_MOFFS, /* address-sized offset: 8, or 4 with 67 (A0-A3) */
    IMM_ENTER, /* iw + ib (C8) */
    IMM_REL32, /* near branch rel32: Intel ignores 66 in 64-bit mode */
};

#define IMM_MASK   0x0f
#define ATTR_MODRM 0x10 /* a ModRM byte follows the opcode */
#define ATTR_BAD   0x20 /* #UD in 64-bit mode (or not an Intel opcode) */

/* Two-letter cells keep the 16x16 tables aligned with the SDM's maps. */
#define UD ATTR_BAD /* #UD in 64-bit mode */
#define PX ATTR_BAD /* prefix or escape: consumed before the table is read */
#define NN IMM_NONE
#define IB IMM_B
#define IW IMM_W
#define IZ IMM_Z
#define IV IMM_V
#define MO IMM_MOFFS
#define EN IMM_ENTER
#define R4 IMM_REL32
#define MM ATTR_MODRM
#define MB (ATTR_MODRM | IMM_B)
#define MZ (ATTR_MODRM | IMM_Z)

/* SDM Vol. 2D Appendix A, Table A-2: one-byte opcode map, 64-bit mode. */
static const uint8_t map1[256] = {
    /*      0   1   2   3   4   5   6   7   8   9   A   B   C   D   E   F */
    /* 0 */ MM, MM, MM, MM, IB, IZ, UD, UD, MM, MM, MM, MM, IB, IZ, UD, PX,
    /* 1 */ MM, MM, MM, MM, IB, IZ, UD, UD, MM, MM, MM, MM, IB, IZ, UD, UD,
    /* 2 */ MM, MM, MM, MM, IB, IZ, PX, UD, MM, MM, MM, MM, IB, IZ, PX, UD,
    /* 3 */ MM, MM, MM, MM, IB, IZ, PX, UD, MM, MM, MM, MM, IB, IZ, PX, UD,
    /* 4 */ PX, PX, PX, PX, PX, PX, PX, PX, PX, PX, PX, PX, PX, PX, PX, PX,
    /* 5 */ NN, NN, NN, NN, NN, NN, NN, NN, NN, NN, NN, NN, NN, NN, NN, NN,
    /* 6 */ UD, UD, PX, MM, PX, PX, PX, PX, IZ, MZ, IB, MB, NN, NN, NN, NN,
    /* 7 */ IB, IB, IB, IB, IB, IB, IB, IB, IB, IB, IB, IB, IB, IB, IB, IB,
    /* 8 */ MB, MZ, UD, MB, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM,
    /* 9 */ NN, NN, NN, NN, NN, NN, NN, NN, NN, NN, UD, NN, NN, NN, NN, NN,
    /* A */ MO, MO, MO, MO, NN, NN, NN, NN, IB, IZ, NN, NN, NN, NN, NN, NN,
    /* B */ IB, IB, IB, IB, IB, IB, IB, IB, IV, IV, IV, IV, IV, IV, IV, IV,
    /* C */ MB, MB, IW, NN, PX, PX, MB, MZ, EN, NN, IW, NN, NN, IB, NN, NN,
    /* D */ MM, MM, MM, MM, UD, UD, UD, NN, MM, MM, MM, MM, MM, MM, MM, MM,
    /* E */ IB, IB, IB, IB, IB, IB, IB, IB, R4, R4, UD, IB, NN, NN, NN, NN,
    /* F */ PX, NN, PX, PX, NN, NN, MB, MZ, NN, NN, NN, NN, NN, NN, MM, MM,
};

/* SDM Vol. 2D Appendix A, Table A-3: two-byte opcode map (0F xx). */
static const uint8_t map0f[256] = {
    /*      0   1   2   3   4   5   6   7   8   9   A   B   C   D   E   F */
    /* 0 */ MM, MM, MM, MM, UD, NN, NN, NN, NN, NN, UD, NN, UD, MM, UD, UD,
    /* 1 */ MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM,
    /* 2 */ MM, MM, MM, MM, UD, UD, UD, UD, MM, MM, MM, MM, MM, MM, MM, MM,
    /* 3 */ NN, NN, NN, NN, NN, NN, UD, NN, PX, UD, PX, UD, UD, UD, UD, UD,
    /* 4 */ MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM,
    /* 5 */ MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM,
    /* 6 */ MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM,
    /* 7 */ MB, MB, MB, MB, MM, MM, MM, NN, MM, MM, UD, UD, MM, MM, MM, MM,
    /* 8 */ R4, R4, R4, R4, R4, R4, R4, R4, R4, R4, R4, R4, R4, R4, R4, R4,
    /* 9 */ MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM,
    /* A */ NN, NN, NN, MM, MB, MM, UD, UD, NN, NN, NN, MM, MB, MM, MM, MM,
    /* B */ MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MB, MM, MM, MM, MM, MM,
    /* C */ MM, MM, MB, MM, MB, MB, MB, MM, NN, NN, NN, NN, NN, NN, NN, NN,
    /* D */ MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM,
    /* E */ MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM,
    /* F */ MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM, MM,
};

/*
 * Tables: every 0F 38 opcode is "ModRM", every 0F 3A opcode is
 * "ModRM + ib"; undefined cells there have the same shape, so no table.
 */
#define ATTR_MAP0F38 ATTR_MODRM
#define ATTR_MAP0F3A (ATTR_MODRM | IMM_B)

#undef UD
#undef PX
#undef NN
#undef IB
#undef IW
#undef IZ
#undef IV
#undef MO
#undef EN
#undef R4
#undef MM
#undef MB
#undef MZ

/* Opcode maps as numbered by VEX.mmmmm / EVEX.mmm (SDM Vol. 2A 2.3.6, 2.7.1). */
enum opcode_map { MAP_1BYTE = 0, MAP_0F = 1, MAP_0F38 = 2, MAP_0F3A = 3, MAP_5 = 5, MAP_6 = 6 };

/* Prefix and escape bytes (SDM Vol. 2A 2.1.1, 2.2.1, 2.3.3, 2.7). */
#define PFX_OPSIZE   0x66
#define PFX_ADDRSIZE 0x67
#define PFX_LOCK     0xf0
#define PFX_REPNE    0xf2
#define PFX_REP      0xf3
#define REX_MIN      0x40
#define REX_MAX      0x4f
#define REX_W        0x08
#define ESC_0F       0x0f
#define ESC_0F38     0x38
#define ESC_0F3A     0x3a
#define VEX3         0xc4
#define VEX2         0xc5
#define EVEX         0x62
#define VEX3_MAP     0x1f /* VEX byte 1 bits 4:0: mmmmm */
#define EVEX_P0_ZERO 0x08 /* EVEX P0 bit 3: must be 0 */
#define EVEX_P0_MAP  0x07 /* EVEX P0 bits 2:0: mmm */
#define EVEX_P1_ONE  0x04 /* EVEX P1 bit 2: must be 1 */
#define VEX_W        0x80 /* VEX byte 2 / EVEX P1 bit 7: W, as REX.W */

/* ModRM/SIB fields (SDM Vol. 2A 2.1.5, Tables 2-2 and 2-3). */
#define MODRM_MOD(m) ((uint8_t)((m) >> 6))
#define MODRM_REG(m) ((uint8_t)(((m) >> 3) & 7))
#define MODRM_RM(m)  ((uint8_t)((m)&7))
#define MOD_DISP0    0
#define MOD_DISP8    1
#define MOD_DISP32   2
#define MOD_REG      3
#define RM_SIB       4 /* mod != 3: a SIB byte follows */
#define RM_RIPREL    5 /* mod == 0: RIP-relative disp32 */
#define SIB_NOBASE   5 /* SIB.base with mod == 0: disp32, no base */

/* Opcodes with a rule of their own below (Tables ). */
#define OP_JCC8       0x70 /* 70-7F jcc rel8 */
#define OP0F_JCC32    0x80 /* 0F 80-8F jcc rel32 */
#define CC_MASK       0x0f /* jcc: condition in the low nibble */
#define OP_GRP1A      0x8f /* pop Ev is /0 only; /1-/7 is AMD XOP */
#define OP_GRP11B     0xc6 /* mov Eb,Ib /0; xabort is C6 F8 */
#define OP_GRP11Z     0xc7 /* mov Ev,Iz /0; xbegin is C7 F8 */
#define MODRM_XBEGIN  0xf8
#define OP_GRP3B      0xf6 /* test Eb,Ib is /0 and /1; the rest have no imm */
#define OP_GRP3Z      0xf7
#define GRP3_TEST_MAX 1
#define OP_GRP4       0xfe /* inc/dec Eb: /0 and /1 only */
#define GRP4_MAX      1
#define OP_GRP5       0xff
#define GRP5_CALL_FAR 3
#define GRP5_JMP_FAR  5
#define GRP5_PUSH     6    /* /7 is undefined */
#define OP_VZEROUPPER 0x77 /* VEX 0F 77: the only VEX opcode without ModRM */
#define OP0F_MOV_CR   0x20 /* 0F 20-23: mov to/from CRn/DRn */
#define OP0F_MOV_DR   0x23
#define OP0F_POPCNT   0xb8 /* F3 only; without it JMPE, absent in IA-32e mode */
#define OP0F_VMREAD   0x78 /* 0F 78/79 only without 66/F2/F3 (AMD: SSE4a) */
#define OP0F_VMWRITE  0x79

#define VECTOR_DB 1 /* int1 */
#define VECTOR_BP 3 /* int3 */
#define VECTOR_OF 4 /* into */

/* The branches of Tables besides jcc and group 5. */
struct branch_op {
    uint8_t op, kind, vector;
};

static const struct branch_op branch_map1[] = {
    {0xc2, INSN_RET_IMM, 0},      {0xc3, INSN_RET, 0},          {0xca, INSN_RET_FAR, 0},
    {0xcb, INSN_RET_FAR, 0},      {0xcc, INSN_INT3, VECTOR_BP}, {0xcd, INSN_INT, 0 /* ib */},
    {0xce, INSN_INTO, VECTOR_OF}, {0xcf, INSN_IRET, 0},         {0xe0, INSN_LOOPNE, 0},
    {0xe1, INSN_LOOPE, 0},        {0xe2, INSN_LOOP, 0},         {0xe3, INSN_JRCXZ, 0},
    {0xe8, INSN_CALL_REL, 0},     {0xe9, INSN_JMP_REL, 0},      {0xeb, INSN_JMP_REL, 0},
    {0xf1, INSN_INT1, VECTOR_DB},
};

static const struct branch_op branch_map0f[] = {
    {0x05, INSN_SYSCALL, 0},  {0x07, INSN_SYSRET, 0},  {0x0b, INSN_UD2, 0},
    {0x34, INSN_SYSENTER, 0}, {0x35, INSN_SYSEXIT, 0},
};

/* Group 5 (FF) by ModRM.reg (Table A-6): inc, dec, call, callf, jmp, jmpf, push. */
static const uint8_t grp5_kind[8] = {
    INSN_OTHER,   INSN_OTHER,   INSN_CALL_IND, INSN_CALL_FAR,
    INSN_JMP_IND, INSN_JMP_FAR, INSN_OTHER,    INSN_OTHER,
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Byte reader with a sticky error: reads past the 15-byte limit make the
 * instruction invalid, reads past the buffer make it truncated; both return
 * 0, which the caller never mistakes for a prefix, and the first error wins.
 */
struct cursor {
    const uint8_t *code;
    size_t avail;
    size_t pos;
    int err;
};

static uint8_t fetch(struct cursor *c)
{
    if (c->err)
        return 0;
    if (c->pos >= INSN_MAX_LEN) {
        c->err = INSN_ERR_INVALID;
        return 0;
    }
    if (c->pos >= c->avail) {
        c->err = INSN_ERR_TRUNCATED;
        return 0;
    }
    return c->code[c->pos++];
}

/* Little-endian unsigned value of the next n (<= 8) bytes. */
static uint64_t fetch_le(struct cursor *c, unsigned n)
{
    uint64_t v = 0;

    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)fetch(c) << (8 * i);
    return v;
}

static int64_t sign_extend(uint64_t v, unsigned bytes)
{
    unsigned shift = 64 - 8 * bytes;

    return bytes ? (int64_t)(v << shift) >> shift : 0;
}

static bool is_legacy_prefix(uint8_t b)
{
    switch (b) {
    case 0x26:
    case 0x2e:
    case 0x36:
    case 0x3e: /* es cs ss ds, branch hints, notrack */
    case 0x64:
    case 0x65: /* fs gs */
    case PFX_OPSIZE:
    case PFX_ADDRSIZE:
    case PFX_LOCK:
    case PFX_REPNE:
    case PFX_REP: /* F2 is also BND on branches */
        return true;
    default:
        return false;
    }
}

/* Skip SIB and displacement after a ModRM byte (SDM Vol. 2A Tables 2-2, 2-3). */
static void skip_modrm_operand(struct cursor *c, uint8_t modrm)
{
    uint8_t mod = MODRM_MOD(modrm);
    unsigned disp = 0;

    if (mod == MOD_REG)
        return;
    if (MODRM_RM(modrm) == RM_SIB) {
        if (MODRM_RM(fetch(c)) == SIB_NOBASE && mod == MOD_DISP0)
            disp = 4;
    } else if (MODRM_RM(modrm) == RM_RIPREL && mod == MOD_DISP0) {
        disp = 4;
    }
    if (mod == MOD_DISP8)
        disp = 1;
    else if (mod == MOD_DISP32)
        disp = 4;
    fetch_le(c, disp);
}

static unsigned imm_size(unsigned kind, const struct insn *in)
{
    switch (kind) {
    case IMM_B:
        return 1;
    case IMM_W:
        return 2;
    case IMM_Z:
        return in->opsize16 && !in->rex_w ? 2 : 4;
    case IMM_V:
        return in->rex_w ? 8 : in->opsize16 ? 2 : 4;
    case IMM_MOFFS:
        return in->addr32 ? 4 : 8;
    case IMM_ENTER:
        return 3;
    case IMM_REL32:
        return 4;
    default:
        return 0;
    }
}

/* Kind, condition and vector of a decoded opcode; imm is its ib for int n. */
static void classify(int map, uint8_t op, uint8_t modrm, uint64_t imm, struct insn *in)
{
    const struct branch_op *t = map == MAP_1BYTE ? branch_map1 : branch_map0f;
    size_t n = map == MAP_1BYTE ? ARRAY_LEN(branch_map1)
               : map == MAP_0F  ? ARRAY_LEN(branch_map0f)
                                : 0;

    if ((map == MAP_1BYTE && (op & ~CC_MASK) == OP_JCC8) ||
        (map == MAP_0F && (op & ~CC_MASK) == OP0F_JCC32)) {
        in->kind = INSN_JCC;
        in->cc = op & CC_MASK;
    } else if (map == MAP_1BYTE && op == OP_GRP5) {
        in->kind = grp5_kind[MODRM_REG(modrm)];
    }
    for (size_t i = 0; i < n; i++)
        if (t[i].op == op) {
            in->kind = t[i].kind;
            in->vector = in->kind == INSN_INT ? (uint8_t)imm : t[i].vector;
        }
}

/* Group members that are #UD (Table A-6); other groups only need a length. */
static bool group_member_invalid(uint8_t op, uint8_t modrm)
{
    uint8_t reg = MODRM_REG(modrm);

    switch (op) {
    case OP_GRP1A:
        return reg != 0;
    case OP_GRP11B:
    case OP_GRP11Z:
        return reg != 0 && modrm != MODRM_XBEGIN;
    case OP_GRP4:
        return reg > GRP4_MAX;
    case OP_GRP5:
        return reg > GRP5_PUSH ||
               ((reg == GRP5_CALL_FAR || reg == GRP5_JMP_FAR) && MODRM_MOD(modrm) == MOD_REG);
    default:
        return false;
    }
}

/*
 * Read VEX/EVEX (SDM Vol. 2A 2.3.5, 2.7.1) after its first byte; returns the
 * opcode map, or -1 if it is not a valid Intel encoding. In 64-bit mode C4,
 * C5 and 62 are always VEX/EVEX (LES, LDS and BOUND do not exist).
 */
static int decode_vex(struct cursor *c, uint8_t esc, struct insn *in)
{
    uint8_t b1 = fetch(c);

    if (esc == VEX2)
        return MAP_0F;
    if (esc == VEX3) {
        in->rex_w = fetch(c) & VEX_W;
        return b1 & VEX3_MAP;
    }
    uint8_t p1 = fetch(c);
    fetch(c); /* P2: masking, vector length, broadcast */
    if ((b1 & EVEX_P0_ZERO) || !(p1 & EVEX_P1_ONE))
        return -1;
    in->rex_w = p1 & VEX_W;
    return b1 & EVEX_P0_MAP;
}

/* Attribute byte (table cell) of opcode op in map, for a VEX/EVEX encoding. */
static uint8_t vex_attr(int map, uint8_t op, bool evex)
{
    switch (map) {
    case MAP_0F:
        if (!evex && op == OP_VZEROUPPER)
            return IMM_NONE;
        return map0f[op] & ATTR_MODRM ? map0f[op] : ATTR_BAD;
    case MAP_0F38:
        return ATTR_MAP0F38;
    case MAP_0F3A:
        return ATTR_MAP0F3A;
    case MAP_5:
    case MAP_6:
        return evex ? ATTR_MODRM : ATTR_BAD; /* AVX512-FP16 maps */
    default:
        return ATTR_BAD;
    }
}

static int fail(struct insn *out, int err)
{
    out->len = 0;
    out->kind = INSN_INVALID;
    return err;
}

int insn_decode(const uint8_t *code, size_t avail, uint64_t rip, struct insn *out)
{
    struct cursor c = {.code = code, .avail = avail};
    uint8_t rex = 0, last_rep = 0, op, attr, modrm = 0;
    bool lock = false;

    /* Field by field: a struct assignment may become a memset() call. */
    out->len = out->vector = out->cc = 0;
    out->kind = INSN_OTHER;
    out->rep = out->rex_w = out->opsize16 = out->addr32 = false;
    out->rel = 0;
    out->target = 0;

    /* SDM Vol. 2A 2.2.1: REX counts only directly before the opcode. */
    for (op = fetch(&c); !c.err; op = fetch(&c)) {
        if (is_legacy_prefix(op)) {
            rex = 0;
            out->opsize16 |= op == PFX_OPSIZE;
            out->addr32 |= op == PFX_ADDRSIZE;
            lock |= op == PFX_LOCK;
            if (op == PFX_REP || op == PFX_REPNE)
                last_rep = op;
        } else if (op >= REX_MIN && op <= REX_MAX) {
            rex = op;
        } else {
            break;
        }
    }
    out->rep = last_rep != 0;
    out->rex_w = rex & REX_W;

    int map = MAP_1BYTE;
    if (op == VEX2 || op == VEX3 || op == EVEX) {
        /* Vol. 2A 2.3.2: 66, F2, F3, F0 or REX before VEX/EVEX is #UD. */
        bool evex = op == EVEX, bad = rex || lock || out->rep || out->opsize16;
        map = decode_vex(&c, op, out);
        op = fetch(&c);
        attr = bad || map < 0 ? ATTR_BAD : vex_attr(map, op, evex);
    } else {
        if (op == ESC_0F) {
            op = fetch(&c);
            map = op == ESC_0F38 ? MAP_0F38 : op == ESC_0F3A ? MAP_0F3A : MAP_0F;
            if (map != MAP_0F)
                op = fetch(&c);
        }
        attr = map == MAP_1BYTE  ? map1[op]
               : map == MAP_0F   ? map0f[op]
               : map == MAP_0F38 ? ATTR_MAP0F38
                                 : ATTR_MAP0F3A;
        /* Table A-3 cells defined for one mandatory prefix only. */
        if (map == MAP_0F && op == OP0F_POPCNT && last_rep != PFX_REP)
            attr = ATTR_BAD;
        if (map == MAP_0F && (op == OP0F_VMREAD || op == OP0F_VMWRITE) &&
            (last_rep || out->opsize16))
            attr = ATTR_BAD;
    }
    if (c.err)
        return fail(out, c.err);
    if (attr & ATTR_BAD)
        return fail(out, INSN_ERR_INVALID);

    unsigned imm = attr & IMM_MASK;
    if (attr & ATTR_MODRM) {
        modrm = fetch(&c);
        if (map == MAP_1BYTE && group_member_invalid(op, modrm) && !c.err)
            return fail(out, INSN_ERR_INVALID);
        /* Vol. 2 MOV CRn/DRn: "the 2 bits in the mod field are ignored". */
        if (!(map == MAP_0F && op >= OP0F_MOV_CR && op <= OP0F_MOV_DR))
            skip_modrm_operand(&c, modrm);
        if (map == MAP_1BYTE && (op == OP_GRP3B || op == OP_GRP3Z) &&
            MODRM_REG(modrm) > GRP3_TEST_MAX)
            imm = IMM_NONE;
    }

    unsigned isize = imm_size(imm, out);
    uint64_t value = fetch_le(&c, isize);
    if (c.err)
        return fail(out, c.err);

    out->len = (uint8_t)c.pos;
    classify(map, op, modrm, value, out); /* VEX never reaches a branch cell */
    if (insn_has_target(out)) {
        out->rel = sign_extend(value, isize);
        out->target = rip + out->len + (uint64_t)out->rel;
    }
    return out->len;
}

bool insn_is_branch(const struct insn *insn)
{
    return insn->kind >= INSN_JCC && insn->kind <= INSN_SYSEXIT;
}

bool insn_is_conditional(const struct insn *insn)
{
    return (insn->kind >= INSN_JCC && insn->kind <= INSN_LOOPNE) || insn->kind == INSN_INTO;
}

bool insn_has_target(const struct insn *insn)
{
    return (insn->kind >= INSN_JCC && insn->kind <= INSN_JMP_REL) || insn->kind == INSN_CALL_REL;
}

bool insn_raises_interrupt(const struct insn *insn)
{
    return insn->kind >= INSN_INT3 && insn->kind <= INSN_INT1;
}

static const char *const kind_names[INSN_KIND_COUNT] = {
    [INSN_OTHER] = "other",       [INSN_JCC] = "jcc",           [INSN_JRCXZ] = "jrcxz",
    [INSN_LOOP] = "loop",         [INSN_LOOPE] = "loope",       [INSN_LOOPNE] = "loopne",
    [INSN_JMP_REL] = "jmp_rel",   [INSN_JMP_IND] = "jmp_ind",   [INSN_JMP_FAR] = "jmp_far",
    [INSN_CALL_REL] = "call_rel", [INSN_CALL_IND] = "call_ind", [INSN_CALL_FAR] = "call_far",
    [INSN_RET] = "ret",           [INSN_RET_IMM] = "ret_imm",   [INSN_RET_FAR] = "ret_far",
    [INSN_IRET] = "iret",         [INSN_INT3] = "int3",         [INSN_INT] = "int",
    [INSN_INTO] = "into",         [INSN_INT1] = "int1",         [INSN_SYSCALL] = "syscall",
    [INSN_SYSRET] = "sysret",     [INSN_SYSENTER] = "sysenter", [INSN_SYSEXIT] = "sysexit",
    [INSN_UD2] = "ud2",           [INSN_INVALID] = "invalid",
};

const char *insn_kind_name(unsigned kind)
{
    return kind < INSN_KIND_COUNT ? kind_names[kind] : "?";
}

const char *insn_error_name(int err)
{
    switch (err) {
    case INSN_ERR_TRUNCATED:
        return "truncated";
    case INSN_ERR_INVALID:
        return "invalid";
    default:
        return err < 0 ? "?" : "ok";
    }
}
