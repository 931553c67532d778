#!/usr/bin/env python3
"""Write the x86-64 corpus that test_decode_objdump checks ds/decode.c against.

Usage: gen_decode_corpus.py OUT.S

The output is plain GNU as input (AT&T syntax, no C preprocessor lines), to be
assembled with `as --64` and disassembled with objdump at test time; nothing
expected is stored here: objdump is the oracle. Sections:

  .text.branch      every branch encoding as raw bytes, under every relevant
                    prefix combination (REX variants, 66, 67, segment/branch
                    hints, BND F2, NOTRACK 3E, ignored REX before a prefix)
  .text.gas         branches and ordinary instructions written as mnemonics, so
                    the assembler (not this script) picks the encodings
  .text.sweep       a byte sweep of the one-byte, 0F, 0F 38 and 0F 3A maps with
                    every ModRM/SIB/displacement shape and common prefixes
  .text.edge        where objdump and an Intel CPU disagree: over-long prefix
                    runs, AMD/VIA-only opcodes, prefixes before VEX/EVEX, FWAIT
                    folded into x87 instructions (the test handles each)

Raw candidates are followed by NOPs (0x90): an instruction takes what it needs
as displacement or immediate, the rest decode as NOPs, so a disagreement never
shifts the boundaries of the next candidate.

Left out on purpose (Intel and binutils disagree, the decoder follows Intel):
66-prefixed near branches are only emitted raw (objdump -M intel64 reads them
the Intel way), and the AMD-only encodings 0F 0E, 0F 0F, 66/F2 0F 78/79 and
8F /1-7 (XOP) and VIA's PadLock 0F A6/A7 are not swept.
"""
import sys

FILLER = [0x90] * 10          # room for disp32 + imm32 (or imm64) after a candidate
CC = ["o", "no", "b", "ae", "e", "ne", "be", "a",
      "s", "ns", "p", "np", "l", "ge", "le", "g"]

# ModRM/SIB shapes: (modrm without reg, optional SIB). SDM Vol. 2A Tables 2-2, 2-3.
SHAPES = [
    (0xC0, None),   # register
    (0x00, None),   # [rax]
    (0x05, None),   # [rip + disp32]
    (0x04, 0x24),   # [rsp] via SIB
    (0x04, 0x25),   # SIB base=5 with mod 0: [disp32]
    (0x04, 0xE5),   # [rsp*8 ...] index=4: no index, base=5: disp32
    (0x44, 0x58),   # [rax + rbx*2 + disp8]
    (0x40, None),   # [rax + disp8]
    (0x84, 0x9D),   # [rbp + rbx*4 + disp32]
    (0x80, None),   # [rax + disp32]
]
FEW_SHAPES = [SHAPES[0], SHAPES[4], SHAPES[8]]

LEGACY_PREFIXES = {0x26, 0x2E, 0x36, 0x3E, 0x64, 0x65, 0x66, 0x67, 0xF0, 0xF2, 0xF3}


class Out:
    def __init__(self):
        self.lines = []

    def emit(self, line):
        self.lines.append(line)

    def raw(self, bs, pad=True):
        bs = list(bs) + (FILLER if pad else [])
        self.emit("\t.byte " + ",".join("0x%02x" % b for b in bs))

    def section(self, name):
        self.emit('\n\t.section %s,"ax",@progbits' % name)


def modrm_bytes(shape, reg):
    modrm, sib = shape
    return [modrm | (reg << 3)] + ([] if sib is None else [sib])


# --------------------------------------------------------------- branches, raw
BRANCH_PREFIXES = [
    [], [0x3E], [0x2E], [0xF2], [0x66], [0x67], [0x48], [0x40], [0x41], [0x4F],
    [0x64], [0x65], [0x26], [0x36], [0xF3], [0x3E, 0xF2], [0xF2, 0x3E],
    [0x66, 0x48], [0x48, 0x66], [0x67, 0x48], [0x2E, 0x67], [0x3E, 0x3E],
    [0x66, 0x67, 0xF2, 0x3E, 0x4B], [0x48, 0x41],
]
REL8 = [0x00, 0x10, 0x7F, 0x80, 0xFE]
REL32 = [0x00000000, 0x00001000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFB]


def le(v, n):
    return [(v >> (8 * i)) & 0xFF for i in range(n)]


def gen_branches_raw(o):
    o.section(".text.branch")
    for p in BRANCH_PREFIXES:
        for cc in range(16):
            for r in REL8:
                o.raw(p + [0x70 + cc, r], pad=False)
            for r in REL32:
                o.raw(p + [0x0F, 0x80 + cc] + le(r, 4), pad=False)
        for op in (0xE0, 0xE1, 0xE2, 0xE3, 0xEB):     # loopne loope loop jrcxz jmp8
            for r in REL8:
                o.raw(p + [op, r], pad=False)
        for op in (0xE8, 0xE9):                       # call, jmp rel32
            for r in REL32:
                o.raw(p + [op] + le(r, 4), pad=False)
        for reg in (2, 3, 4, 5):                      # FF /2 /3 /4 /5
            for shape in SHAPES:
                if shape[0] == 0xC0 and reg in (3, 5):
                    continue                          # far forms need memory
                o.raw(p + [0xFF] + modrm_bytes(shape, reg))
            o.raw(p + [0xFF, 0xC0 | (reg << 3) | 7])  # rdi/r15
        o.raw(p + [0xC3], pad=False)                  # ret
        o.raw(p + [0xC2, 0x08, 0x00], pad=False)      # ret imm16
        o.raw(p + [0xC2, 0xFF, 0xFF], pad=False)
        o.raw(p + [0xCB], pad=False)                  # lret
        o.raw(p + [0xCA, 0x10, 0x00], pad=False)      # lret imm16
        o.raw(p + [0xCF], pad=False)                  # iret
        o.raw(p + [0xCC], pad=False)                  # int3
        for v in (0x00, 0x03, 0x80, 0xFF):
            o.raw(p + [0xCD, v], pad=False)           # int n
        o.raw(p + [0xF1], pad=False)                  # int1
        for op2 in (0x05, 0x07, 0x34, 0x35, 0x0B):    # syscall sysret sysenter sysexit ud2
            o.raw(p + [0x0F, op2], pad=False)
    o.raw([0x90] * 16, pad=False)


# ------------------------------------------------------------------ gas, branches
def gen_branches_gas(o):
    o.section(".text.gas")
    o.emit("gas_back:")
    for cc in CC:
        o.emit("\tj%s gas_back" % cc)
        o.emit("\tj%s 1f" % cc)
        o.emit("\t{disp32} j%s 1f" % cc)
        o.emit("\tds j%s 1f" % cc)
        o.emit("\tcs j%s 1f" % cc)
        o.emit("\tbnd j%s 1f" % cc)
        o.emit("1:")
    for ins in ("jmp", "call", "bnd jmp", "bnd call"):
        o.emit("\t%s gas_back" % ins)
        o.emit("\t%s 1f" % ins)
        o.emit("\t{disp32} %s 1f" % ins)
        o.emit("1:")
    o.emit("gas_loop_back:")
    for ins in ("loop", "loope", "loopne", "jrcxz", "jecxz", "addr32 loop",
                "addr32 loope", "addr32 loopne"):
        o.emit("\t%s gas_loop_back" % ins)
        o.emit("\t%s 1f" % ins)
        o.emit("1:")
    mems = ["(%rax)", "(%rsp)", "(%rbp)", "(%r12)", "(%r13)", "0x12(%rax)",
            "-0x80(%rbp)", "0x12345678(%rax)", "(%rax,%rbx,4)", "0x12(%r8,%r9,8)",
            "0x12345678(,%rbx,2)", "0x12345678", "0x10(%rip)", "(%eax)",
            "0x10(%r8d,%r9d,2)", "%fs:0x10(%rax)", "%gs:0x28"]
    for ins in ("call", "jmp", "notrack call", "notrack jmp", "bnd call",
                "bnd jmp", "notrack bnd call", "bnd notrack jmp"):
        for reg in ("%rax", "%rsp", "%r11", "%r15"):
            o.emit("\t%s *%s" % (ins, reg))
        for m in mems:
            if not ("notrack" in ins and "%" in m[:3]):  # notrack is a DS override
                o.emit("\t%s *%s" % (ins, m))
    for ins in ("lcall", "ljmp"):
        for m in mems:
            o.emit("\t%s *%s" % (ins, m))
    for ins in ("ret", "ret $0", "ret $0x10", "ret $0xffff", "bnd ret",
                "bnd ret $8", "lretl", "lretq", "lretw", "lretl $8", "lretq $0x10",
                "iretl", "iretq", "iretw", "int3", "int $3", "int $0x80",
                "int $0xff", "int1", "syscall", "sysretl", "sysretq", "sysenter",
                "sysexitl", "sysexitq", "ud2", "xbegin gas_back", "xabort $1"):
        o.emit("\t" + ins)


# -------------------------------------------------------------- gas, ordinary
GAS_MEMS = ["(%rax)", "(%rsp)", "(%rbp)", "(%r12)", "(%r13)", "0x7f(%rax)",
            "-0x80(%rbp)", "0x12345678(%rax)", "(%rax,%rbx,4)", "0x12(%r8,%r9,8)",
            "0x12345678(,%rbx,2)", "0x12345678", "0x10(%rip)", "(%eax)",
            "0x10(%r8d,%r9d,2)", "%fs:0x10(%rax)", "%gs:0x28", "(%rsp,%r12,1)"]
REGS = {"b": ["%al", "%cl", "%sil", "%r8b", "%r15b", "%ah"],
        "w": ["%ax", "%si", "%r9w"],
        "l": ["%eax", "%edi", "%r10d"],
        "q": ["%rax", "%rsp", "%r11", "%r15"]}
IMMS = {"b": ["$1", "$-1", "$0x7f"],
        "w": ["$1", "$0x1234", "$-0x8000"],
        "l": ["$1", "$0x12345678", "$-1"],
        "q": ["$1", "$0x12345678", "$-0x80000000"]}


def gen_ordinary_gas(o):
    alu = ["add", "or", "adc", "sbb", "and", "sub", "xor", "cmp", "mov", "test"]
    for op in alu:
        for sz, regs in REGS.items():
            if op != "test":
                o.emit("\t%s %s,%s" % (op + sz, regs[0], regs[1]))
            for r in regs:
                for imm in IMMS[sz]:
                    if not (r == "%ah" and sz == "b"):
                        o.emit("\t%s %s,%s" % (op + sz, imm, r))
            for m in GAS_MEMS:
                o.emit("\t%s %s,%s" % (op + sz, regs[1], m))
                if op not in ("test",):
                    o.emit("\t%s %s,%s" % (op + sz, m, regs[2 if sz != "b" else 3]))
                for imm in IMMS[sz]:
                    o.emit("\t%s %s,%s" % (op + sz, imm, m))
    for sz in "bwlq":
        for op in ("not", "neg", "mul", "imul", "div", "idiv", "inc", "dec",
                   "shl", "shr", "sar", "rol", "ror", "rcl", "rcr"):
            for m in GAS_MEMS[:8]:
                o.emit("\t%s %s" % (op + sz, m))
            for sh in ("$1", "$3", "%cl"):
                if op in ("shl", "shr", "sar", "rol", "ror", "rcl", "rcr"):
                    o.emit("\t%s %s,%s" % (op + sz, sh, GAS_MEMS[7]))
                    o.emit("\t%s %s,%s" % (op + sz, sh, REGS[sz][1]))
    for ins in ("movabs $0x1122334455667788,%rax", "movabs $0x1122334455667788,%r9",
                "mov $0x12345678,%r10d", "movw $0x1234,%ax", "movb $1,%r12b",
                "movabs 0x1122334455667788,%al", "movabs 0x1122334455667788,%ax",
                "movabs 0x1122334455667788,%eax", "movabs 0x1122334455667788,%rax",
                "movabs %al,0x1122334455667788", "movabs %rax,0x1122334455667788",
                "addr32 mov 0x11223344,%eax", "addr32 mov %rax,0x11223344",
                "pushq $1", "pushq $0x12345678", "pushw $0x1234", "push %r12",
                "pushq 0x10(%rax)", "popq (%rsp)", "pop %r13", "pushw %ax",
                "imul $3,%eax,%ebx", "imul $0x12345678,(%rax),%rbx",
                "imul $-1,%ax,%bx", "imul $0x1234,%ax,%bx",
                "enter $0x10,$0", "enter $0xffff,$31", "leave", "leaveq",
                "lea 0x10(%rax,%rbx,4),%rcx", "lea 0x10(%rip),%r8",
                "movzbl (%rax),%ecx", "movzwq %ax,%r9", "movsbq 0x12345678(%rax),%rax",
                "movslq (%rax),%rax", "movsbw %al,%bx", "cmovne (%rax),%rcx",
                "sete %al", "setg (%rax)", "bt $3,%eax", "btsq $63,(%rax)",
                "btrw $1,0x12345678(%rip)", "btc %rax,(%rbx)", "shld $3,%rax,(%rbx)",
                "shrd %cl,%eax,%ebx", "lock cmpxchg %rax,(%rbx)", "lock xadd %eax,(%rbx)",
                "lock cmpxchg16b (%rax)", "lock incq 0x10(%rax)", "bswap %eax",
                "bswap %r12", "xchg %rax,%r8", "xchg %ax,%bx", "nop", "pause",
                "nopw 0x0(%rax,%rax,1)", "nopl 0x0(%rax)", "cs nopw 0x0(%rax,%rax,1)",
                "rep movsb", "rep movsq", "repne scasb", "rep stosl", "lodsw",
                "cmpsq", "rep insb", "rep outsw", "in $0x60,%al", "out %al,$0x80",
                "in (%dx),%eax", "outw %ax,(%dx)", "cpuid", "rdtsc", "rdtscp", "rdmsr",
                "wrmsr", "rdpmc", "hlt", "cli", "sti", "cld", "std", "clc", "stc",
                "cmc", "pushfq", "popfq", "pushfw", "lahf", "sahf", "cbtw", "cwtl",
                "cltq", "cwtd", "cltd", "cqto", "xlat", "wait", "int3",
                "flds (%rax)", "fldl 0x10(%rbx)", "fstpt (%rcx)", "faddp", "fxch %st(3)",
                "fnstsw %ax", "fldcw (%rax)", "fninit", "fsin",
                "clflush (%rax)", "clflushopt (%rax)", "mfence", "lfence", "sfence",
                "prefetcht0 (%rax)", "prefetchnta 0x10(%rax)", "prefetchw (%rax)",
                "fxsave (%rax)", "xsave (%rax)", "xrstor64 (%rax)", "xgetbv",
                "rdrand %eax", "rdseed %rax", "rdfsbase %rax", "wrgsbase %rbx",
                "swapgs", "invlpg (%rax)", "lgdt (%rax)", "lidt 0x10(%rax)",
                "sgdt (%rax)", "ltr %ax", "str %ax", "lldt %ax", "verr %ax",
                "mov %cr0,%rax", "mov %rax,%cr3", "mov %cr4,%r9", "mov %r8,%cr8",
                "mov %dr7,%rax", "mov %rax,%dr0", "clts", "invd", "wbinvd",
                "endbr64", "endbr32", "rdsspq %rax", "incsspq %rax", "lar %ax,%bx",
                "lsl (%rax),%ecx", "crc32b %al,%ecx", "crc32q (%rax),%rcx",
                "popcnt %eax,%ebx", "lzcnt (%rax),%rcx", "tzcnt %ax,%bx",
                "movbe (%rax),%ecx", "adcx %rax,%rbx", "adox (%rax),%ebx",
                "andn %eax,%ebx,%ecx", "bextr %rax,(%rbx),%rcx", "rorx $3,%eax,%ebx",
                "shlx %rax,%rbx,%rcx", "pdep (%rax),%rbx,%rcx", "bzhi %eax,%ebx,%ecx",
                "movaps (%rax),%xmm0", "movups %xmm8,0x10(%rax)", "movdqa %xmm1,%xmm2",
                "paddd %xmm3,%xmm4", "pshufd $0x1b,(%rax),%xmm5", "pinsrw $1,%eax,%xmm0",
                "pextrw $2,%xmm1,%eax", "palignr $4,%xmm1,%xmm2", "pblendw $0xf0,(%rax),%xmm3",
                "roundps $1,%xmm1,%xmm2", "shufps $0x44,%xmm1,%xmm2", "cmpps $2,%xmm1,%xmm2",
                "ptest %xmm1,%xmm2", "pcmpistri $0x0c,(%rax),%xmm1", "pshufb %xmm1,%xmm2",
                "psrlw $3,%xmm1", "pslld $4,%xmm9", "psrlq $1,%mm0", "movq %mm0,%mm1",
                "emms", "movd %eax,%xmm0", "movq %rax,%xmm0", "cvtsi2sd %rax,%xmm1",
                "cvttsd2si (%rax),%eax", "sqrtss %xmm1,%xmm2", "movnti %eax,(%rbx)",
                "ldmxcsr (%rax)", "aesenc %xmm1,%xmm2", "pclmulqdq $0x11,%xmm1,%xmm2",
                "sha1rnds4 $3,%xmm1,%xmm2", "sha256rnds2 %xmm0,%xmm1,%xmm2",
                "vaddps %ymm1,%ymm2,%ymm3", "vaddps (%rax),%xmm2,%xmm3",
                "vaddpd 0x12345678(%rax,%rbx,8),%ymm12,%ymm13", "vpermq $0x1b,%ymm1,%ymm2",
                "vblendvps %xmm4,%xmm1,%xmm2,%xmm3", "vpshufb %ymm1,%ymm2,%ymm3",
                "vzeroupper", "vzeroall", "vmovdqu (%r9),%ymm8", "vpsrlw $3,%ymm1,%ymm2",
                "vpextrq $1,%xmm1,%rax", "vinsertf128 $1,%xmm1,%ymm2,%ymm3",
                "vfmadd231ps %ymm1,%ymm2,%ymm3", "vpbroadcastd (%rax),%ymm1",
                "vaddps %zmm1,%zmm2,%zmm3", "vaddps (%rax){1to16},%zmm1,%zmm2",
                "vaddps 0x40(%rax),%zmm1,%zmm2{%k1}{z}", "vpaddd %zmm17,%zmm18,%zmm19",
                "vpternlogd $0xff,%zmm1,%zmm2,%zmm3", "vmovdqu64 0x12345678(%rax),%zmm30",
                "kmovw %k1,%eax", "kandw %k1,%k2,%k3", "vaddph %zmm1,%zmm2,%zmm3",
                "vfmadd132ph (%rax),%zmm1,%zmm2", "vpcmpeqd %zmm1,%zmm2,%k1",
                "vcmpps $1,%zmm1,%zmm2,%k1", "vextracti32x4 $1,%zmm1,%xmm2",
                "vgatherdps (%rax,%zmm1,4),%zmm2{%k1}", "xend", "xtest",
                "vmcall", "vmlaunch", "vmresume", "vmxoff", "vmread %rax,%rbx",
                "vmwrite (%rax),%rbx", "invept (%rax),%rbx", "monitor", "mwait",
                "ud1 %eax,%ebx", "ud0 (%rax),%ecx", "rsm", "getsec", "clac", "stac",
                "wrpkru", "rdpkru", "serialize", "movdir64b (%rax),%rbx",
                "movdiri %eax,(%rbx)", "tpause %eax", "umonitor %rax", "ptwrite %eax",
                "rdpid %rax", "wbnoinvd", "cldemote (%rax)", "clwb (%rax)", "hreset $1",
                "encls", "enclu", "xsaves (%rax)", "{vex} vpdpbusd %ymm1,%ymm2,%ymm3"):
        o.emit("\t" + ins)
    o.emit("\t.byte 0x66,0x66,0x2e,0x0f,0x1f,0x84,0,0,0,0,0")  # data16 data16 cs nopw
    o.emit("\t.byte 0x67,0xa0,1,2,3,4")              # addr32 moffs forms
    o.emit("\t.byte 0x67,0x66,0xa3,1,2,3,4")
    o.emit("\t.byte 0x67,0x48,0xa1,1,2,3,4")


# ------------------------------------------------------------------ byte sweep
SWEEP_PREFIXES = [[0x66], [0x67], [0x48], [0x66, 0x48], [0x48, 0x66], [0xF3],
                  [0xF2], [0x41], [0xF0], [0x2E], [0x64, 0x67, 0x66, 0x4C]]
PREFIX_BYTES = LEGACY_PREFIXES | set(range(0x40, 0x50)) | {0x0F}
VEX_ESCAPES = {0xC4, 0xC5, 0x62}
AMD_ONLY_0F = {0x0E, 0x0F}           # femms, 3DNow!
VIA_ONLY_0F = {0xA6, 0xA7}           # PadLock (montmul, xcrypt-*): #UD on Intel
SSE4A_0F = {0x78, 0x79}              # 66/F2 0F 78/79: AMD extrq/insertq


def sweep_map(o, esc, ops, shapes_all, prefix_sets, skip):
    for op in ops:
        for reg in range(8):
            for shape in shapes_all:
                if not skip(op, reg, []):
                    o.raw(esc + [op] + modrm_bytes(shape, reg))
        for p in prefix_sets:
            for reg in (0, 3, 7):
                for shape in FEW_SHAPES:
                    if not skip(op, reg, p):
                        o.raw(p + esc + [op] + modrm_bytes(shape, reg))


def gen_sweep(o):
    o.section(".text.sweep")
    one = [op for op in range(256) if op not in PREFIX_BYTES | VEX_ESCAPES]
    sweep_map(o, [], one, SHAPES, SWEEP_PREFIXES,
              lambda op, reg, p: op == 0x8F and reg != 0)
    sweep_map(o, [0x0F], [op for op in range(256) if op not in (0x38, 0x3A)],
              SHAPES, SWEEP_PREFIXES,
              lambda op, reg, p: op in AMD_ONLY_0F | VIA_ONLY_0F or
              (op in SSE4A_0F and (0x66 in p or 0xF2 in p)))
    few_prefixes = [[0x66], [0xF2], [0x48], [0x66, 0x41]]
    for esc in ([0x0F, 0x38], [0x0F, 0x3A]):
        sweep_map(o, esc, range(256), FEW_SHAPES, few_prefixes,
                  lambda op, reg, p: False)
    # VEX/EVEX escapes with a few payloads (legacy prefixes before them are #UD).
    for vex in ([0xC5, 0xF8], [0xC5, 0x79], [0xC4, 0xE1, 0x7D], [0xC4, 0x42, 0x75],
                [0xC4, 0xE3, 0x79]):
        for op in range(256):
            o.raw(vex + [op] + modrm_bytes(SHAPES[8], 1))
    for evex in ([0x62, 0xF1, 0x7C, 0x48], [0x62, 0xF2, 0xFD, 0x28],
                 [0x62, 0xF3, 0x7D, 0x08], [0x62, 0xF5, 0x7C, 0x48]):
        for op in range(256):
            o.raw(evex + [op] + modrm_bytes(SHAPES[6], 2))


# ------------------------------------------------------------- objdump quirks
def gen_edges(o):
    """Encodings where objdump and an Intel CPU read bytes differently."""
    o.section(".text.edge")
    for run in ([0x66] * 15 + [0x90], [0x2E] * 16 + [0xC3], [0x48] * 16 + [0x90],
                [0x66] * 14 + [0xE8, 0, 0, 0, 0], [0xF2, 0x3E] * 8 + [0xFF, 0xD0]):
        o.raw(run)                                    # over 15 bytes: #GP
    for bs in ([0x48, 0xC5, 0xF8, 0x77], [0x66, 0xC5, 0xF8, 0x77],
               [0xF3, 0xC4, 0xE1, 0x79, 0x6E, 0xC0],
               [0xF0, 0x62, 0xF1, 0x7C, 0x48, 0x58, 0xC1],  # prefix before VEX/EVEX
               [0x8F, 0xE8, 0x78, 0xC2, 0xEC, 0x0E],        # AMD XOP
               [0x0F, 0x0F, 0xC0, 0x0D], [0x0F, 0x0E],      # 3DNow!, femms
               [0x66, 0x0F, 0x78, 0xC0, 0x01, 0x02], [0xF2, 0x0F, 0x79, 0xC1],  # SSE4a
               [0x0F, 0xA6, 0xC0], [0x0F, 0xA7, 0xC0]):     # VIA PadLock
        o.raw(bs)
    for bs in ([0x9B, 0xDD, 0x38], [0x9B, 0xDF, 0xE0], [0x9B, 0xDB, 0xE3],
               [0x9B, 0xD9, 0x30], [0x9B]):               # fwait + x87: two instructions
        o.raw(bs)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_decode_corpus.py OUT.S")
    o = Out()
    o.emit("/* Generated by tests/unit/gen_decode_corpus.py: do not edit. */")
    gen_branches_raw(o)
    gen_branches_gas(o)
    gen_ordinary_gas(o)
    gen_sweep(o)
    gen_edges(o)
    with open(sys.argv[1], "w") as f:
        f.write("\n".join(o.lines) + "\n")


if __name__ == "__main__":
    main()
