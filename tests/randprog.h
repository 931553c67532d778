/*
 * Random x86-64 programs whose control transfers are known by construction.
 *
 * rp_generate() builds, from a 64-bit seed and a program index, a program into a caller-given
 * buffer that will run at a given address, and lists every control transfer the program makes
 * when run from its entry, in execution order. The list comes from the generator's own
 * decisions (the inputs it gives each condition, each loop count, each table entry), never from
 * decoding the bytes. It also records each instruction it emitted (address, length, class,
 * direct target) so that a disassembler can be checked against it.
 *
 * The same file builds into the kernel (tests/t_rand.c) and, with -DBTSX_HOST, into the host
 * tools and unit tests (tests/unit/test_randprog.c, tools/btsx-rand): freestanding, no
 * allocation, the caller provides every buffer.
 *
 * Calling convention of a generated program: it is called (a near CALL to rp_prog.entry) with
 * the direction flag clear and at least RP_STACK_NEED bytes of stack below the return address.
 * It may clobber RAX, RCX, RDX, RSI, RDI, R8-R11 and the arithmetic flags, and writes the
 * stack below its RSP (rep movsb/stosb scratch); it preserves RBX, RBP, R12-R15 and RSP, and
 * returns with a near RET: the last transfer of the list is that RET, with `to` = RP_RETURN
 * (the caller's return address, which the generator does not know).
 *
 * Transfers of class RP_C_INT3, RP_C_INTN, RP_C_UD and RP_C_PF are not branches but events the
 * harness handles: `from` is the address of the instruction that traps or faults, `to` the
 * address execution resumes at when the handler returns (the next instruction); `vector` says
 * which. A #UD/#PF handler must resume there (the harness knows the instruction's length from
 * rp_prog's instruction list or from to - from). RP_C_SYSCALL is a system call made at CPL 3
 * (`push rcx; mov eax, NR; syscall; pop rcx`, NR = rp_params.syscall_nr, chosen by the
 * harness for the kernel that serves it): `from` the SYSCALL, `to` the instruction after it,
 * where the kernel's SYSRET must return; the kernel may clobber RAX and R11 and must preserve
 * everything else.
 */
#ifndef BTSX_TESTS_RANDPROG_H
#define BTSX_TESTS_RANDPROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Instruction and transfer classes: the histogram's buckets. */
#define RP_CLASSES(X)                                                                              \
    X(RP_C_JMP8, "jmp8")                                                                           \
    X(RP_C_JMP32, "jmp32")                                                                         \
    X(RP_C_JCC8, "jcc8")                                                                           \
    X(RP_C_JCC32, "jcc32")                                                                         \
    X(RP_C_LOOP, "loop")                                                                           \
    X(RP_C_LOOPE, "loope")                                                                         \
    X(RP_C_LOOPNE, "loopne")                                                                       \
    X(RP_C_JRCXZ, "jrcxz")                                                                         \
    X(RP_C_CALL, "call")                                                                           \
    X(RP_C_RET, "ret")                                                                             \
    X(RP_C_RETIMM, "ret_imm")                                                                      \
    X(RP_C_JMP_REG, "jmp_reg")                                                                     \
    X(RP_C_JMP_MEM, "jmp_mem")                                                                     \
    X(RP_C_CALL_REG, "call_reg")                                                                   \
    X(RP_C_CALL_MEM, "call_mem")                                                                   \
    X(RP_C_LRET, "lretq")                                                                          \
    X(RP_C_INT3, "int3")                                                                           \
    X(RP_C_INTN, "int_n")                                                                          \
    X(RP_C_UD, "ud")                                                                               \
    X(RP_C_PF, "pf")                                                                               \
    X(RP_C_SYSCALL, "syscall")                                                                     \
    X(RP_C_MOV, "mov")                                                                             \
    X(RP_C_ALU, "alu")                                                                             \
    X(RP_C_LEA, "lea")                                                                             \
    X(RP_C_PUSH, "push")                                                                           \
    X(RP_C_POP, "pop")                                                                             \
    X(RP_C_NOP, "nop")                                                                             \
    X(RP_C_REP, "rep")

enum rp_class {
#define RP_CLASS_ENUM(name, text) name,
    RP_CLASSES(RP_CLASS_ENUM)
#undef RP_CLASS_ENUM
        RP_C_COUNT
};

/* The classes a program may contain (rp_params.mix): one bit per class. Filler (mov, alu,
 * lea, push/pop, nop) is always allowed; its bits select nothing. */
#define RP_MIX(c)  (1u << (c))
#define RP_MIX_ALL ((1u << RP_C_COUNT) - 1)
/* A class is emitted only where the parameters allow it as well: RP_C_PF needs
 * rp_params.fault_addr, RP_C_INTN rp_params.intn_vector, RP_C_SYSCALL rp_params.syscall. */

/* Where a program's last RET goes: the caller, whose address the generator does not know. */
#define RP_RETURN     0ull
/* Stack a program may use below the return address: pushes, call nesting, ret imm16
 * arguments, and the rep movsb/stosb scratch area. */
#define RP_STACK_NEED 1024
/* Bytes at the end of the buffer kept for jump and call tables (read as data, never run). */
#define RP_DATA_BYTES 256
#define RP_SIZE_MIN   (1024 + RP_DATA_BYTES)

struct rp_params {
    uint32_t size;       /* buffer bytes used: code, padding and tables (>= RP_SIZE_MIN) */
    uint32_t mix;        /* RP_MIX() bits of the classes allowed */
    uint64_t fault_addr; /* an address whose read faults with #PF (0: no RP_C_PF) */
    uint8_t intn_vector; /* the vector of `int n`, whose handler returns (0: no RP_C_INTN) */
    bool syscall;        /* the program runs at CPL 3 under a kernel that serves SYSCALL */
    uint32_t syscall_nr; /* RAX of each SYSCALL: a call that returns and changes no state */
};

/* One instruction the generator emitted (padding between them is 0xCC, int3, never run). */
struct rp_insn {
    uint64_t addr;
    uint64_t target; /* direct branches: the encoded target (taken or not) */
    uint8_t len;
    uint8_t cls;   /* enum rp_class */
    uint8_t cc;    /* jcc: the condition (low nibble of the opcode) */
    uint8_t zero;  /* a direct branch to the next instruction */
    uint8_t taken; /* conditional branches: taken whenever it runs (each run is the same) */
};

struct rp_transfer {
    uint64_t from, to;
    uint8_t cls;    /* enum rp_class */
    uint8_t vector; /* traps and faults */
    uint8_t next;   /* a direct branch to the next instruction (zero displacement) */
};

/* Per program set: instructions emitted per class, transfers made per class, and the jcc
 * conditions seen, [rel32][taken][cc]. */
struct rp_hist {
    uint64_t programs;
    uint64_t emitted[RP_C_COUNT];
    uint64_t made[RP_C_COUNT];
    uint64_t zero_distance, page_crossing;
    uint64_t jcc[2][2][16];
};

struct rp_prog {
    /* caller's: the buffer, the address it will run at, and the lists' storage */
    uint8_t *code;
    uint64_t base;
    struct rp_transfer *xfer;
    uint32_t xfer_cap;
    struct rp_insn *insn;
    uint32_t insn_cap; /* >= params.size keeps it from filling */
    /* results */
    uint64_t seed, index;
    struct rp_params params;
    uint64_t entry;
    uint32_t code_len; /* the bytes before the tables: what a disassembler should read */
    uint32_t nxfer, ninsn;
};

/* Builds program `index` of the set `seed`. Returns 0, or E_INVAL for bad parameters (size too
 * small, buffer missing) or E_TOOLONG if the instruction list would overflow. The transfer list
 * never overflows: the generator stops adding branches when it gets full (xfer_cap >= 64). */
int rp_generate(struct rp_prog *p, uint64_t seed, uint64_t index, const struct rp_params *par);

/*
 * The failure report's program lines, which tools/btsx-rand reads back (from a log, wherever
 * they sit in a line): line 0 gives the parameters,
 *   randprog seed=0x... index=N size=N mix=0x... base=0x... fault=0x... int=0x...[ syscall=0x...]
 * (syscall= only where rp_params.syscall is set)
 * and lines 1.. the buffer's bytes, RP_REPORT_BYTES a line,
 *   randprog bytes +0xOFFS: hex...
 * rp_report_line() writes line n (NUL-terminated, at most RP_LINE_MAX bytes) and returns
 * false past the last one.
 */
#define RP_REPORT_BYTES 32
#define RP_LINE_MAX     192
bool rp_report_line(const struct rp_prog *p, uint32_t n, char *buf);

/* Adds a program's counts to a histogram. */
void rp_hist_add(struct rp_hist *h, const struct rp_prog *p);
const char *rp_class_name(unsigned cls);
/* The jcc mnemonic of condition cc ("jo" ... "jg"). */
const char *rp_cc_name(unsigned cc);
/* Whether the condition cc holds after `cmp a, b` on 32-bit operands. */
bool rp_cc_holds(unsigned cc, uint32_t a, uint32_t b);

#endif /* BTSX_TESTS_RANDPROG_H */
