/*
 * tests/unit/test_decode_objdump.c - ds/decode.c checked against GNU objdump.
 *
 * For every instruction `objdump -d -w -z -M intel64` (AT&T syntax, Intel
 * semantics for 66-prefixed near branches) prints, decode the same bytes at
 * the same address and require (a) the same length, (b) the same kind (every
 * mnemonic that is not a branch must decode as INSN_OTHER), (c) for direct
 * branches the same target, and for jcc/int/iretq-style forms the same
 * condition, vector and REX.W. Nothing expected is stored: objdump is the
 * oracle, run at test time.
 *
 * usage: test_decode_objdump [-v] [--corpus OBJ] [--skip-section NAME]... [ELF...]
 * With no file arguments it checks the corpus object (DECODE_CORPUS, made
 * from gen_decode_corpus.py by decode.mk) and DECODE_KERNEL if it exists.
 * The corpus must also cover every branch kind. Sections of 32-bit code are
 * skipped: .boot32, and .boot, where the linked kernel keeps it (linker.ld).
 *
 * objdump quirks handled here, not hidden:
 *  - it prints an ignored REX (followed by another prefix) and runs of
 *    prefixes as lines of their own; the CPU counts them as part of the next
 *    instruction, so such lines are merged with the instruction that follows
 *    (or, past 15 bytes, the decoder must report INSN_ERR_INVALID);
 *  - it folds FWAIT (9B) into the x87 instruction after it: split again;
 *  - "(bad)" and ".byte" lines are skipped and counted: objdump's guess;
 *  - AMD/VIA-only encodings that Intel rejects are counted, not compared
 *    (the decoder must still reject them), see non_intel_encoding().
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ds/decode.h"

#ifndef DECODE_CORPUS
#define DECODE_CORPUS "build/unit/decode_corpus.o"
#endif
#ifndef DECODE_KERNEL
#define DECODE_KERNEL "build/btsx.elf"
#endif

#define MAX_LINE_BYTES 32  /* bytes objdump shows on one -w line, at most */
#define TEXT_LEN       256 /* kept of objdump's text */
#define RING           64  /* lines buffered: lookahead for merges */
#define LOOKAHEAD      (INSN_MAX_LEN + 2)
#define MAX_REPORTS    40 /* mismatches printed per file */
#define MAX_SKIPS      8
#define OP_FWAIT       0x9b

struct line {
    uint64_t addr;
    unsigned nbytes;
    uint8_t bytes[MAX_LINE_BYTES];
    char text[TEXT_LEN];
};

/* objdump's reading of one line. */
struct view {
    bool bad, prefix_only, has_target, has_vector, want_rex_w, check_rex_w;
    bool want_addr32, check_addr32;
    int kind; /* enum insn_kind, or -1: branch-like but unknown */
    uint8_t cc, vector;
    uint64_t target;
    char mnemonic[24];
};

struct stats {
    unsigned long compared, branches, bad, merged, overlong, fwait, non_intel, mismatches;
    unsigned long seen[INSN_KIND_COUNT];
};

static struct line ring[RING];
static unsigned ring_head, ring_count;
static const char *cur_file, *cur_section;
static struct stats st;
static bool verbose; /* -v: print every mismatch */

static const struct {
    const char *name;
    uint8_t cc;
} jcc_names[] = {
    {"jo", 0},   {"jno", 1},  {"jb", 2},   {"jc", 2},   {"jnae", 2}, {"jae", 3},
    {"jnb", 3},  {"jnc", 3},  {"je", 4},   {"jz", 4},   {"jne", 5},  {"jnz", 5},
    {"jbe", 6},  {"jna", 6},  {"ja", 7},   {"jnbe", 7}, {"js", 8},   {"jns", 9},
    {"jp", 10},  {"jpe", 10}, {"jnp", 11}, {"jpo", 11}, {"jl", 12},  {"jnge", 12},
    {"jge", 13}, {"jnl", 13}, {"jle", 14}, {"jng", 14}, {"jg", 15},  {"jnle", 15},
};

/* Mnemonics whose kind does not depend on operands (AT&T spellings). */
static const struct {
    const char *name;
    uint8_t kind;
} fixed_names[] = {
    {"jrcxz", INSN_JRCXZ},       {"jecxz", INSN_JRCXZ},     {"loop", INSN_LOOP},
    {"loopl", INSN_LOOP},        {"loopq", INSN_LOOP},      {"loope", INSN_LOOPE},
    {"loopz", INSN_LOOPE},       {"loopel", INSN_LOOPE},    {"loopne", INSN_LOOPNE},
    {"loopnz", INSN_LOOPNE},     {"loopnel", INSN_LOOPNE},  {"ljmp", INSN_JMP_FAR},
    {"ljmpl", INSN_JMP_FAR},     {"ljmpq", INSN_JMP_FAR},   {"ljmpw", INSN_JMP_FAR},
    {"lcall", INSN_CALL_FAR},    {"lcalll", INSN_CALL_FAR}, {"lcallq", INSN_CALL_FAR},
    {"lcallw", INSN_CALL_FAR},   {"lret", INSN_RET_FAR},    {"lretl", INSN_RET_FAR},
    {"lretq", INSN_RET_FAR},     {"lretw", INSN_RET_FAR},   {"iret", INSN_IRET},
    {"iretl", INSN_IRET},        {"iretq", INSN_IRET},      {"iretw", INSN_IRET},
    {"int3", INSN_INT3},         {"int", INSN_INT},         {"into", INSN_INTO},
    {"int1", INSN_INT1},         {"icebp", INSN_INT1},      {"syscall", INSN_SYSCALL},
    {"sysret", INSN_SYSRET},     {"sysretl", INSN_SYSRET},  {"sysretq", INSN_SYSRET},
    {"sysenter", INSN_SYSENTER}, {"sysexit", INSN_SYSEXIT}, {"sysexitl", INSN_SYSEXIT},
    {"sysexitq", INSN_SYSEXIT},  {"ud2", INSN_UD2},
};

/* Mnemonic stems that are branches: anything starting so must be known. */
static const char *const branch_stems[] = {
    "j", "loop", "call", "lcall", "ljmp", "ret", "lret", "iret", "int", "sys",
};

static bool is_prefix_byte(uint8_t b)
{
    return b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 || b == 0x65 ||
           b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 ||
           (b >= 0x40 && b <= 0x4f);
}

static bool is_prefix_word(const char *w)
{
    static const char *const words[] = {
        "data16", "data32", "addr16",   "addr32",   "lock", "rep",   "repz", "repe",
        "repnz",  "repne",  "bnd",      "notrack",  "cs",   "ds",    "es",   "ss",
        "fs",     "gs",     "xacquire", "xrelease", "rex",  "rex64",
    };
    if (w[0] == '{' || strncmp(w, "rex.", 4) == 0)
        return true;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strcmp(w, words[i]) == 0)
            return true;
    return false;
}

static bool parse_hex(const char *s, uint64_t *v)
{
    char *end;

    if (s[0] == '$')
        s++;
    if (s[0] == '0' && s[1] == 'x')
        s += 2;
    if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
        return false;
    *v = strtoull(s, &end, 16);
    return *end == '\0' || *end == ' ' || *end == '\t';
}

static bool starts_with(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* Turn objdump's text into the kind and operands the decoder must agree with. */
static void read_view(const char *text, struct view *v)
{
    char buf[TEXT_LEN], *save = NULL, *w, *ops;

    memset(v, 0, sizeof(*v));
    v->kind = INSN_OTHER;
    snprintf(buf, sizeof(buf), "%s", text);
    char *hash = strchr(buf, '#'); /* AT&T comment: "# 0x88" after rip-relative */
    if (hash)
        *hash = '\0';
    for (w = strtok_r(buf, " \t", &save); w && is_prefix_word(w); w = strtok_r(NULL, " \t", &save))
        ;
    if (!w) {
        v->prefix_only = true;
        return;
    }
    /* "(bad)" also appears as "prefetch (bad)"; ".byte 0x0": trailing data. */
    if (strstr(text, "(bad)") || w[0] == '.') {
        v->bad = true;
        return;
    }
    char *comma = strchr(w, ','); /* jne,pt: branch hint */
    if (comma)
        *comma = '\0';
    snprintf(v->mnemonic, sizeof(v->mnemonic), "%s", w);
    ops = strtok_r(NULL, "", &save);
    while (ops && (*ops == ' ' || *ops == '\t'))
        ops++;
    bool has_ops = ops && *ops;

    for (size_t i = 0; i < sizeof(jcc_names) / sizeof(jcc_names[0]); i++)
        if (strcmp(w, jcc_names[i].name) == 0) {
            v->kind = INSN_JCC;
            v->cc = jcc_names[i].cc;
        }
    for (size_t i = 0; i < sizeof(fixed_names) / sizeof(fixed_names[0]); i++)
        if (strcmp(w, fixed_names[i].name) == 0)
            v->kind = fixed_names[i].kind;
    if (!strcmp(w, "jmp") || !strcmp(w, "jmpq") || !strcmp(w, "jmpw"))
        v->kind = has_ops && ops[0] == '*' ? INSN_JMP_IND : INSN_JMP_REL;
    else if (!strcmp(w, "call") || !strcmp(w, "callq") || !strcmp(w, "callw"))
        v->kind = has_ops && ops[0] == '*' ? INSN_CALL_IND : INSN_CALL_REL;
    else if (!strcmp(w, "ret") || !strcmp(w, "retq") || !strcmp(w, "retw"))
        v->kind = has_ops ? INSN_RET_IMM : INSN_RET;

    if (v->kind == INSN_OTHER)
        for (size_t i = 0; i < sizeof(branch_stems) / sizeof(branch_stems[0]); i++)
            if (starts_with(w, branch_stems[i]))
                v->kind = -1;

    switch (v->kind) {
    case INSN_JCC:
    case INSN_JRCXZ:
    case INSN_LOOP:
    case INSN_LOOPE:
    case INSN_LOOPNE:
    case INSN_JMP_REL:
    case INSN_CALL_REL:
        v->has_target = true;
        if (!has_ops || !parse_hex(ops, &v->target))
            v->kind = -1;
        break;
    case INSN_INT: {
        uint64_t vec = 0;
        v->has_vector = has_ops && parse_hex(ops, &vec);
        v->vector = (uint8_t)vec;
        if (!v->has_vector)
            v->kind = -1;
        break;
    }
    case INSN_JMP_FAR:
    case INSN_CALL_FAR:
    case INSN_RET_FAR:
    case INSN_IRET:
    case INSN_SYSRET:
    case INSN_SYSEXIT:
        /* The q forms are the REX.W ones (m16:64, 64-bit pops, to 64-bit mode). */
        v->check_rex_w = true;
        v->want_rex_w = w[strlen(w) - 1] == 'q';
        break;
    default:
        break;
    }
    if (v->kind == INSN_JRCXZ) {
        v->check_addr32 = true;
        v->want_addr32 = !strcmp(w, "jecxz");
    }
}

static void print_bytes(const uint8_t *b, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        printf("%s%02x", i ? " " : "", b[i]);
}

static void report(uint64_t addr, const uint8_t *b, unsigned n, const char *text,
                   const struct view *v, int got, const struct insn *in, const char *why)
{
    if (++st.mismatches > MAX_REPORTS && !verbose)
        return;
    printf("MISMATCH %s [%s] at 0x%llx: %s\n  bytes   ", cur_file, cur_section,
           (unsigned long long)addr, why);
    print_bytes(b, n);
    printf("\n  objdump len %u '%s' -> %s", n, text,
           v->kind < 0 ? "unrecognised branch mnemonic" : insn_kind_name((unsigned)v->kind));
    if (v->has_target)
        printf(" target 0x%llx", (unsigned long long)v->target);
    printf("\n  decoder ");
    if (got < 0)
        printf("%s\n", insn_error_name(got));
    else
        printf("len %d -> %s target 0x%llx cc %u vector %u rex_w %d addr32 %d\n", got,
               insn_kind_name(in->kind), (unsigned long long)in->target, in->cc, in->vector,
               in->rex_w, in->addr32);
}

/*
 * objdump folds FWAIT (9B) into a following x87 instruction ("fstsw" is
 * 9B DD /7); the CPU runs, and single-steps, two instructions (SDM Vol. 2
 * FSTSW). Returns the length of that FWAIT with its prefixes, or 0.
 */
static unsigned folded_fwait_len(const uint8_t *b, unsigned n, const struct view *v)
{
    if (!strcmp(v->mnemonic, "fwait") || !strcmp(v->mnemonic, "wait"))
        return 0;
    for (unsigned i = 0; i < n; i++) {
        if (b[i] == OP_FWAIT)
            return i + 1;
        if (!is_prefix_byte(b[i]))
            return 0;
    }
    return 0;
}

/*
 * Encodings objdump decodes but an Intel CPU rejects with #UD, where the
 * decoder must say INSN_ERR_INVALID: AMD XOP (8F /1-7), 3DNow! and femms
 * (0F 0F, 0F 0E), SSE4a (66/F2/F3 0F 78/79), VIA PadLock (0F A6/A7), and VEX or
 * EVEX after 66/F2/F3/F0/REX (SDM Vol. 2A 2.3.2).
 */
static bool non_intel_encoding(const uint8_t *b, unsigned n)
{
    bool legacy_ops = false, sse_prefix = false; /* sse: any mandatory prefix */
    unsigned i = 0;

    for (; i < n && is_prefix_byte(b[i]); i++) {
        legacy_ops |= b[i] == 0x66 || b[i] >= 0xf0 || (b[i] & 0xf0) == 0x40;
        sse_prefix |= b[i] == 0x66 || b[i] == 0xf2 || b[i] == 0xf3;
    }
    if (i + 1 >= n)
        return false;
    if (b[i] == 0x8f)
        return (b[i + 1] & 0x38) != 0;
    if (b[i] == 0xc4 || b[i] == 0xc5 || b[i] == 0x62)
        return legacy_ops;
    if (b[i] != 0x0f)
        return false;
    switch (b[i + 1]) {
    case 0x0e:
    case 0x0f:
    case 0xa6:
    case 0xa7:
        return true;
    case 0x78:
    case 0x79:
        return sse_prefix;
    default:
        return false;
    }
}

/* First way the decoder's reading differs from objdump's, or NULL. */
static const char *disagreement(const struct view *v, int got, unsigned n, const struct insn *in)
{
    if (v->kind < 0)
        return "objdump shows a branch mnemonic this test cannot map";
    if (got != (int)n)
        return "length differs";
    if (in->kind != v->kind)
        return "kind differs";
    if (v->has_target && in->target != v->target)
        return "target differs";
    if (v->kind == INSN_JCC && in->cc != v->cc)
        return "condition differs";
    if (v->has_vector && in->vector != v->vector)
        return "vector differs";
    if (v->check_rex_w && in->rex_w != v->want_rex_w)
        return "REX.W (operand size) differs";
    if (v->check_addr32 && in->addr32 != v->want_addr32)
        return "address size differs";
    return NULL;
}

static void compare(uint64_t addr, const uint8_t *b, size_t avail, unsigned n, const char *text,
                    const struct view *v)
{
    struct insn in;
    unsigned fwait = folded_fwait_len(b, n, v);
    int got = insn_decode(b, avail, addr, &in);
    bool non_intel = non_intel_encoding(b, n);
    const char *why;

    if (non_intel && got == INSN_ERR_INVALID) {
        st.non_intel++;
        return;
    }
    st.compared++;
    if (fwait && (got != (int)fwait || in.kind != INSN_OTHER)) {
        why = "FWAIT is an instruction of its own, the decoder ran on";
    } else {
        if (fwait) {
            st.fwait++;
            got = insn_decode(b + fwait, avail - fwait, addr + fwait, &in);
            if (got >= 0)
                got += fwait;
        }
        why =
            non_intel ? "#UD on Intel, yet the decoder accepted it" : disagreement(v, got, n, &in);
    }
    if (why) {
        report(addr, b, n, text, v, got, &in, why);
        return;
    }
    st.seen[in.kind]++;
    if (insn_is_branch(&in))
        st.branches++;
}

static struct line *ring_at(unsigned i)
{
    return &ring[(ring_head + i) % RING];
}

/*
 * Compare the oldest buffered line and drop it. A run of prefix-only lines is
 * merged with the instruction after it when the whole fits in 15 bytes;
 * otherwise the decoder must reject the run (the CPU raises #GP) and the
 * instruction after it is compared on its own, as objdump shows it.
 */
static void process_front(void)
{
    uint8_t b[RING * MAX_LINE_BYTES];
    size_t avail = 0;
    unsigned used = 0, n = 0;
    struct view v;
    struct insn in;

    for (unsigned i = 0; i < ring_count && avail < 2 * INSN_MAX_LEN; i++) {
        memcpy(b + avail, ring_at(i)->bytes, ring_at(i)->nbytes);
        avail += ring_at(i)->nbytes;
    }
    for (;;) {
        read_view(ring_at(used)->text, &v);
        if (!v.prefix_only || used + 1 == ring_count || n > INSN_MAX_LEN)
            break;
        n += ring_at(used++)->nbytes;
    }
    const struct line *l = ring_at(used);
    if (v.prefix_only) { /* the run never reaches an instruction */
        n += l->nbytes;
        used++;
    }
    if (v.prefix_only || (used && n + l->nbytes > INSN_MAX_LEN)) {
        int got = insn_decode(b, avail, ring_at(0)->addr, &in);
        /* Truncated is right only for a run cut short by the end of the bytes. */
        if (got == INSN_ERR_INVALID || (got == INSN_ERR_TRUNCATED && avail < INSN_MAX_LEN))
            st.overlong++;
        else
            report(ring_at(0)->addr, b, n, ring_at(0)->text, &v, got, &in,
                   "objdump found no instruction within 15 bytes, the decoder did");
    } else if (v.bad) {
        st.bad++;
        used++;
    } else {
        st.merged += used;
        compare(ring_at(0)->addr, b, avail, n + l->nbytes, l->text, &v);
        used++;
    }
    ring_head = (ring_head + used) % RING;
    ring_count -= used;
}

static void flush(void)
{
    while (ring_count)
        process_front();
}

static bool parse_line(char *s, struct line *l)
{
    char *p = s, *end;

    while (*p == ' ')
        p++;
    l->addr = strtoull(p, &end, 16);
    if (end == p || end[0] != ':' || end[1] != '\t')
        return false;
    p = end + 2;
    l->nbytes = 0;
    while (p[0] && p[1] && p[0] != '\t' && l->nbytes < MAX_LINE_BYTES) {
        if (p[0] == ' ') {
            p++;
            continue;
        }
        char hex[3] = {p[0], p[1], 0};
        l->bytes[l->nbytes++] = (uint8_t)strtoul(hex, NULL, 16);
        p += 2;
    }
    while (*p == ' ' || *p == '\t')
        p++;
    p[strcspn(p, "\n")] = '\0';
    snprintf(l->text, sizeof(l->text), "%s", p);
    return l->nbytes > 0;
}

/* The corpus must reach every branch kind and every quirk handled above. */
static bool corpus_complete(const char *path)
{
    const struct {
        const char *what;
        unsigned long n;
    } quirks[] = {
        {"prefix-only lines merged", st.merged},
        {"over-long prefix runs", st.overlong},
        {"folded fwait", st.fwait},
        {"non-Intel encodings", st.non_intel},
    };
    bool ok = true;

    for (unsigned k = INSN_JCC; k <= INSN_UD2; k++)
        if (k != INSN_INTO && !st.seen[k]) { /* objdump shows into as (bad) */
            printf("FAIL %s: corpus never exercised kind %s\n", path, insn_kind_name(k));
            ok = false;
        }
    for (size_t i = 0; i < sizeof(quirks) / sizeof(quirks[0]); i++)
        if (!quirks[i].n) {
            printf("FAIL %s: corpus never exercised %s\n", path, quirks[i].what);
            ok = false;
        }
    return ok;
}

static int check_file(const char *path, bool is_corpus, char **skips, int nskips)
{
    char cmd[1024], *line = NULL, section[128] = "";
    size_t cap = 0;
    bool skipping = false;
    const char *objdump = getenv("OBJDUMP") ? getenv("OBJDUMP") : "objdump";

    if (strchr(path, '\'') || access(path, R_OK) != 0) {
        printf("FAIL %s: cannot read\n", path);
        return 1;
    }
    snprintf(cmd, sizeof(cmd), "%s -d -w -z -M intel64 '%s'", objdump, path);
    FILE *f = popen(cmd, "r");
    if (!f) {
        perror("popen");
        return 1;
    }
    memset(&st, 0, sizeof(st));
    cur_file = path;
    cur_section = section;
    while (getline(&line, &cap, f) > 0) {
        struct line l;
        if (sscanf(line, "Disassembly of section %127[^:]:", section) == 1) {
            flush();
            skipping = false;
            for (int i = 0; i < nskips; i++)
                skipping |= strcmp(section, skips[i]) == 0;
            if (skipping)
                printf("  %s: skipping section %s\n", path, section);
            continue;
        }
        if (skipping || !parse_line(line, &l))
            continue;
        if (ring_count) {
            const struct line *prev = ring_at(ring_count - 1);
            if (prev->addr + prev->nbytes != l.addr)
                flush(); /* a gap: bytes after it are not this run's */
        }
        *ring_at(ring_count++) = l;
        if (ring_count > LOOKAHEAD)
            process_front();
    }
    flush();
    free(line);
    int rc = pclose(f);

    printf("%s: %lu instructions compared (%lu branches), %lu (bad) skipped, "
           "%lu prefix lines merged, %lu over-long runs, %lu fwait split, "
           "%lu non-Intel rejected, %lu mismatches\n",
           path, st.compared, st.branches, st.bad, st.merged, st.overlong, st.fwait, st.non_intel,
           st.mismatches);
    if (rc != 0) {
        printf("FAIL %s: '%s' failed (exit status %d)\n", path, cmd,
               WIFEXITED(rc) ? WEXITSTATUS(rc) : -1);
        return 1;
    }
    if (st.compared == 0) {
        printf("FAIL %s: objdump showed no instructions\n", path);
        return 1;
    }
    if (is_corpus && !corpus_complete(path))
        return 1;
    return st.mismatches ? 1 : 0;
}

int main(int argc, char **argv)
{
    /* 32-bit code: .boot32 in objects; linker.ld puts it with the multiboot
     * header and the first few 64-bit instructions into .boot. */
    char *skips[MAX_SKIPS] = {".boot32", ".boot"};
    int nskips = 2, failed = 0, nfiles = 0;
    const char *corpus = DECODE_CORPUS;

    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-v")) {
            verbose = true;
        } else if (!strcmp(argv[i], "--skip-section") && i + 1 < argc && nskips < MAX_SKIPS) {
            skips[nskips++] = argv[++i];
        } else if (!strcmp(argv[i], "--corpus") && i + 1 < argc) {
            failed |= check_file(argv[++i], true, skips, nskips);
            nfiles++;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: %s [-v] [--corpus OBJ] [--skip-section NAME]... [ELF...]\n",
                    argv[0]);
            return 2;
        } else {
            failed |= check_file(argv[i], false, skips, nskips);
            nfiles++;
        }
    }
    if (nfiles == 0) {
        failed |= check_file(corpus, true, skips, nskips);
        if (access(DECODE_KERNEL, R_OK) == 0)
            failed |= check_file(DECODE_KERNEL, false, skips, nskips);
        else
            printf("%s: not built yet, checked the corpus only\n", DECODE_KERNEL);
    }
    printf("%s\n", failed ? "FAILED" : "PASSED");
    return failed;
}
