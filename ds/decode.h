/*
 * ds/decode.h - x86-64 instruction decoder for the software BTS model.
 *
 * The model single-steps traced code; at each #DB it decodes the instruction
 * at the previous RIP to learn (a) its length, so "new RIP != prev + len"
 * means a branch was taken, and (b) whether it is a branch at all, and which
 * kind. Only 64-bit mode (IA-32e, CS.L=1) is decoded. Semantics follow Intel
 * (SDM Vol. 2); where AMD differs it is noted in ds/decode.c.
 *
 * Pure C, no libc: it is linked into the kernel and into host unit tests.
 */
#ifndef BTSX_DS_DECODE_H
#define BTSX_DS_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* SDM Vol. 2A 2.3.11: an instruction longer than 15 bytes raises #GP. */
#define INSN_MAX_LEN 15

/* Negative results of insn_decode(); insn_error_name() spells them. */
enum insn_error {
    INSN_ERR_TRUNCATED = -1, /* fewer than the instruction's bytes available */
    INSN_ERR_INVALID = -2,   /* #UD in 64-bit mode, or longer than 15 bytes */
};

enum insn_kind {
    INSN_OTHER,    /* no control transfer (includes ud0/ud1, xbegin) */
    INSN_JCC,      /* 70-7F rel8, 0F 80-8F rel32; cc = condition 0..15 */
    INSN_JRCXZ,    /* E3 (jecxz with 67) */
    INSN_LOOP,     /* E2 */
    INSN_LOOPE,    /* E1 */
    INSN_LOOPNE,   /* E0 */
    INSN_JMP_REL,  /* EB rel8, E9 rel32 */
    INSN_JMP_IND,  /* FF /4 */
    INSN_JMP_FAR,  /* FF /5 m16:32 (m16:64 with REX.W) */
    INSN_CALL_REL, /* E8 rel32 */
    INSN_CALL_IND, /* FF /2 */
    INSN_CALL_FAR, /* FF /3 */
    INSN_RET,      /* C3 */
    INSN_RET_IMM,  /* C2 iw */
    INSN_RET_FAR,  /* CB, CA iw (lretq with REX.W) */
    INSN_IRET,     /* CF (iretq with REX.W, iretw with 66) */
    INSN_INT3,     /* CC */
    INSN_INT,      /* CD ib */
    INSN_INTO,     /* CE: #UD in 64-bit mode, decoded so it can be named */
    INSN_INT1,     /* F1 (icebp) */
    INSN_SYSCALL,  /* 0F 05 */
    INSN_SYSRET,   /* 0F 07 (sysretq with REX.W) */
    INSN_SYSENTER, /* 0F 34 */
    INSN_SYSEXIT,  /* 0F 35 (sysexitq with REX.W) */
    INSN_UD2,      /* 0F 0B */
    INSN_INVALID,  /* set together with a negative result */
    INSN_KIND_COUNT
};

struct insn {
    uint8_t len;     /* total length including prefixes */
    uint8_t kind;    /* enum insn_kind */
    uint8_t vector;  /* int n / int3 / int1 / into: the vector raised */
    uint8_t cc;      /* jcc: condition code (low nibble of the opcode) */
    bool rep;        /* an F2 or F3 prefix is present */
    bool rex_w;      /* effective REX.W (lretq, iretq, sysretq, ...) */
    bool opsize16;   /* 66 prefix present */
    bool addr32;     /* 67 prefix present (jecxz, loop on ecx) */
    int64_t rel;     /* direct branches: sign-extended displacement */
    uint64_t target; /* direct branches: rip + len + rel */
};

/*
 * Decode the instruction at code[0..avail) that lives at address rip.
 * Returns its length (1..15), or INSN_ERR_TRUNCATED / INSN_ERR_INVALID with
 * out->kind = INSN_INVALID and out->len = 0.
 */
int insn_decode(const uint8_t *code, size_t avail, uint64_t rip, struct insn *out);

/* Transfers control when taken: jumps, calls, returns, int n/3/1/o, iret, sys*. */
bool insn_is_branch(const struct insn *insn);
/* Taken or not at run time: jcc, jrcxz, loop*, into. */
bool insn_is_conditional(const struct insn *insn);
/* Direct (relative) branches: insn->target is valid. */
bool insn_has_target(const struct insn *insn);
/* int3, int n, int1, into: the handler's frame RIP is rip + len (into
 * never gets there in 64-bit mode: it raises #UD with frame RIP = rip). */
bool insn_raises_interrupt(const struct insn *insn);

const char *insn_kind_name(unsigned kind);
const char *insn_error_name(int err);

#endif /* BTSX_DS_DECODE_H */
