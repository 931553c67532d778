/*
 * Host tests of ds/decode.c with hand-written byte strings: every branch kind
 * and its prefix combinations (exact length, kind, target, condition, vector
 * and prefix flags), the length of ordinary instructions of every shape,
 * #UD encodings, the 15-byte limit, truncation (with a guard page proving
 * the decoder never reads past what it is given), random bytes, and the
 * predicates.
 * tests/unit/test_decode_objdump.c compares against objdump in bulk.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ds/decode.h"

#define BASE 0x401000ull /* rip of every case that does not name one */

/* Expected prefix flags; all four are checked on every case. */
#define F_REP  0x1
#define F_REXW 0x2
#define F_OP16 0x4
#define F_A32  0x8

struct dcase {
    const char *name;
    const char *bytes;
    size_t n;
    uint64_t rip;
    int len; /* or INSN_ERR_* */
    uint8_t kind;
    uint64_t target; /* direct branches */
    uint8_t cc, vector;
    unsigned flags;
};

#define B(s) .bytes = (s), .n = sizeof(s) - 1

static const struct dcase branches[] = {
    /* jcc rel8 / rel32: condition from the opcode's low nibble. */
    {"jo rel8", B("\x70\x05"), 0, 2, INSN_JCC, BASE + 7, 0x0, 0, 0},
    {"jno rel8 back", B("\x71\xfe"), 0, 2, INSN_JCC, BASE, 0x1, 0, 0},
    {"jb rel8 -128", B("\x72\x80"), 0, 2, INSN_JCC, BASE + 2 - 128, 0x2, 0, 0},
    {"jae rel8 +127", B("\x73\x7f"), 0, 2, INSN_JCC, BASE + 2 + 127, 0x3, 0, 0},
    {"je rel8", B("\x74\x00"), 0, 2, INSN_JCC, BASE + 2, 0x4, 0, 0},
    {"jne rel8", B("\x75\x10"), 0, 2, INSN_JCC, BASE + 0x12, 0x5, 0, 0},
    {"jbe rel8", B("\x76\x10"), 0, 2, INSN_JCC, BASE + 0x12, 0x6, 0, 0},
    {"ja rel8", B("\x77\x10"), 0, 2, INSN_JCC, BASE + 0x12, 0x7, 0, 0},
    {"js rel8", B("\x78\x10"), 0, 2, INSN_JCC, BASE + 0x12, 0x8, 0, 0},
    {"jns rel8", B("\x79\x10"), 0, 2, INSN_JCC, BASE + 0x12, 0x9, 0, 0},
    {"jp rel8", B("\x7a\x10"), 0, 2, INSN_JCC, BASE + 0x12, 0xa, 0, 0},
    {"jnp rel8", B("\x7b\x10"), 0, 2, INSN_JCC, BASE + 0x12, 0xb, 0, 0},
    {"jl rel8", B("\x7c\x10"), 0, 2, INSN_JCC, BASE + 0x12, 0xc, 0, 0},
    {"jge rel8", B("\x7d\x10"), 0, 2, INSN_JCC, BASE + 0x12, 0xd, 0, 0},
    {"jle rel8", B("\x7e\x10"), 0, 2, INSN_JCC, BASE + 0x12, 0xe, 0, 0},
    {"jg rel8", B("\x7f\x10"), 0, 2, INSN_JCC, BASE + 0x12, 0xf, 0, 0},
    {"jo rel32", B("\x0f\x80\x00\x01\x00\x00"), 0, 6, INSN_JCC, BASE + 0x106, 0x0, 0, 0},
    {"jno rel32", B("\x0f\x81\xfa\xff\xff\xff"), 0, 6, INSN_JCC, BASE, 0x1, 0, 0},
    {"jb rel32", B("\x0f\x82\x00\x00\x00\x80"), 0, 6, INSN_JCC, BASE + 6 - 0x80000000ull, 0x2, 0,
     0},
    {"jae rel32", B("\x0f\x83\xff\xff\xff\x7f"), 0, 6, INSN_JCC, BASE + 6 + 0x7fffffffull, 0x3, 0,
     0},
    {"je rel32", B("\x0f\x84\x10\x00\x00\x00"), 0, 6, INSN_JCC, BASE + 0x16, 0x4, 0, 0},
    {"jne rel32", B("\x0f\x85\x10\x00\x00\x00"), 0, 6, INSN_JCC, BASE + 0x16, 0x5, 0, 0},
    {"jbe rel32", B("\x0f\x86\x10\x00\x00\x00"), 0, 6, INSN_JCC, BASE + 0x16, 0x6, 0, 0},
    {"ja rel32", B("\x0f\x87\x10\x00\x00\x00"), 0, 6, INSN_JCC, BASE + 0x16, 0x7, 0, 0},
    {"js rel32", B("\x0f\x88\x10\x00\x00\x00"), 0, 6, INSN_JCC, BASE + 0x16, 0x8, 0, 0},
    {"jns rel32", B("\x0f\x89\x10\x00\x00\x00"), 0, 6, INSN_JCC, BASE + 0x16, 0x9, 0, 0},
    {"jp rel32", B("\x0f\x8a\x10\x00\x00\x00"), 0, 6, INSN_JCC, BASE + 0x16, 0xa, 0, 0},
    {"jnp rel32", B("\x0f\x8b\x10\x00\x00\x00"), 0, 6, INSN_JCC, BASE + 0x16, 0xb, 0, 0},
    {"jl rel32", B("\x0f\x8c\x10\x00\x00\x00"), 0, 6, INSN_JCC, BASE + 0x16, 0xc, 0, 0},
    {"jge rel32", B("\x0f\x8d\x10\x00\x00\x00"), 0, 6, INSN_JCC, BASE + 0x16, 0xd, 0, 0},
    {"jle rel32", B("\x0f\x8e\x10\x00\x00\x00"), 0, 6, INSN_JCC, BASE + 0x16, 0xe, 0, 0},
    {"jg rel32", B("\x0f\x8f\x10\x00\x00\x00"), 0, 6, INSN_JCC, BASE + 0x16, 0xf, 0, 0},
    /* Counted loops and jrcxz: 67 selects ecx. */
    {"jrcxz", B("\xe3\x10"), 0, 2, INSN_JRCXZ, BASE + 0x12, 0, 0, 0},
    {"jecxz", B("\x67\xe3\xfd"), 0, 3, INSN_JRCXZ, BASE, 0, 0, F_A32},
    {"loop", B("\xe2\xfe"), 0, 2, INSN_LOOP, BASE, 0, 0, 0},
    {"loop ecx", B("\x67\xe2\x00"), 0, 3, INSN_LOOP, BASE + 3, 0, 0, F_A32},
    {"loope", B("\xe1\x20"), 0, 2, INSN_LOOPE, BASE + 0x22, 0, 0, 0},
    {"loopne", B("\xe0\x20"), 0, 2, INSN_LOOPNE, BASE + 0x22, 0, 0, 0},
    /* Direct jmp/call. */
    {"jmp rel8", B("\xeb\xfe"), 0, 2, INSN_JMP_REL, BASE, 0, 0, 0},
    {"jmp rel32", B("\xe9\x00\x10\x00\x00"), 0, 5, INSN_JMP_REL, BASE + 0x1005, 0, 0, 0},
    {"call rel32", B("\xe8\xfb\xff\xff\xff"), 0, 5, INSN_CALL_REL, BASE, 0, 0, 0},
    {"call rel32 0", B("\xe8\x00\x00\x00\x00"), 0, 5, INSN_CALL_REL, BASE + 5, 0, 0, 0},
    /* Group 5: near and far indirect, register and memory forms. */
    {"call rax", B("\xff\xd0"), 0, 2, INSN_CALL_IND, 0, 0, 0, 0},
    {"call r11", B("\x41\xff\xd3"), 0, 3, INSN_CALL_IND, 0, 0, 0, 0},
    {"call [rax]", B("\xff\x10"), 0, 2, INSN_CALL_IND, 0, 0, 0, 0},
    {"call [rip+d32]", B("\xff\x15\x10\x00\x00\x00"), 0, 6, INSN_CALL_IND, 0, 0, 0, 0},
    {"call [rsp]", B("\xff\x14\x24"), 0, 3, INSN_CALL_IND, 0, 0, 0, 0},
    {"call [d32] sib", B("\xff\x14\x25\x78\x56\x34\x12"), 0, 7, INSN_CALL_IND, 0, 0, 0, 0},
    {"call [rax+rbx*8+d32]", B("\xff\x94\xd8\x78\x56\x34\x12"), 0, 7, INSN_CALL_IND, 0, 0, 0, 0},
    {"call [rbp+d8]", B("\xff\x55\x08"), 0, 3, INSN_CALL_IND, 0, 0, 0, 0},
    {"call [r13+d8]", B("\x41\xff\x55\x00"), 0, 4, INSN_CALL_IND, 0, 0, 0, 0},
    {"lcall m16:32", B("\xff\x18"), 0, 2, INSN_CALL_FAR, 0, 0, 0, 0},
    {"lcall m16:64", B("\x48\xff\x5c\x24\x08"), 0, 5, INSN_CALL_FAR, 0, 0, 0, F_REXW},
    {"lcall m16:16", B("\x66\xff\x1c\x24"), 0, 4, INSN_CALL_FAR, 0, 0, 0, F_OP16},
    {"jmp rax", B("\xff\xe0"), 0, 2, INSN_JMP_IND, 0, 0, 0, 0},
    {"jmp r15", B("\x41\xff\xe7"), 0, 3, INSN_JMP_IND, 0, 0, 0, 0},
    {"jmp [rax+d32]", B("\xff\xa0\x00\x01\x00\x00"), 0, 6, INSN_JMP_IND, 0, 0, 0, 0},
    {"jmp [rip+d32]", B("\xff\x25\x00\x00\x00\x00"), 0, 6, INSN_JMP_IND, 0, 0, 0, 0},
    {"jmp fs:[d32]", B("\x64\xff\x24\x25\x28\x00\x00\x00"), 0, 8, INSN_JMP_IND, 0, 0, 0, 0},
    {"ljmp m16:32", B("\xff\x28"), 0, 2, INSN_JMP_FAR, 0, 0, 0, 0},
    {"ljmp m16:64", B("\x48\xff\x2c\x24"), 0, 4, INSN_JMP_FAR, 0, 0, 0, F_REXW},
    /* Returns, far returns, iret. */
    {"ret", B("\xc3"), 0, 1, INSN_RET, 0, 0, 0, 0},
    {"ret imm16", B("\xc2\x08\x00"), 0, 3, INSN_RET_IMM, 0, 0, 0, 0},
    {"lret", B("\xcb"), 0, 1, INSN_RET_FAR, 0, 0, 0, 0},
    {"lretq", B("\x48\xcb"), 0, 2, INSN_RET_FAR, 0, 0, 0, F_REXW},
    {"lret imm16", B("\xca\x10\x00"), 0, 3, INSN_RET_FAR, 0, 0, 0, 0},
    {"lretq imm16", B("\x48\xca\x10\x00"), 0, 4, INSN_RET_FAR, 0, 0, 0, F_REXW},
    {"iret", B("\xcf"), 0, 1, INSN_IRET, 0, 0, 0, 0},
    {"iretq", B("\x48\xcf"), 0, 2, INSN_IRET, 0, 0, 0, F_REXW},
    {"iretw", B("\x66\xcf"), 0, 2, INSN_IRET, 0, 0, 0, F_OP16},
    /* Software interrupts: the vector they raise. */
    {"int3", B("\xcc"), 0, 1, INSN_INT3, 0, 0, 3, 0},
    {"int 0x80", B("\xcd\x80"), 0, 2, INSN_INT, 0, 0, 0x80, 0},
    {"int 3 (long form)", B("\xcd\x03"), 0, 2, INSN_INT, 0, 0, 3, 0},
    {"int 0xff", B("\xcd\xff"), 0, 2, INSN_INT, 0, 0, 0xff, 0},
    {"into", B("\xce"), 0, 1, INSN_INTO, 0, 0, 4, 0},
    {"int1", B("\xf1"), 0, 1, INSN_INT1, 0, 0, 1, 0},
    /* System calls and ud2. */
    {"syscall", B("\x0f\x05"), 0, 2, INSN_SYSCALL, 0, 0, 0, 0},
    {"sysretl", B("\x0f\x07"), 0, 2, INSN_SYSRET, 0, 0, 0, 0},
    {"sysretq", B("\x48\x0f\x07"), 0, 3, INSN_SYSRET, 0, 0, 0, F_REXW},
    {"sysenter", B("\x0f\x34"), 0, 2, INSN_SYSENTER, 0, 0, 0, 0},
    {"sysexitl", B("\x0f\x35"), 0, 2, INSN_SYSEXIT, 0, 0, 0, 0},
    {"sysexitq", B("\x48\x0f\x35"), 0, 3, INSN_SYSEXIT, 0, 0, 0, F_REXW},
    {"ud2", B("\x0f\x0b"), 0, 2, INSN_UD2, 0, 0, 0, 0},
};

static const struct dcase prefixed_branches[] = {
    /* Intel ignores 66 on near branches in 64-bit mode: still rel32 (AMD: rel16). */
    {"data16 call", B("\x66\xe8\x00\x00\x00\x00"), 0, 6, INSN_CALL_REL, BASE + 6, 0, 0, F_OP16},
    {"data16 jmp32", B("\x66\xe9\x00\x01\x00\x00"), 0, 6, INSN_JMP_REL, BASE + 0x106, 0, 0, F_OP16},
    {"data16 jne32", B("\x66\x0f\x85\x00\x00\x00\x00"), 0, 7, INSN_JCC, BASE + 7, 5, 0, F_OP16},
    {"data16 jmp8", B("\x66\xeb\x00"), 0, 3, INSN_JMP_REL, BASE + 3, 0, 0, F_OP16},
    {"data16 ret", B("\x66\xc3"), 0, 2, INSN_RET, 0, 0, 0, F_OP16},
    {"data16 call rax", B("\x66\xff\xd0"), 0, 3, INSN_CALL_IND, 0, 0, 0, F_OP16},
    /* Branch hints (2E not taken, 3E taken) and segment overrides. */
    {"ds je (hint)", B("\x3e\x74\x10"), 0, 3, INSN_JCC, BASE + 0x13, 4, 0, 0},
    {"cs je (hint)", B("\x2e\x74\x10"), 0, 3, INSN_JCC, BASE + 0x13, 4, 0, 0},
    {"cs je32 (hint)", B("\x2e\x0f\x84\x10\x00\x00\x00"), 0, 7, INSN_JCC, BASE + 0x17, 4, 0, 0},
    {"es ss ds cs jmp8", B("\x26\x36\x3e\x2e\xeb\x00"), 0, 6, INSN_JMP_REL, BASE + 6, 0, 0, 0},
    {"gs call [d32]", B("\x65\xff\x14\x25\x00\x00\x00\x00"), 0, 8, INSN_CALL_IND, 0, 0, 0, 0},
    /* BND (F2) and NOTRACK (3E). */
    {"bnd call", B("\xf2\xe8\x00\x00\x00\x00"), 0, 6, INSN_CALL_REL, BASE + 6, 0, 0, F_REP},
    {"bnd jmp8", B("\xf2\xeb\xfd"), 0, 3, INSN_JMP_REL, BASE, 0, 0, F_REP},
    {"bnd jne", B("\xf2\x75\x00"), 0, 3, INSN_JCC, BASE + 3, 5, 0, F_REP},
    {"bnd ret", B("\xf2\xc3"), 0, 2, INSN_RET, 0, 0, 0, F_REP},
    {"rep ret", B("\xf3\xc3"), 0, 2, INSN_RET, 0, 0, 0, F_REP},
    {"notrack call rax", B("\x3e\xff\xd0"), 0, 3, INSN_CALL_IND, 0, 0, 0, 0},
    {"notrack bnd jmp [rax]", B("\x3e\xf2\xff\x20"), 0, 4, INSN_JMP_IND, 0, 0, 0, F_REP},
    {"bnd notrack jmp [rax]", B("\xf2\x3e\xff\x20"), 0, 4, INSN_JMP_IND, 0, 0, 0, F_REP},
    /* REX: ignored on rel branches, ignored unless last. */
    {"rex.W call", B("\x48\xe8\x00\x00\x00\x00"), 0, 6, INSN_CALL_REL, BASE + 6, 0, 0, F_REXW},
    {"rex.W jo8", B("\x48\x70\x00"), 0, 3, INSN_JCC, BASE + 3, 0, 0, F_REXW},
    {"rex.W call rax", B("\x48\xff\xd0"), 0, 3, INSN_CALL_IND, 0, 0, 0, F_REXW},
    {"rex then 66 (rex ignored)", B("\x48\x66\xe9\x00\x00\x00\x00"), 0, 7, INSN_JMP_REL, BASE + 7,
     0, 0, F_OP16},
    {"66 then rex", B("\x66\x48\xe9\x00\x00\x00\x00"), 0, 7, INSN_JMP_REL, BASE + 7, 0, 0,
     F_OP16 | F_REXW},
    {"rex.W then rex.B: ljmp m16:32", B("\x48\x41\xff\x28"), 0, 4, INSN_JMP_FAR, 0, 0, 0, 0},
    {"rex.B then rex.W: ljmp m16:64", B("\x41\x48\xff\x28"), 0, 4, INSN_JMP_FAR, 0, 0, 0, F_REXW},
    {"addr32 jmp", B("\x67\xe9\x00\x00\x00\x00"), 0, 6, INSN_JMP_REL, BASE + 6, 0, 0, F_A32},
    {"addr32 call [eax]", B("\x67\xff\x10"), 0, 3, INSN_CALL_IND, 0, 0, 0, F_A32},
    {"all at once", B("\x66\x67\xf2\x3e\x4b\xe8\x00\x00\x00\x00"), 0, 10, INSN_CALL_REL, BASE + 10,
     0, 0, F_OP16 | F_A32 | F_REP | F_REXW},
    {"14 prefixes + ret", B("\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x48\xc3"), 0, 15,
     INSN_RET, 0, 0, 0, F_REXW},
    /* Targets wrap at 2^64. */
    {"jmp8 below 0", B("\xeb\x80"), 0x10, 2, INSN_JMP_REL, 0xffffffffffffff92ull, 0, 0, 0},
    {"jmp32 past 2^64", B("\xe9\x00\x01\x00\x00"), 0xfffffffffffffff0ull, 5, INSN_JMP_REL, 0xf5, 0,
     0, 0},
};

static const struct dcase lengths[] = {
    {"nop", B("\x90"), 0, 1, INSN_OTHER, 0, 0, 0, 0},
    {"fwait alone", B("\x9b"), 0, 1, INSN_OTHER, 0, 0, 0, 0},
    {"add reg,reg", B("\x01\xc0"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"add [rax]", B("\x01\x00"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"add [rip+d32]", B("\x01\x05\x00\x00\x00\x00"), 0, 6, INSN_OTHER, 0, 0, 0, 0},
    {"add [rsp]", B("\x01\x04\x24"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"add [d32] (sib, no base)", B("\x01\x04\x25\x00\x00\x00\x00"), 0, 7, INSN_OTHER, 0, 0, 0, 0},
    {"add [rbp*8+d32]", B("\x01\x04\xed\x00\x00\x00\x00"), 0, 7, INSN_OTHER, 0, 0, 0, 0},
    {"add [rsp+d8]", B("\x01\x44\x24\x08"), 0, 4, INSN_OTHER, 0, 0, 0, 0},
    {"add [rsp+d32]", B("\x01\x84\x24\x00\x01\x00\x00"), 0, 7, INSN_OTHER, 0, 0, 0, 0},
    {"add [rbp+0]", B("\x01\x45\x00"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"add [r13+0]", B("\x41\x01\x45\x00"), 0, 4, INSN_OTHER, 0, 0, 0, 0},
    {"add [r12] (sib)", B("\x41\x01\x04\x24"), 0, 4, INSN_OTHER, 0, 0, 0, 0},
    {"add [rax+d32]", B("\x01\x80\x00\x01\x00\x00"), 0, 6, INSN_OTHER, 0, 0, 0, 0},
    {"add al,ib", B("\x04\x01"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"add eax,id", B("\x05\x01\x02\x03\x04"), 0, 5, INSN_OTHER, 0, 0, 0, 0},
    {"add ax,iw", B("\x66\x05\x01\x02"), 0, 4, INSN_OTHER, 0, 0, 0, F_OP16},
    {"add rax,id", B("\x48\x05\x01\x02\x03\x04"), 0, 6, INSN_OTHER, 0, 0, 0, F_REXW},
    {"66 rex.W: imm32", B("\x66\x48\x05\x01\x02\x03\x04"), 0, 7, INSN_OTHER, 0, 0, 0,
     F_OP16 | F_REXW},
    {"80 /0 ib", B("\x80\x00\x01"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"81 /0 id", B("\x81\x00\x01\x02\x03\x04"), 0, 6, INSN_OTHER, 0, 0, 0, 0},
    {"66 81 /0 iw", B("\x66\x81\x00\x01\x02"), 0, 5, INSN_OTHER, 0, 0, 0, F_OP16},
    {"83 /7 ib", B("\x83\x38\x01"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"mov [rax+d32],id", B("\xc7\x80\x00\x01\x00\x00\x01\x02\x03\x04"), 0, 10, INSN_OTHER, 0, 0, 0,
     0},
    {"mov q[rsp+d32],id", B("\x48\xc7\x84\x24\x00\x01\x00\x00\x01\x02\x03\x04"), 0, 12, INSN_OTHER,
     0, 0, 0, F_REXW},
    {"mov [rip+d32],ib", B("\xc6\x05\x00\x00\x00\x00\x01"), 0, 7, INSN_OTHER, 0, 0, 0, 0},
    {"mov eax,id", B("\xb8\x01\x02\x03\x04"), 0, 5, INSN_OTHER, 0, 0, 0, 0},
    {"mov ax,iw", B("\x66\xb8\x01\x02"), 0, 4, INSN_OTHER, 0, 0, 0, F_OP16},
    {"movabs rax,iq", B("\x48\xb8\x01\x02\x03\x04\x05\x06\x07\x08"), 0, 10, INSN_OTHER, 0, 0, 0,
     F_REXW},
    {"movabs r10,iq", B("\x49\xba\x01\x02\x03\x04\x05\x06\x07\x08"), 0, 10, INSN_OTHER, 0, 0, 0,
     F_REXW},
    {"66 rex.W mov: iq", B("\x66\x48\xb8\x01\x02\x03\x04\x05\x06\x07\x08"), 0, 11, INSN_OTHER, 0, 0,
     0, F_OP16 | F_REXW},
    {"rex.W 66 mov: iw", B("\x48\x66\xb8\x01\x02"), 0, 5, INSN_OTHER, 0, 0, 0, F_OP16},
    {"mov r8b,ib", B("\x41\xb0\x01"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"mov al,moffs64", B("\xa0\x01\x02\x03\x04\x05\x06\x07\x08"), 0, 9, INSN_OTHER, 0, 0, 0, 0},
    {"mov eax,moffs32", B("\x67\xa1\x01\x02\x03\x04"), 0, 6, INSN_OTHER, 0, 0, 0, F_A32},
    {"mov moffs64,rax", B("\x48\xa3\x01\x02\x03\x04\x05\x06\x07\x08"), 0, 10, INSN_OTHER, 0, 0, 0,
     F_REXW},
    {"66 mov moffs64,ax", B("\x66\xa3\x01\x02\x03\x04\x05\x06\x07\x08"), 0, 10, INSN_OTHER, 0, 0, 0,
     F_OP16},
    {"test al,ib", B("\xa8\x01"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"test ax,iw", B("\x66\xa9\x01\x02"), 0, 4, INSN_OTHER, 0, 0, 0, F_OP16},
    {"test [rax],ib (F6 /0)", B("\xf6\x00\x01"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"test alias (F6 /1)", B("\xf6\x08\x01"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"not [rax] (F6 /2)", B("\xf6\x10"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"idiv [rax] (F6 /7)", B("\xf6\x38"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"test [rax],id (F7 /0)", B("\xf7\x00\x01\x02\x03\x04"), 0, 6, INSN_OTHER, 0, 0, 0, 0},
    {"test [rax],iw (66 F7 /0)", B("\x66\xf7\x00\x01\x02"), 0, 5, INSN_OTHER, 0, 0, 0, F_OP16},
    {"test q[rax],id", B("\x48\xf7\x00\x01\x02\x03\x04"), 0, 7, INSN_OTHER, 0, 0, 0, F_REXW},
    {"neg eax (F7 /3)", B("\xf7\xd8"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"enter", B("\xc8\x10\x00\x01"), 0, 4, INSN_OTHER, 0, 0, 0, 0},
    {"push ib", B("\x6a\x01"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"push id", B("\x68\x01\x02\x03\x04"), 0, 5, INSN_OTHER, 0, 0, 0, 0},
    {"push iw", B("\x66\x68\x01\x02"), 0, 4, INSN_OTHER, 0, 0, 0, F_OP16},
    {"imul r,rm,id", B("\x69\xc0\x01\x02\x03\x04"), 0, 6, INSN_OTHER, 0, 0, 0, 0},
    {"imul r,rm,ib", B("\x6b\xc0\x01"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"shl rm,ib", B("\xc1\xe0\x03"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"shl rm,1", B("\xd1\xe0"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"in al,ib", B("\xe4\x60"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"fnstcw", B("\xd9\x38"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"rep movsq", B("\xf3\x48\xa5"), 0, 3, INSN_OTHER, 0, 0, 0, F_REP | F_REXW},
    {"lock cmpxchg", B("\xf0\x48\x0f\xb1\x0b"), 0, 5, INSN_OTHER, 0, 0, 0, F_REXW},
    {"pop [rax] (8F /0)", B("\x8f\x00"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"inc byte [rax]", B("\xfe\x00"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"push [rax] (FF /6)", B("\xff\x30"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"xbegin", B("\xc7\xf8\x00\x00\x00\x00"), 0, 6, INSN_OTHER, 0, 0, 0, 0},
    {"xabort", B("\xc6\xf8\x01"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    /* 0F map. */
    {"nopl [rax+rax+d8]", B("\x0f\x1f\x44\x00\x00"), 0, 5, INSN_OTHER, 0, 0, 0, 0},
    {"cs nopw [rax+rax+d32]", B("\x66\x2e\x0f\x1f\x84\x00\x00\x00\x00\x00"), 0, 10, INSN_OTHER, 0,
     0, 0, F_OP16},
    {"endbr64", B("\xf3\x0f\x1e\xfa"), 0, 4, INSN_OTHER, 0, 0, 0, F_REP},
    {"mov rax,cr0", B("\x0f\x20\xc0"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"mov cr: mod ignored", B("\x0f\x20\x00"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"mov dr: mod 2, no disp", B("\x0f\x23\x80"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"bt rm,ib", B("\x0f\xba\xe0\x03"), 0, 4, INSN_OTHER, 0, 0, 0, 0},
    {"shld rm,r,ib", B("\x0f\xa4\xc0\x03"), 0, 4, INSN_OTHER, 0, 0, 0, 0},
    {"pshufd", B("\x66\x0f\x70\xc1\x1b"), 0, 5, INSN_OTHER, 0, 0, 0, F_OP16},
    {"popcnt", B("\xf3\x0f\xb8\xc0"), 0, 4, INSN_OTHER, 0, 0, 0, F_REP},
    {"swapgs", B("\x0f\x01\xf8"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"lgdt [rax]", B("\x0f\x01\x10"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"rdrand", B("\x0f\xc7\xf0"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"cmpxchg16b", B("\x48\x0f\xc7\x08"), 0, 4, INSN_OTHER, 0, 0, 0, F_REXW},
    {"bswap r12", B("\x49\x0f\xcc"), 0, 3, INSN_OTHER, 0, 0, 0, F_REXW},
    {"jcc-looking setcc", B("\x0f\x94\xc0"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"ud1", B("\x0f\xb9\x00"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"ud0", B("\x0f\xff\x00"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"cpuid", B("\x0f\xa2"), 0, 2, INSN_OTHER, 0, 0, 0, 0},
    {"vmread", B("\x0f\x78\xc1"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"vmwrite [rax+d8]", B("\x0f\x79\x40\x08"), 0, 4, INSN_OTHER, 0, 0, 0, 0},
    {"pshufb (0F 38)", B("\x66\x0f\x38\x00\xc1"), 0, 5, INSN_OTHER, 0, 0, 0, F_OP16},
    {"movbe [rax+d32] (0F 38)", B("\x0f\x38\xf0\x80\x00\x01\x00\x00"), 0, 8, INSN_OTHER, 0, 0, 0,
     0},
    {"palignr [rsp+d8],ib (0F 3A)", B("\x66\x0f\x3a\x0f\x44\x24\x08\x04"), 0, 8, INSN_OTHER, 0, 0,
     0, F_OP16},
    /* VEX and EVEX. */
    {"vzeroupper", B("\xc5\xf8\x77"), 0, 3, INSN_OTHER, 0, 0, 0, 0},
    {"vaddps ymm", B("\xc5\xfc\x58\xc1"), 0, 4, INSN_OTHER, 0, 0, 0, 0},
    {"vpsrlw ymm,ib (VEX 0F 71)", B("\xc5\xf5\x71\xd2\x03"), 0, 5, INSN_OTHER, 0, 0, 0, 0},
    {"vblendvps (VEX 0F3A, is4)", B("\xc4\xe3\x79\x4a\xc0\x10"), 0, 6, INSN_OTHER, 0, 0, 0, 0},
    {"vbroadcastss (VEX 0F38)", B("\xc4\xe2\x7d\x18\x00"), 0, 5, INSN_OTHER, 0, 0, 0, 0},
    {"vmovq (VEX.W1)", B("\xc4\xe1\xf9\x6e\xc0"), 0, 5, INSN_OTHER, 0, 0, 0, F_REXW},
    {"segment before VEX", B("\x2e\xc5\xf8\x77"), 0, 4, INSN_OTHER, 0, 0, 0, 0},
    {"vaddps zmm", B("\x62\xf1\x7c\x48\x58\xc1"), 0, 6, INSN_OTHER, 0, 0, 0, 0},
    {"vaddps zmm,[rax+d8*N]", B("\x62\xf1\x7c\x48\x58\x40\x01"), 0, 7, INSN_OTHER, 0, 0, 0, 0},
    {"vpternlogd (EVEX 0F3A)", B("\x62\xf3\x7d\x48\x25\xc0\xff"), 0, 7, INSN_OTHER, 0, 0, 0, 0},
    {"vaddph (EVEX map 5)", B("\x62\xf5\x7c\x48\x58\xc1"), 0, 6, INSN_OTHER, 0, 0, 0, 0},
    {"vfmadd132ph (EVEX map 6)", B("\x62\xf6\x7d\x48\x98\x00"), 0, 6, INSN_OTHER, 0, 0, 0, 0},
    /* 15 bytes is the limit, and allowed. */
    {"15 bytes: 14x66 + nop", B("\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x90"), 0,
     15, INSN_OTHER, 0, 0, 0, F_OP16},
    {"15 bytes: 14xrex + nop", B("\x48\x48\x48\x48\x48\x48\x48\x48\x48\x48\x48\x48\x48\x48\x90"), 0,
     15, INSN_OTHER, 0, 0, 0, F_REXW},
    {"15 bytes: fs lock cs ds mov [rax+rbx+d8],id",
     B("\x64\xf0\x2e\x3e\x66\x67\x48\xc7\x44\x18\x01\x01\x02\x03\x04"), 0, 15, INSN_OTHER, 0, 0, 0,
     F_OP16 | F_A32 | F_REXW},
};

static const struct dcase invalid[] = {
    /* One-byte opcodes removed from 64-bit mode (Table A-2, "i64"). */
    {"push es", B("\x06"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"pop es", B("\x07"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"push cs", B("\x0e"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"push ss", B("\x16"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"pop ds", B("\x1f"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"daa", B("\x27"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"aas", B("\x3f"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"pusha", B("\x60"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"popa", B("\x61"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"82 alias", B("\x82\xc0\x01"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"far call ptr16:32", B("\x9a\x00\x00\x00\x00\x08\x00"), 0, INSN_ERR_INVALID, INSN_INVALID, 0,
     0, 0, 0},
    {"aam", B("\xd4\x0a"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"salc", B("\xd6"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"far jmp ptr16:32", B("\xea\x00\x00\x00\x00\x08\x00"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0,
     0, 0},
    /* Group members (Table A-6). */
    {"FE /2", B("\xfe\x10"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"FF /7", B("\xff\x38"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"lcall register", B("\xff\xd8"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"ljmp register", B("\xff\xe8"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"C6 /1", B("\xc6\x08\x01"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"C7 /7 not F8", B("\xc7\x38\x00\x00\x00\x00"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"8F /1 (AMD XOP)", B("\x8f\xe8\x78\xc2\xec\x0e"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0,
     0},
    /* 0F map holes and non-Intel opcodes. */
    {"0F 04", B("\x0f\x04"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"0F 0E femms", B("\x0f\x0e"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"0F 0F 3DNow!", B("\x0f\x0f\xc0\x0d"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"0F 24", B("\x0f\x24\xc0"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"0F 36", B("\x0f\x36"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"0F 7A", B("\x0f\x7a\xc0"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"0F A6 PadLock", B("\x0f\xa6\xc0"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"jmpe (0F B8 without F3)", B("\x0f\xb8\x00\x00\x00\x00"), 0, INSN_ERR_INVALID, INSN_INVALID, 0,
     0, 0, 0},
    {"F2 0F B8", B("\xf2\x0f\xb8\xc0"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"66 0F 78 (AMD extrq)", B("\x66\x0f\x78\xc0\x01\x02"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0,
     0, 0},
    {"F2 0F 79 (AMD insertq)", B("\xf2\x0f\x79\xc1"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0,
     0},
    {"F3 0F 78", B("\xf3\x0f\x78\xc1"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    /* VEX/EVEX rules (Vol. 2A 2.3.2, 2.7). */
    {"66 before VEX", B("\x66\xc5\xf8\x77"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"REX before VEX", B("\x48\xc5\xf8\x77"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"F3 before VEX3", B("\xf3\xc4\xe1\x79\x6e\xc0"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0,
     0},
    {"lock before EVEX", B("\xf0\x62\xf1\x7c\x48\x58\xc1"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0,
     0, 0},
    {"VEX map 0", B("\xc4\xe0\x79\x00\xc0"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"VEX map 5", B("\xc4\xe5\x79\x58\xc0"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"VEX 0F without ModRM (syscall)", B("\xc5\xf8\x05"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0,
     0, 0},
    {"VEX jcc", B("\xc5\xf8\x84\x00\x00\x00\x00"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"EVEX vzeroupper", B("\x62\xf1\x7c\x48\x77"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"EVEX P0 bit 3 set", B("\x62\xf9\x7c\x48\x58\xc1"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0,
     0},
    {"EVEX P1 bit 2 clear", B("\x62\xf1\x78\x48\x58\xc1"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0,
     0, 0},
    {"EVEX map 4", B("\x62\xf4\x7c\x48\x58\xc1"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"EVEX map 7", B("\x62\xf7\x7c\x48\x58\xc1"), 0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    /* Past 15 bytes (SDM Vol. 2A 2.3.11: #GP). */
    {"16 bytes: 15x66 + nop", B("\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x90"),
     0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"16 bytes: 15xcs + ret", B("\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\xc3"),
     0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"20 prefixes",
     B("\x66\x67\xf2\xf3\x2e\x3e\x26\x36\x64\x65\xf0\x40\x66\x67\xf2\xf3\x2e\x3e"
       "\x26\x36\xc3"),
     0, INSN_ERR_INVALID, INSN_INVALID, 0, 0, 0, 0},
    {"16 bytes by immediate: 10x66 + add rax,id",
     B("\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x48\x05\x01\x02\x03\x04"), 0, INSN_ERR_INVALID,
     INSN_INVALID, 0, 0, 0, 0},
    {"16 bytes by displacement: jmp [rax+rbx+d32]",
     B("\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\xff\xa4\x18\x01\x02\x03\x04"), 0, INSN_ERR_INVALID,
     INSN_INVALID, 0, 0, 0, 0},
    {"16 bytes: movabs with 6 prefixes",
     B("\x66\x66\x66\x66\x66\x66\x48\xb8\x01\x02\x03\x04\x05\x06\x07\x08"), 0, INSN_ERR_INVALID,
     INSN_INVALID, 0, 0, 0, 0},
};

/* Two pages, the second inaccessible: bytes copied to the end of the first. */
static uint8_t *page;
static size_t page_size;

static int setup_guard(void **state)
{
    (void)state;
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    page = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return -1;
    return mprotect(page + page_size, page_size, PROT_NONE);
}

static int teardown_guard(void **state)
{
    (void)state;
    return munmap(page, 2 * page_size);
}

/* Decode n bytes that end right at the guard page, with avail as given. */
static int decode_guarded(const char *bytes, size_t n, size_t avail, uint64_t rip, struct insn *out)
{
    uint8_t *p = page + page_size - n;

    memcpy(p, bytes, n);
    return insn_decode(p, avail, rip, out);
}

static unsigned flags_of(const struct insn *in)
{
    return (in->rep ? F_REP : 0) | (in->rex_w ? F_REXW : 0) | (in->opsize16 ? F_OP16 : 0) |
           (in->addr32 ? F_A32 : 0);
}

static void check_case(const struct dcase *c)
{
    struct insn in;
    uint64_t rip = c->rip ? c->rip : BASE;
    int got = decode_guarded(c->bytes, c->n, c->n, rip, &in);

    if (got != c->len)
        fail_msg("%s: returned %d, want %d", c->name, got, c->len);
    if (in.kind != c->kind)
        fail_msg("%s: kind %s, want %s", c->name, insn_kind_name(in.kind), insn_kind_name(c->kind));
    if (got < 0) {
        if (in.len != 0)
            fail_msg("%s: len %u on error", c->name, in.len);
        return;
    }
    if (in.len != got)
        fail_msg("%s: len %u != result %d", c->name, in.len, got);
    if (insn_has_target(&in) && in.target != c->target)
        fail_msg("%s: target 0x%llx, want 0x%llx", c->name, (unsigned long long)in.target,
                 (unsigned long long)c->target);
    if (insn_has_target(&in) && in.target != rip + in.len + (uint64_t)in.rel)
        fail_msg("%s: rel %lld inconsistent with target", c->name, (long long)in.rel);
    if (in.cc != c->cc || in.vector != c->vector)
        fail_msg("%s: cc %u vector %u, want %u %u", c->name, in.cc, in.vector, c->cc, c->vector);
    if (flags_of(&in) != c->flags)
        fail_msg("%s: flags 0x%x, want 0x%x", c->name, flags_of(&in), c->flags);
}

/*
 * Every strict prefix of a valid or over-long instruction is truncated; one
 * of a #UD encoding is truncated until the decoder has seen enough to reject
 * it, then invalid. Trailing bytes after a valid instruction change nothing.
 */
static void check_truncation(const struct dcase *c)
{
    struct insn in;
    uint8_t padded[2 * INSN_MAX_LEN + 8];
    bool may_reject = c->len == INSN_ERR_INVALID && c->n <= INSN_MAX_LEN, rejected = false;
    size_t limit = c->len > 0 ? (size_t)c->len : c->n;

    if (limit > INSN_MAX_LEN)
        limit = INSN_MAX_LEN;
    for (size_t k = 0; k < limit; k++) {
        int got = decode_guarded(c->bytes, k, k, BASE, &in);
        if (may_reject && got == INSN_ERR_INVALID)
            rejected = true;
        else if (got != INSN_ERR_TRUNCATED || rejected)
            fail_msg("%s: %zu of %zu bytes gave %d", c->name, k, c->n, got);
        if (in.kind != INSN_INVALID || in.len != 0)
            fail_msg("%s: error result not marked invalid", c->name);
    }
    if (c->len < 0 || c->n > INSN_MAX_LEN)
        return;
    memset(padded, 0x90, sizeof(padded));
    memcpy(padded, c->bytes, c->n);
    if (insn_decode(padded, sizeof(padded), c->rip ? c->rip : BASE, &in) != c->len)
        fail_msg("%s: trailing bytes changed the length", c->name);
}

#define RUN_TABLE(t)                                                                               \
    do {                                                                                           \
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)                                      \
            check_case(&t[i]);                                                                     \
    } while (0)

static void test_branch_kinds(void **state)
{
    (void)state;
    RUN_TABLE(branches);
}

static void test_prefixed_branches(void **state)
{
    (void)state;
    RUN_TABLE(prefixed_branches);
}

static void test_lengths(void **state)
{
    (void)state;
    RUN_TABLE(lengths);
}

static void test_invalid(void **state)
{
    (void)state;
    RUN_TABLE(invalid);
}

static void test_truncated(void **state)
{
    const struct dcase *tables[] = {branches, prefixed_branches, lengths, invalid};
    const size_t sizes[] = {sizeof(branches) / sizeof(branches[0]),
                            sizeof(prefixed_branches) / sizeof(prefixed_branches[0]),
                            sizeof(lengths) / sizeof(lengths[0]),
                            sizeof(invalid) / sizeof(invalid[0])};
    struct insn in;

    (void)state;
    for (size_t t = 0; t < 4; t++)
        for (size_t i = 0; i < sizes[t]; i++)
            check_truncation(&tables[t][i]);
    assert_int_equal(insn_decode(page, 0, BASE, &in), INSN_ERR_TRUNCATED);
    /* Ten prefixes and nothing after: maybe valid, maybe too long; can't know. */
    assert_int_equal(decode_guarded("\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66", 10, 10, BASE, &in),
                     INSN_ERR_TRUNCATED);
}

/* With a huge avail, the decoder still stops at byte 15 (the guard is at 16). */
static void test_never_reads_past_15(void **state)
{
    static const char prefixes[] = "\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e\x2e";
    static const char imm[] = "\x66\x66\x66\x66\x66\x66\x66\x66\x66\x66\x48\xb8\x01\x02\x03";
    struct insn in;

    (void)state;
    assert_int_equal(decode_guarded(prefixes, 15, SIZE_MAX, BASE, &in), INSN_ERR_INVALID);
    assert_int_equal(decode_guarded(imm, 15, SIZE_MAX, BASE, &in), INSN_ERR_INVALID);
    assert_int_equal(in.kind, INSN_INVALID);
}

/*
 * Random bytes: every result is an error marked invalid, or a length within
 * 15 and avail that decodes the same from exactly that many bytes and the
 * same again when one byte shorter is truncated.
 */
static void test_random_bytes(void **state)
{
    uint8_t buf[INSN_MAX_LEN + 1];
    uint32_t seed = 12345;
    struct insn a, b;

    (void)state;
    for (unsigned iter = 0; iter < 200000; iter++) {
        for (size_t i = 0; i < sizeof(buf); i++) {
            seed = seed * 1103515245u + 12345u; /* LCG: reproducible */
            buf[i] = (uint8_t)(seed >> 16);
        }
        size_t avail = 1 + (seed >> 8) % sizeof(buf);
        int got = decode_guarded((const char *)buf, avail, avail, BASE, &a);
        if (got < 0) {
            if (got != INSN_ERR_TRUNCATED && got != INSN_ERR_INVALID)
                fail_msg("iteration %u: result %d", iter, got);
            assert_int_equal(a.kind, INSN_INVALID);
            continue;
        }
        if (got > INSN_MAX_LEN || (size_t)got > avail || a.len != got)
            fail_msg("iteration %u: length %d of %zu bytes", iter, got, avail);
        if (decode_guarded((const char *)buf, (size_t)got, (size_t)got, BASE, &b) != got ||
            b.kind != a.kind || b.target != a.target)
            fail_msg("iteration %u: not the same from exactly %d bytes", iter, got);
        if (decode_guarded((const char *)buf, (size_t)got - 1, (size_t)got - 1, BASE, &b) !=
            INSN_ERR_TRUNCATED)
            fail_msg("iteration %u: %d bytes minus one not truncated", iter, got);
    }
}

static void test_predicates(void **state)
{
    struct insn in = {0};

    (void)state;
    for (unsigned k = 0; k < INSN_KIND_COUNT; k++) {
        in.kind = (uint8_t)k;
        bool branch = k != INSN_OTHER && k != INSN_UD2 && k != INSN_INVALID;
        bool cond = k == INSN_JCC || k == INSN_JRCXZ || k == INSN_LOOP || k == INSN_LOOPE ||
                    k == INSN_LOOPNE || k == INSN_INTO;
        bool target = k == INSN_JCC || k == INSN_JRCXZ || k == INSN_LOOP || k == INSN_LOOPE ||
                      k == INSN_LOOPNE || k == INSN_JMP_REL || k == INSN_CALL_REL;
        bool intr = k == INSN_INT3 || k == INSN_INT || k == INSN_INTO || k == INSN_INT1;
        if (insn_is_branch(&in) != branch || insn_is_conditional(&in) != cond ||
            insn_has_target(&in) != target || insn_raises_interrupt(&in) != intr)
            fail_msg("predicates wrong for %s", insn_kind_name(k));
        for (unsigned j = 0; j < k; j++)
            assert_string_not_equal(insn_kind_name(j), insn_kind_name(k));
    }
    assert_string_equal(insn_kind_name(INSN_JCC), "jcc");
    assert_string_equal(insn_kind_name(INSN_KIND_COUNT), "?");
    assert_string_equal(insn_kind_name(~0u), "?");
    assert_string_equal(insn_error_name(INSN_ERR_TRUNCATED), "truncated");
    assert_string_equal(insn_error_name(INSN_ERR_INVALID), "invalid");
    assert_string_equal(insn_error_name(3), "ok");
    assert_string_equal(insn_error_name(-99), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_branch_kinds), cmocka_unit_test(test_prefixed_branches),
        cmocka_unit_test(test_lengths),      cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_truncated),    cmocka_unit_test(test_never_reads_past_15),
        cmocka_unit_test(test_random_bytes), cmocka_unit_test(test_predicates),
    };
    return cmocka_run_group_tests(tests, setup_guard, teardown_guard);
}
