/*
 * The random program generator (tests/randprog.h has the contract).
 *
 * Layout: the code area (the buffer less RP_DATA_BYTES of tables at its end) is cut into
 * chunks of random size, contiguous, so chunks straddle cache lines and 4 KiB pages. The main
 * path visits chunks in random order (so the jumps between them go forwards and backwards,
 * near and far); every function lives in a chunk of its own. Unused bytes stay 0xCC (int3):
 * a wrong branch traps instead of running on.
 *
 * Emission order is execution order: an item records its transfers as it emits its bytes, a
 * new function's body is emitted (into its chunk) when the first call to it is, and what runs
 * again (a loop body, a function called once more) is deterministic, so its transfers are
 * copied from where they were first recorded. Every condition is set by a CMP on values the
 * generator chose just before the branch, and evaluated here (rp_cc_holds()).
 */
#include "tests/randprog.h"

#include "kernel/errno.h"
#include "kernel/string.h"

#define PAD_BYTE       0xCC
#define CHUNK_MIN      64
#define CHUNK_SPREAD   448 /* chunk sizes are CHUNK_MIN + [0, CHUNK_SPREAD) */
#define MAX_CHUNKS     256
#define MAX_FNS        64
#define MAX_CALL_DEPTH 3 /* calls nested below the program's own level */
#define MAX_LOOP_NEST  2
#define XFER_RESERVE   16  /* kept for the RETs and the final jumps still to come */
#define TAIL           24  /* a chunk's room for the jump out: setter + jcc rel32, or lretq */
#define FN_TAIL        4   /* ret imm16 */
#define LOOP_BODY_MAX  110 /* a loop body, so that its LOOPcc rel8 reaches back */
#define BACKHOP_MAX    126 /* the backward rel8 reaches -128 from behind a 2-byte jump */
#define REP_MAX        16
#define LOOP_MAX       5
#define ITEM_TRIES     8

/* The scratch registers the calling convention lets programs clobber, RCX aside: loops and
 * string instructions own RCX and save it around themselves. */
static const uint8_t scratch[] = {0, 2, 6, 7, 8, 9, 10, 11};
#define R_RAX 0
#define R_RCX 1

struct fn {
    uint64_t addr, ret_addr;
    uint32_t x0, xn; /* the body's transfers in the list */
    uint16_t ret_imm;
    uint8_t ret_cls; /* RP_C_RET or RP_C_RETIMM (ret imm16 with 0 too) */
    uint8_t height;  /* calls nested inside it */
    bool done;       /* emitted: a call from inside its own body must not pick it */
};

struct gen {
    struct rp_prog *p;
    const struct rp_params *par;
    uint64_t rng;
    uint32_t code_len, data_used, pos, istart;
    uint32_t nchunk, nfree;
    uint32_t lo[MAX_CHUNKS], hi[MAX_CHUNKS];
    bool used[MAX_CHUNKS];
    struct fn fn[MAX_FNS];
    uint32_t nfn;
    unsigned deepest; /* the deepest call level reached (function heights) */
    int err;
};

/* ------------------------------------------------------------------ basics */

static uint64_t next(struct gen *g)
{
    /* splitmix64: one 64-bit state, good mixing, no tables. */
    uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t rnd(struct gen *g, uint32_t n)
{
    return n ? (uint32_t)(next(g) % n) : 0;
}

static bool chance(struct gen *g, uint32_t one_in)
{
    return rnd(g, one_in) == 0;
}

static bool allowed(const struct gen *g, unsigned cls)
{
    return g->par->mix & RP_MIX(cls);
}

static uint64_t va(const struct gen *g, uint32_t off)
{
    return g->p->base + off;
}

static bool fits(const struct gen *g, uint32_t end, uint32_t n)
{
    return g->pos + n <= end;
}

static bool xroom(const struct gen *g, uint32_t n)
{
    return g->p->nxfer + n + XFER_RESERVE <= g->p->xfer_cap;
}

static void b8(struct gen *g, uint8_t v)
{
    g->p->code[g->pos++] = v;
}

static void b32(struct gen *g, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b8(g, (uint8_t)(v >> (8 * i)));
}

static void b64(struct gen *g, uint64_t v)
{
    b32(g, (uint32_t)v);
    b32(g, (uint32_t)(v >> 32));
}

static void put32(struct gen *g, uint32_t off, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        g->p->code[off + i] = (uint8_t)(v >> (8 * i));
}

static void begin(struct gen *g)
{
    g->istart = g->pos;
}

static struct rp_insn *end_insn(struct gen *g, unsigned cls)
{
    struct rp_prog *p = g->p;
    static struct rp_insn discard;
    if (p->ninsn >= p->insn_cap) {
        g->err = E_TOOLONG;
        return &discard;
    }
    struct rp_insn *i = &p->insn[p->ninsn++];
    *i = (struct rp_insn){
        .addr = va(g, g->istart), .len = (uint8_t)(g->pos - g->istart), .cls = (uint8_t)cls};
    return i;
}

/* A direct branch whose target is `target` (an offset); returns the record. */
static struct rp_insn *end_branch(struct gen *g, unsigned cls, int64_t target)
{
    struct rp_insn *i = end_insn(g, cls);
    i->target = g->p->base + (uint64_t)target;
    i->zero = target == (int64_t)g->pos;
    return i;
}

static void xfer(struct gen *g, uint64_t from, uint64_t to, unsigned cls, uint8_t vector)
{
    struct rp_prog *p = g->p;
    if (p->nxfer >= p->xfer_cap) {
        g->err = E_TOOLONG; /* the xroom() checks exist so that this never happens */
        return;
    }
    p->xfer[p->nxfer++] = (struct rp_transfer){from, to, (uint8_t)cls, vector, 0};
}

/* The transfer a direct branch makes when taken. */
static void xfer_branch(struct gen *g, const struct rp_insn *i, unsigned cls)
{
    xfer(g, i->addr, i->target, cls, 0);
    if (!g->err)
        g->p->xfer[g->p->nxfer - 1].next = i->zero;
}

/* Appends a copy of transfers [x0, xn): code that runs again does the same. */
static void replay(struct gen *g, uint32_t x0, uint32_t xn)
{
    for (uint32_t i = x0; i < xn && !g->err; i++) {
        struct rp_transfer t = g->p->xfer[i];
        xfer(g, t.from, t.to, t.cls, t.vector);
        if (!g->err)
            g->p->xfer[g->p->nxfer - 1].next = t.next;
    }
}

static uint8_t reg(struct gen *g)
{
    return scratch[rnd(g, sizeof(scratch))];
}

/* REX for a register in the opcode or ModRM.rm (B) and one in ModRM.reg (R). */
static uint8_t rex(bool w, uint8_t r, uint8_t b)
{
    return (uint8_t)(0x40 | (w ? 8 : 0) | (r >= 8 ? 4 : 0) | (b >= 8 ? 1 : 0));
}

/* ------------------------------------------------------------------ conditions */

bool rp_cc_holds(unsigned cc, uint32_t a, uint32_t b)
{
    uint32_t r = a - b;
    bool cf = a < b, zf = r == 0, sf = r >> 31, of = ((a ^ b) & (a ^ r)) >> 31;
    unsigned ones = 0;
    for (uint32_t v = r & 0xff; v; v &= v - 1)
        ones++;
    bool pf = !(ones & 1);
    bool hold;
    switch (cc >> 1) {
    case 0:
        hold = of;
        break;
    case 1:
        hold = cf;
        break;
    case 2:
        hold = zf;
        break;
    case 3:
        hold = cf || zf;
        break;
    case 4:
        hold = sf;
        break;
    case 5:
        hold = pf;
        break;
    case 6:
        hold = sf != of;
        break;
    default:
        hold = zf || sf != of;
        break;
    }
    return (cc & 1) ? !hold : hold;
}

static uint32_t operand(struct gen *g)
{
    static const uint32_t edge[] = {0,          1,          2,          0x7f,       0x80,      0xff,
                                    0x7fffffff, 0x80000000, 0x80000001, 0xfffffffe, 0xffffffff};
    switch (rnd(g, 3)) {
    case 0:
        return edge[rnd(g, sizeof(edge) / sizeof(edge[0]))];
    case 1:
        return rnd(g, 512) - 256;
    default:
        return (uint32_t)next(g);
    }
}

/* mov r32, a; cmp r32, b with `cmp a, b` making cc come out as *taken (if no pair found in a
 * few tries, *taken is flipped to what was found). Optionally a flag-neutral instruction
 * between. At most 12 + 8 bytes. */
static void set_cc(struct gen *g, unsigned cc, bool *taken)
{
    uint32_t a = 0, b = 0;
    for (int i = 0; i < 64; i++) {
        a = operand(g);
        b = chance(g, 4) ? a : operand(g);
        if (rp_cc_holds(cc, a, b) == *taken)
            break;
    }
    *taken = rp_cc_holds(cc, a, b);
    uint8_t r = reg(g);
    begin(g);
    if (r >= 8)
        b8(g, rex(false, 0, r));
    b8(g, (uint8_t)(0xB8 | (r & 7)));
    b32(g, a);
    end_insn(g, RP_C_MOV);
    begin(g);
    if (r == R_RAX) {
        b8(g, 0x3D);
    } else {
        if (r >= 8)
            b8(g, rex(false, 0, r));
        b8(g, 0x81);
        b8(g, (uint8_t)(0xF8 | (r & 7)));
    }
    b32(g, b);
    end_insn(g, RP_C_ALU);
    if (chance(g, 4)) { /* lea keeps the flags: the jcc still sees the CMP's */
        uint8_t d = reg(g), s = reg(g);
        begin(g);
        b8(g, rex(true, d, s));
        b8(g, 0x8D);
        b8(g, (uint8_t)(0x40 | (d & 7) << 3 | (s & 7)));
        b8(g, (uint8_t)rnd(g, 256));
        end_insn(g, RP_C_LEA);
    }
}
#define SET_CC_MAX 16

/* ------------------------------------------------------------------ filler */

static void nop(struct gen *g, unsigned len)
{
    static const uint8_t short_nops[9][9] = {
        {0x90},
        {0x66, 0x90},
        {0x0F, 0x1F, 0x00},
        {0x0F, 0x1F, 0x40, 0x00},
        {0x0F, 0x1F, 0x44, 0x00, 0x00},
        {0x66, 0x0F, 0x1F, 0x44, 0x00, 0x00},
        {0x0F, 0x1F, 0x80, 0x00, 0x00, 0x00, 0x00},
        {0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
        {0x66, 0x0F, 0x1F, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00},
    };
    begin(g);
    if (len <= 9) {
        for (unsigned i = 0; i < len; i++)
            b8(g, short_nops[len - 1][i]);
    } else { /* 10-15: operand-size prefixes and a CS override before the 8-byte form */
        for (unsigned i = 0; i < len - 9; i++)
            b8(g, 0x66);
        b8(g, 0x2E);
        for (unsigned i = 0; i < 8; i++)
            b8(g, short_nops[7][i]);
    }
    end_insn(g, RP_C_NOP);
}

static const uint8_t seg_prefix[] = {0x2E, 0x3E, 0x26, 0x64, 0x65};

/* One straight-line instruction (two for push/pop), at most 16 bytes. */
static void filler(struct gen *g)
{
    uint8_t d = reg(g), s = reg(g);
    switch (rnd(g, 7)) {
    case 0: /* mov r32, imm32, sometimes with a redundant REX */
        begin(g);
        if (d >= 8 || chance(g, 4))
            b8(g, rex(false, 0, d));
        b8(g, (uint8_t)(0xB8 | (d & 7)));
        b32(g, (uint32_t)next(g));
        end_insn(g, RP_C_MOV);
        break;
    case 1: /* movabs r64, imm64 */
        begin(g);
        b8(g, rex(true, 0, d));
        b8(g, (uint8_t)(0xB8 | (d & 7)));
        b64(g, next(g));
        end_insn(g, RP_C_MOV);
        break;
    case 2: { /* add/or/and/sub/xor/cmp r, imm8: 16, 32 or 64 bits */
        static const uint8_t ops[] = {0, 1, 4, 5, 6, 7};
        unsigned width = rnd(g, 3);
        begin(g);
        if (width == 0)
            b8(g, 0x66);
        if (width == 2 || d >= 8)
            b8(g, rex(width == 2, 0, d));
        b8(g, 0x83);
        b8(g, (uint8_t)(0xC0 | ops[rnd(g, sizeof(ops))] << 3 | (d & 7)));
        b8(g, (uint8_t)rnd(g, 256));
        end_insn(g, RP_C_ALU);
        break;
    }
    case 3: { /* add/or/and/sub/xor/cmp/test r, r */
        static const uint8_t ops[] = {0x01, 0x09, 0x21, 0x29, 0x31, 0x39, 0x85};
        bool w = chance(g, 2);
        begin(g);
        if (w || d >= 8 || s >= 8)
            b8(g, rex(w, s, d));
        b8(g, ops[rnd(g, sizeof(ops))]);
        b8(g, (uint8_t)(0xC0 | (s & 7) << 3 | (d & 7)));
        end_insn(g, RP_C_ALU);
        break;
    }
    case 4: /* lea r, [r + disp8], sometimes with a (meaningless) segment override */
        begin(g);
        if (chance(g, 3))
            b8(g, seg_prefix[rnd(g, sizeof(seg_prefix))]);
        b8(g, rex(true, d, s));
        b8(g, 0x8D);
        b8(g, (uint8_t)(0x40 | (d & 7) << 3 | (s & 7)));
        b8(g, (uint8_t)rnd(g, 256));
        end_insn(g, RP_C_LEA);
        break;
    case 5: /* push r; pop r' */
        begin(g);
        if (s >= 8)
            b8(g, 0x41);
        b8(g, (uint8_t)(0x50 | (s & 7)));
        end_insn(g, RP_C_PUSH);
        begin(g);
        if (d >= 8)
            b8(g, 0x41);
        b8(g, (uint8_t)(0x58 | (d & 7)));
        end_insn(g, RP_C_POP);
        break;
    default:
        nop(g, 1 + rnd(g, 15));
        break;
    }
}
#define FILLER_MAX 16

/* push rcx; lea rdi, [rsp-64]; [lea rsi, [rsp-128]]; mov ecx, n; rep movsb|stosb; pop rcx */
static bool item_rep(struct gen *g, uint32_t end)
{
    if (!allowed(g, RP_C_REP) || !fits(g, end, 22))
        return false;
    bool movs = chance(g, 2);
    begin(g);
    b8(g, 0x51);
    end_insn(g, RP_C_PUSH);
    begin(g);
    b8(g, 0x48), b8(g, 0x8D), b8(g, 0x7C), b8(g, 0x24), b8(g, 0xC0);
    end_insn(g, RP_C_LEA);
    if (movs) {
        begin(g);
        b8(g, 0x48), b8(g, 0x8D), b8(g, 0x74), b8(g, 0x24), b8(g, 0x80);
        end_insn(g, RP_C_LEA);
    }
    begin(g);
    b8(g, 0xB9);
    b32(g, rnd(g, REP_MAX + 1));
    end_insn(g, RP_C_MOV);
    begin(g);
    b8(g, 0xF3), b8(g, movs ? 0xA4 : 0xAA);
    end_insn(g, RP_C_REP);
    begin(g);
    b8(g, 0x59);
    end_insn(g, RP_C_POP);
    return true;
}

/* ------------------------------------------------------------------ direct branches */

/* Distance a local forward branch skips: 0 (to the next instruction), the most rel8 allows,
 * or something small. */
static uint32_t skip_distance(struct gen *g, uint32_t max)
{
    if (chance(g, 6))
        return 0;
    if (chance(g, 6))
        return max;
    return rnd(g, (max < 40 ? max : 40) + 1);
}

static uint32_t room(const struct gen *g, uint32_t end)
{
    return end > g->pos ? end - g->pos : 0;
}

/* jmp rel8|rel32 or a taken jcc rel8|rel32 over dead bytes; or a jcc not taken. */
static bool item_direct(struct gen *g, uint32_t end)
{
    unsigned kind = rnd(g, 4); /* jmp8, jmp32, jcc8, jcc32 */
    static const uint8_t cls[] = {RP_C_JMP8, RP_C_JMP32, RP_C_JCC8, RP_C_JCC32};
    bool jcc = kind >= 2, rel32 = kind & 1;
    if (!allowed(g, cls[kind]) || !fits(g, end, SET_CC_MAX + 7 + 1) || !xroom(g, 1))
        return false;
    unsigned cc = rnd(g, 16);
    bool taken = !jcc || chance(g, 2);
    if (jcc)
        set_cc(g, cc, &taken);
    bool hint = jcc && chance(g, 4);
    uint32_t len = (jcc ? (rel32 ? 6 : 2) : (rel32 ? 5 : 2)) + hint;
    uint32_t avail = room(g, end) > len + 1 ? room(g, end) - len - 1 : 0;
    int64_t target;
    if (taken) {
        uint32_t d = skip_distance(g, rel32 ? avail : (avail < 127 ? avail : 127));
        target = g->pos + len + d;
    } else if (!rel32) { /* anywhere rel8 reaches, its two ends often */
        int32_t disp = chance(g, 3) ? -128 : chance(g, 2) ? 127 : (int32_t)rnd(g, 256) - 128;
        target = (int64_t)g->pos + len + disp;
    } else {
        target = rnd(g, g->code_len);
    }
    int64_t disp = target - (int64_t)(g->pos + len);
    begin(g);
    if (hint)
        b8(g, taken ? 0x3E : 0x2E);
    if (!jcc) {
        b8(g, rel32 ? 0xE9 : 0xEB);
    } else if (rel32) {
        b8(g, 0x0F), b8(g, (uint8_t)(0x80 | cc));
    } else {
        b8(g, (uint8_t)(0x70 | cc));
    }
    if (rel32)
        b32(g, (uint32_t)disp);
    else
        b8(g, (uint8_t)disp);
    struct rp_insn *i = end_branch(g, cls[kind], target);
    i->cc = (uint8_t)cc;
    i->taken = taken;
    if (taken) {
        xfer_branch(g, i, cls[kind]);
        g->pos = (uint32_t)target;
    }
    return true;
}

/* A backward rel8 jump, at -128 or nearer:
 *   A: jmp C;  B: body; jmp D;  (int3 up to C)  C: jmp B;  D:
 * with C - B = hop <= 126, so C's displacement is -(hop + 2). */
static void items(struct gen *g, uint32_t end, unsigned depth, unsigned loops);

static bool item_backhop(struct gen *g, uint32_t end, unsigned depth, unsigned loops)
{
    if (!allowed(g, RP_C_JMP8) || !fits(g, end, 2 + 2 + 2 + 8) || !xroom(g, 3))
        return false;
    uint32_t maxhop = room(g, end) - 4;
    if (maxhop > BACKHOP_MAX)
        maxhop = BACKHOP_MAX;
    uint32_t hop = chance(g, 2) ? maxhop : 2 + rnd(g, maxhop - 1);
    uint32_t a = g->pos, bb = a + 2, c = bb + hop, dd = c + 2;
    begin(g);
    b8(g, 0xEB), b8(g, (uint8_t)hop);
    struct rp_insn *ia = end_branch(g, RP_C_JMP8, c);
    xfer_branch(g, ia, RP_C_JMP8);
    g->pos = c;
    begin(g);
    b8(g, 0xEB), b8(g, (uint8_t)(bb - dd));
    struct rp_insn *ic = end_branch(g, RP_C_JMP8, bb);
    xfer_branch(g, ic, RP_C_JMP8);
    g->pos = bb;
    items(g, c - 2, depth, loops);
    begin(g);
    b8(g, 0xEB), b8(g, (uint8_t)(dd - (g->pos + 1)));
    struct rp_insn *ij = end_branch(g, RP_C_JMP8, dd);
    xfer_branch(g, ij, RP_C_JMP8);
    g->pos = dd;
    return true;
}

/* push rcx; mov ecx, n; L: body; cmp ecx, j; loop|loope|loopne L; pop rcx */
static bool item_loop(struct gen *g, uint32_t end, unsigned depth, unsigned loops)
{
    static const uint8_t cls[] = {RP_C_LOOP, RP_C_LOOPE, RP_C_LOOPNE};
    static const uint8_t op[] = {0xE2, 0xE1, 0xE0};
    unsigned kind = rnd(g, 3);
    if (!allowed(g, cls[kind]) || loops >= MAX_LOOP_NEST || !fits(g, end, 1 + 5 + 6 + 2 + 1 + 4) ||
        !xroom(g, 2))
        return false;
    begin(g);
    b8(g, 0x51);
    end_insn(g, RP_C_PUSH);
    begin(g);
    b8(g, 0xB9);
    uint32_t imm = g->pos;
    b32(g, 1);
    end_insn(g, RP_C_MOV);
    uint32_t top = g->pos, x0 = g->p->nxfer;
    uint32_t body_end = end - (6 + 2 + 1);
    if (body_end > top + LOOP_BODY_MAX)
        body_end = top + LOOP_BODY_MAX;
    if (!chance(g, 3))
        items(g, body_end, depth, loops + 1);
    uint32_t x1 = g->p->nxfer;
    /* Iterations: ECX counts down from n; the CMP before the LOOPcc sets ZF = (ECX == j). */
    uint32_t n = 1 + rnd(g, LOOP_MAX), j = rnd(g, n + 2);
    uint32_t runs = 0;
    for (uint32_t c = n;;) {
        runs++;
        bool zf = c == j;
        c--;
        if (c == 0 || (kind == 1 && !zf) || (kind == 2 && zf))
            break;
    }
    if (!xroom(g, (runs - 1) * (x1 - x0 + 1) + 1))
        n = 1, runs = 1; /* no room to repeat: run once */
    put32(g, imm, n);
    begin(g);
    b8(g, 0x81), b8(g, 0xF9);
    b32(g, j);
    end_insn(g, RP_C_ALU);
    begin(g);
    b8(g, op[kind]), b8(g, (uint8_t)(top - (g->istart + 2)));
    struct rp_insn *il = end_branch(g, cls[kind], top);
    il->taken = runs > 1;
    for (uint32_t r = 1; r < runs; r++) {
        xfer_branch(g, il, cls[kind]);
        replay(g, x0, x1);
    }
    begin(g);
    b8(g, 0x59);
    end_insn(g, RP_C_POP);
    return true;
}

/* push rcx; mov ecx, v; jrcxz|jecxz over dead bytes (v = 0) or not (target anywhere); pop rcx */
static bool item_jrcxz(struct gen *g, uint32_t end)
{
    if (!allowed(g, RP_C_JRCXZ) || !fits(g, end, 1 + 5 + 3 + 1 + 4) || !xroom(g, 1))
        return false;
    bool taken = chance(g, 2), e = chance(g, 3);
    begin(g);
    b8(g, 0x51);
    end_insn(g, RP_C_PUSH);
    begin(g);
    b8(g, 0xB9);
    b32(g, taken ? 0 : 1 + rnd(g, 0xffff));
    end_insn(g, RP_C_MOV);
    uint32_t len = 2 + e, after = g->pos + len;
    uint32_t avail = room(g, end) - len - 1;
    int64_t target = taken ? after + skip_distance(g, avail < 127 ? avail : 127)
                           : (int64_t)after + (int32_t)rnd(g, 256) - 128;
    begin(g);
    if (e)
        b8(g, 0x67);
    b8(g, 0xE3), b8(g, (uint8_t)(target - after));
    struct rp_insn *i = end_branch(g, RP_C_JRCXZ, target);
    i->taken = taken;
    if (taken) {
        xfer_branch(g, i, RP_C_JRCXZ);
        g->pos = (uint32_t)target;
    }
    begin(g);
    b8(g, 0x59);
    end_insn(g, RP_C_POP);
    return true;
}

/* call $+5; pop r: a call to the next instruction */
static bool item_call0(struct gen *g, uint32_t end)
{
    if (!allowed(g, RP_C_CALL) || !fits(g, end, 7) || !xroom(g, 1))
        return false;
    begin(g);
    b8(g, 0xE8), b32(g, 0);
    struct rp_insn *i = end_branch(g, RP_C_CALL, g->pos);
    xfer_branch(g, i, RP_C_CALL);
    uint8_t r = reg(g);
    begin(g);
    if (r >= 8)
        b8(g, 0x41);
    b8(g, (uint8_t)(0x58 | (r & 7)));
    end_insn(g, RP_C_POP);
    return true;
}

/* ------------------------------------------------------------------ indirect branches */

/* A table of `n` entries in the data area, entry `k` = target, the others other code
 * addresses (never used). Returns its offset, or 0 if the area is full. */
static uint32_t table(struct gen *g, unsigned n, unsigned k, uint64_t target)
{
    if (g->data_used + 8 * n > RP_DATA_BYTES)
        return 0;
    uint32_t off = g->code_len + g->data_used;
    for (unsigned i = 0; i < n; i++) {
        uint64_t v = i == k ? target : va(g, rnd(g, g->code_len));
        for (int b = 0; b < 8; b++)
            g->p->code[off + 8 * i + b] = (uint8_t)(v >> (8 * b));
    }
    g->data_used += 8 * n;
    return off;
}

/* lea r, [rip + off] */
static void lea_rip(struct gen *g, uint8_t r, uint32_t off)
{
    begin(g);
    b8(g, rex(true, r, 0)), b8(g, 0x8D), b8(g, (uint8_t)(0x05 | (r & 7) << 3));
    b32(g, off - (g->pos + 4));
    end_insn(g, RP_C_LEA);
}

/* An indirect jmp or call (ext 4 or 2 of FF) to `target` through a register, a table indexed
 * by a register, or a RIP-relative slot. *len_out gets the bytes the whole sequence needs;
 * with emit false nothing is written (sizing pass). Returns false if the tables are full. */
enum ind_how { IND_REG, IND_TABLE, IND_SLOT, IND_HOWS };
#define IND_MAX 17

static bool indirect(struct gen *g, unsigned ext, enum ind_how how, uint64_t target,
                     unsigned *cls_out)
{
    bool call = ext == 2;
    if (how == IND_REG) {
        uint8_t r = reg(g);
        lea_rip(g, r, (uint32_t)(target - g->p->base));
        begin(g);
        if (r >= 8)
            b8(g, 0x41);
        b8(g, 0xFF), b8(g, (uint8_t)(0xC0 | ext << 3 | (r & 7)));
        *cls_out = call ? RP_C_CALL_REG : RP_C_JMP_REG;
    } else if (how == IND_TABLE) {
        unsigned n = 1 + rnd(g, 4), k = rnd(g, n);
        uint32_t t = table(g, n, k, target);
        if (!t)
            return false;
        uint8_t b = reg(g), x;
        do
            x = reg(g);
        while (x == b);
        lea_rip(g, b, t);
        begin(g);
        if (x >= 8)
            b8(g, 0x41);
        b8(g, (uint8_t)(0xB8 | (x & 7))), b32(g, k);
        end_insn(g, RP_C_MOV);
        begin(g);
        if (b >= 8 || x >= 8)
            b8(g, (uint8_t)(0x40 | (x >= 8 ? 2 : 0) | (b >= 8 ? 1 : 0)));
        b8(g, 0xFF), b8(g, (uint8_t)(0x04 | ext << 3)),
            b8(g, (uint8_t)(0xC0 | (x & 7) << 3 | (b & 7)));
        *cls_out = call ? RP_C_CALL_MEM : RP_C_JMP_MEM;
    } else {
        uint32_t t = table(g, 1, 0, target);
        if (!t)
            return false;
        begin(g);
        b8(g, 0xFF), b8(g, (uint8_t)(0x05 | ext << 3));
        b32(g, t - (g->pos + 4));
        *cls_out = call ? RP_C_CALL_MEM : RP_C_JMP_MEM;
    }
    struct rp_insn *i = end_insn(g, *cls_out);
    xfer(g, i->addr, target, *cls_out, 0);
    return true;
}

/* A far return to `target` at the same privilege: mov eax, cs; push rax; lea rax, [rip+T];
 * push rax; lretq. 13 bytes. */
static void lret(struct gen *g, uint32_t target)
{
    begin(g);
    b8(g, 0x8C), b8(g, 0xC8);
    end_insn(g, RP_C_MOV);
    begin(g);
    b8(g, 0x50);
    end_insn(g, RP_C_PUSH);
    lea_rip(g, R_RAX, target);
    begin(g);
    b8(g, 0x50);
    end_insn(g, RP_C_PUSH);
    begin(g);
    b8(g, 0x48), b8(g, 0xCB);
    struct rp_insn *i = end_insn(g, RP_C_LRET);
    xfer(g, i->addr, va(g, target), RP_C_LRET, 0);
}
#define LRET_LEN 13

/* An indirect jmp or lretq forward over dead bytes. */
static bool item_indirect_jmp(struct gen *g, uint32_t end)
{
    unsigned how = rnd(g, IND_HOWS + 1); /* the extra one: lretq */
    if (!fits(g, end, IND_MAX + 1) || !xroom(g, 1))
        return false;
    if (how == IND_HOWS ? !allowed(g, RP_C_LRET)
                        : !allowed(g, how == IND_REG ? RP_C_JMP_REG : RP_C_JMP_MEM))
        return false;
    uint32_t d = skip_distance(g, room(g, end) - IND_MAX - 1);
    /* The target follows the sequence, whose length depends on the registers drawn: place it
     * past the longest form; the bytes between stay int3. */
    uint32_t target = g->pos + IND_MAX + d;
    unsigned cls;
    if (how == IND_HOWS)
        lret(g, target);
    else if (!indirect(g, 4, how, va(g, target), &cls))
        return false;
    g->pos = target;
    return true;
}

/* ------------------------------------------------------------------ calls */

static int free_chunk(struct gen *g)
{
    if (!g->nfree)
        return -1;
    uint32_t k = rnd(g, g->nfree);
    for (uint32_t c = 0; c < g->nchunk; c++)
        if (!g->used[c] && k-- == 0) {
            g->used[c] = true;
            g->nfree--;
            return (int)c;
        }
    return -1;
}

/* Emits a new function's body into a free chunk; the caller has recorded the call. */
static void function_body(struct gen *g, struct fn *f, int c, unsigned depth)
{
    uint32_t saved = g->pos;
    unsigned deepest = g->deepest;
    g->deepest = depth;
    g->pos = g->lo[c];
    f->x0 = g->p->nxfer;
    items(g, g->hi[c] - FN_TAIL, depth, 0);
    f->xn = g->p->nxfer;
    begin(g);
    if (f->ret_imm || chance(g, 8)) {
        b8(g, 0xC2), b8(g, (uint8_t)f->ret_imm), b8(g, (uint8_t)(f->ret_imm >> 8));
        f->ret_cls = RP_C_RETIMM;
    } else {
        b8(g, 0xC3);
        f->ret_cls = RP_C_RET;
    }
    end_insn(g, f->ret_cls);
    f->ret_addr = va(g, g->istart);
    f->height = (uint8_t)(g->deepest - depth);
    if (deepest > g->deepest)
        g->deepest = deepest;
    f->done = true;
    g->pos = saved;
}

/* Calls a function (new, or an earlier one that fits the depth left): rel32, through a
 * register, a table or a slot; pushes first what its ret imm16 pops. */
static bool item_call(struct gen *g, uint32_t end, unsigned depth)
{
    unsigned how = rnd(g, 4); /* rel32, or an ind_how */
    unsigned cls = how == 0 ? RP_C_CALL : how == 1 ? RP_C_CALL_REG : RP_C_CALL_MEM;
    if (!allowed(g, cls) || depth >= MAX_CALL_DEPTH || !fits(g, end, 3 + IND_MAX) || !xroom(g, 4))
        return false;
    struct fn *f = NULL;
    int c = -1;
    if (g->nfn && chance(g, 2)) {
        struct fn *e = &g->fn[rnd(g, g->nfn)];
        if (e->done && depth + 1 + e->height <= MAX_CALL_DEPTH && xroom(g, e->xn - e->x0 + 2))
            f = e;
    }
    bool fresh = !f;
    if (fresh) {
        if (g->nfn >= MAX_FNS || (c = free_chunk(g)) < 0)
            return false;
        f = &g->fn[g->nfn++];
        *f = (struct fn){.addr = va(g, g->lo[c])};
        if (allowed(g, RP_C_RETIMM) && chance(g, 3))
            f->ret_imm = (uint16_t)(8 * rnd(g, 4));
    }
    if (how >= 2 && g->data_used + 32 > RP_DATA_BYTES)
        how = 1;
    for (unsigned i = 0; i < f->ret_imm / 8u; i++) {
        begin(g);
        b8(g, 0x50);
        end_insn(g, RP_C_PUSH);
    }
    if (how == 0) {
        begin(g);
        b8(g, 0xE8), b32(g, (uint32_t)(f->addr - va(g, g->pos + 4)));
        struct rp_insn *i = end_insn(g, RP_C_CALL);
        i->target = f->addr;
        xfer_branch(g, i, RP_C_CALL);
    } else {
        unsigned got;
        indirect(g, 2, how == 1 ? IND_REG : how == 2 ? IND_TABLE : IND_SLOT, f->addr, &got);
    }
    if (fresh)
        function_body(g, f, c, depth + 1);
    else
        replay(g, f->x0, f->xn);
    if (depth + 1 + f->height > g->deepest)
        g->deepest = depth + 1 + f->height;
    xfer(g, f->ret_addr, va(g, g->pos), f->ret_cls, 0);
    return true;
}

/* ------------------------------------------------------------------ traps and faults */

/* push rcx; mov eax, NR; syscall; pop rcx: a system call that returns to the next
 * instruction (SYSCALL puts the return address in RCX, which loops own). */
static void syscall_insn(struct gen *g)
{
    begin(g);
    b8(g, 0x51);
    end_insn(g, RP_C_PUSH);
    begin(g);
    b8(g, 0xB8), b32(g, g->par->syscall_nr);
    end_insn(g, RP_C_MOV);
    begin(g);
    b8(g, 0x0F), b8(g, 0x05);
    struct rp_insn *i = end_insn(g, RP_C_SYSCALL);
    xfer(g, i->addr, i->addr + i->len, RP_C_SYSCALL, 0);
    begin(g);
    b8(g, 0x59);
    end_insn(g, RP_C_POP);
}

static bool item_trap(struct gen *g, uint32_t end)
{
    static const uint8_t cls[] = {RP_C_INT3, RP_C_INTN, RP_C_UD, RP_C_PF, RP_C_SYSCALL};
    unsigned kind = rnd(g, 5);
    if (!allowed(g, cls[kind]) || !fits(g, end, 14) || !xroom(g, 1))
        return false;
    if ((kind == 3 && !g->par->fault_addr) || (kind == 1 && !g->par->intn_vector) ||
        (kind == 4 && !g->par->syscall))
        return false;
    if (kind == 4) {
        syscall_insn(g);
        return true;
    }
    uint8_t vector = 3;
    if (kind == 3) { /* mov r, fault_addr; mov r', [r] */
        uint8_t r = reg(g), d = reg(g);
        begin(g);
        b8(g, rex(true, 0, r)), b8(g, (uint8_t)(0xB8 | (r & 7))), b64(g, g->par->fault_addr);
        end_insn(g, RP_C_MOV);
        begin(g);
        b8(g, rex(true, d, r)), b8(g, 0x8B), b8(g, (uint8_t)((d & 7) << 3 | (r & 7)));
        vector = 14;
    } else {
        begin(g);
        if (kind == 0)
            b8(g, 0xCC);
        else if (kind == 1)
            b8(g, 0xCD), b8(g, g->par->intn_vector), vector = g->par->intn_vector;
        else
            b8(g, 0x0F), b8(g, 0x0B), vector = 6;
    }
    struct rp_insn *i = end_insn(g, cls[kind]);
    xfer(g, i->addr, i->addr + i->len, cls[kind], vector);
    return true;
}

/* ------------------------------------------------------------------ blocks */

/* Items until the block decides to stop or [pos, end) is full. */
static void items(struct gen *g, uint32_t end, unsigned depth, unsigned loops)
{
    while (!g->err && fits(g, end, FILLER_MAX) && !chance(g, 24)) {
        bool done = false;
        for (int t = 0; t < ITEM_TRIES && !done; t++) {
            switch (rnd(g, 16)) {
            case 0:
            case 1:
            case 2:
                done = item_direct(g, end);
                break;
            case 3:
                done = item_backhop(g, end, depth, loops);
                break;
            case 4:
                done = item_loop(g, end, depth, loops);
                break;
            case 5:
                done = item_jrcxz(g, end);
                break;
            case 6:
                done = item_call0(g, end);
                break;
            case 7:
                done = item_indirect_jmp(g, end);
                break;
            case 8:
            case 9:
                done = item_call(g, end, depth);
                break;
            case 10:
                done = item_trap(g, end);
                break;
            case 11:
                done = item_rep(g, end);
                break;
            case 12:
                done = item_direct(g, end);
                break;
            default: /* a quarter of the items, less for the branches' own setters */
                filler(g), done = true;
                break;
            }
        }
        if (!done)
            filler(g);
    }
}

/* The jump from the end of one chunk to the start of the next on the main path. */
static void chain(struct gen *g, uint32_t target)
{
    for (;;) {
        unsigned kind = rnd(g, 5);
        int64_t after8 = g->pos + 2;
        int64_t d8 = (int64_t)target - after8;
        bool near = d8 >= -128 && d8 <= 127;
        if (kind == 0 && near && allowed(g, RP_C_JMP8)) {
            begin(g);
            b8(g, 0xEB), b8(g, (uint8_t)d8);
            struct rp_insn *i = end_branch(g, RP_C_JMP8, target);
            xfer_branch(g, i, RP_C_JMP8);
            return;
        }
        if (kind == 1 && allowed(g, RP_C_JCC32)) {
            unsigned cc = rnd(g, 16);
            bool taken = true;
            set_cc(g, cc, &taken);
            if (taken) {
                begin(g);
                b8(g, 0x0F), b8(g, (uint8_t)(0x80 | cc)), b32(g, target - (g->pos + 4));
                struct rp_insn *i = end_branch(g, RP_C_JCC32, target);
                i->cc = (uint8_t)cc;
                i->taken = true;
                xfer_branch(g, i, RP_C_JCC32);
                return;
            }
            /* no operands found for a taken cc: the setter stays, fall to a jmp */
            kind = 4;
        }
        if (kind == 2 && allowed(g, RP_C_LRET)) {
            lret(g, target);
            return;
        }
        unsigned cls;
        if (kind == 3 && allowed(g, RP_C_JMP_REG) &&
            indirect(g, 4, rnd(g, IND_HOWS), va(g, target), &cls))
            return;
        if (kind == 4 || !allowed(g, RP_C_JMP8)) {
            begin(g);
            b8(g, 0xE9), b32(g, target - (g->pos + 4));
            struct rp_insn *i = end_branch(g, RP_C_JMP32, target);
            xfer_branch(g, i, RP_C_JMP32);
            return;
        }
    }
}

int rp_generate(struct rp_prog *p, uint64_t seed, uint64_t index, const struct rp_params *par)
{
    if (!p || !p->code || !p->xfer || !p->insn || !par || par->size < RP_SIZE_MIN ||
        p->xfer_cap < 4 * XFER_RESERVE)
        return E_INVAL;
    static struct gen gs; /* too big for a kernel stack; the generator is not reentrant */
    struct gen *g = &gs;
    memset(g, 0, sizeof(*g));
    g->p = p;
    g->par = par;
    g->rng = seed ^ (index * 0xd1342543de82ef95ull);
    next(g);
    p->nxfer = p->ninsn = 0;
    p->seed = seed;
    p->index = index;
    p->params = *par;
    g->code_len = p->code_len = par->size - RP_DATA_BYTES;
    memset(p->code, PAD_BYTE, par->size);

    for (uint32_t at = 0; g->nchunk < MAX_CHUNKS && at + CHUNK_MIN <= g->code_len;) {
        uint32_t hi = at + CHUNK_MIN + rnd(g, CHUNK_SPREAD);
        if (hi > g->code_len || g->code_len - hi < CHUNK_MIN)
            hi = g->code_len;
        g->lo[g->nchunk] = at;
        g->hi[g->nchunk++] = hi;
        at = hi;
    }
    g->nfree = g->nchunk;

    int c = free_chunk(g);
    p->entry = va(g, g->lo[c]);
    g->pos = g->lo[c];
    for (;;) {
        items(g, g->hi[c] - TAIL, 0, 0);
        int n = -1;
        if (xroom(g, 2) && !chance(g, 10))
            n = free_chunk(g);
        if (n < 0)
            break;
        chain(g, g->lo[n]);
        c = n;
        g->pos = g->lo[c];
    }
    begin(g);
    b8(g, 0xC3);
    struct rp_insn *r = end_insn(g, RP_C_RET);
    xfer(g, r->addr, RP_RETURN, RP_C_RET, 0);
    return g->err;
}

/* ------------------------------------------------------------------ reporting */

static const char *const class_names[] = {
#define RP_CLASS_NAME(name, text) text,
    RP_CLASSES(RP_CLASS_NAME)
#undef RP_CLASS_NAME
};

const char *rp_class_name(unsigned cls)
{
    return cls < RP_C_COUNT ? class_names[cls] : "?";
}

const char *rp_cc_name(unsigned cc)
{
    static const char *const names[] = {"jo", "jno", "jb", "jae", "je", "jne", "jbe", "ja",
                                        "js", "jns", "jp", "jnp", "jl", "jge", "jle", "jg"};
    return names[cc & 15];
}

void rp_hist_add(struct rp_hist *h, const struct rp_prog *p)
{
    h->programs++;
    for (uint32_t k = 0; k < p->ninsn; k++) {
        const struct rp_insn *i = &p->insn[k];
        h->emitted[i->cls]++;
        h->zero_distance += i->zero;
        h->page_crossing += (i->addr >> 12) != ((i->addr + i->len - 1) >> 12);
        if (i->cls == RP_C_JCC8 || i->cls == RP_C_JCC32)
            h->jcc[i->cls == RP_C_JCC32][i->taken][i->cc]++;
    }
    for (uint32_t k = 0; k < p->nxfer; k++)
        h->made[p->xfer[k].cls]++;
}

/* Appends text, a decimal or a hex number to a report line. */
struct out {
    char *buf;
    uint32_t n;
};

static void put_s(struct out *o, const char *s)
{
    while (*s && o->n < RP_LINE_MAX - 1)
        o->buf[o->n++] = *s++;
    o->buf[o->n] = 0;
}

static void put_num(struct out *o, uint64_t v, unsigned base, unsigned digits)
{
    char tmp[24];
    unsigned k = 0;
    do {
        tmp[k++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v || k < digits);
    char s[25];
    for (unsigned i = 0; i < k; i++)
        s[i] = tmp[k - 1 - i];
    s[k] = 0;
    put_s(o, s);
}

bool rp_report_line(const struct rp_prog *p, uint32_t n, char *buf)
{
    struct out o = {buf, 0};
    buf[0] = 0;
    if (n == 0) {
        put_s(&o, "randprog seed=0x"), put_num(&o, p->seed, 16, 1);
        put_s(&o, " index="), put_num(&o, p->index, 10, 1);
        put_s(&o, " size="), put_num(&o, p->params.size, 10, 1);
        put_s(&o, " mix=0x"), put_num(&o, p->params.mix, 16, 1);
        put_s(&o, " base=0x"), put_num(&o, p->base, 16, 1);
        put_s(&o, " fault=0x"), put_num(&o, p->params.fault_addr, 16, 1);
        put_s(&o, " int=0x"), put_num(&o, p->params.intn_vector, 16, 1);
        if (p->params.syscall)
            put_s(&o, " syscall=0x"), put_num(&o, p->params.syscall_nr, 16, 1);
        return true;
    }
    uint32_t off = (n - 1) * RP_REPORT_BYTES;
    if (off >= p->params.size)
        return false;
    put_s(&o, "randprog bytes +0x"), put_num(&o, off, 16, 4), put_s(&o, ": ");
    for (uint32_t i = off; i < off + RP_REPORT_BYTES && i < p->params.size; i++)
        put_num(&o, p->code[i], 16, 2);
    return true;
}
