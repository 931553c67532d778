/*
 * btsx-rand: a random program of tests/randprog.c, rebuilt on the host from its seed and
 * index, disassembled with objdump, with the path it takes marked.
 *
 *   btsx-rand [--seed S] [--index I] [--size N] [--mix all|0xBITS] [--base A]
 *             [--fault A] [--int V] [--syscall NR] [--transfers] [--dump] [--objdump CMD]
 *   btsx-rand --log FILE [--nth K]
 *
 * --log reads the parameters and bytes of a failure report (rp_report_line()'s lines,
 * wherever they sit in the log's lines; the K-th report, the first by default), rebuilds the
 * program from them, says whether the bytes the machine ran are the generator's, and
 * disassembles the reported bytes. Every instruction the generator emitted is on the path
 * (emission follows execution) and is marked '*'; below a branch, '->' lines give each target
 * it goes to and the positions (#) of those transfers in the expected list.
 * --transfers prints the expected list instead; --dump prints the report lines themselves,
 * as the kernel would.
 *
 * Built by the Makefile (build/btsx-rand) from this file and tests/randprog.c with
 * -DBTSX_HOST.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/randprog.h"

#define SIZE_MAX_B   (1u << 20)
#define XFER_CAP     (1u << 20)
#define DEFAULT_BASE 0x10000800ull
#define LINE         1024
#define SHOW_MAX     8 /* transfer positions listed per target */

static uint8_t code[SIZE_MAX_B], reported[SIZE_MAX_B];
static struct rp_transfer xf[XFER_CAP];
static struct rp_insn ins[SIZE_MAX_B];

static void usage(void)
{
    fprintf(stderr, "usage: btsx-rand [--seed S] [--index I] [--size N] [--mix all|0xBITS]"
                    " [--base A] [--fault A] [--int V] [--syscall NR] [--transfers] [--dump]"
                    " [--objdump CMD]\n"
                    "       btsx-rand --log FILE [--nth K] [--transfers]\n");
    exit(2);
}

static uint64_t num(const char *s)
{
    char *end;
    uint64_t v = strtoull(s, &end, 0);
    if (!*s || *end) {
        fprintf(stderr, "btsx-rand: not a number: %s\n", s);
        exit(2);
    }
    return v;
}

/* The value of "key=" in a report line. */
static bool field(const char *line, const char *key, uint64_t *v)
{
    const char *k = strstr(line, key);
    if (!k)
        return false;
    *v = strtoull(k + strlen(key), NULL, 0);
    return true;
}

struct report {
    uint64_t seed, index, base, fault, mix, intn;
    uint64_t size;
    bool syscall; /* the line has syscall=NR (programs that run at CPL 3) */
    uint64_t syscall_nr;
    uint32_t got; /* bytes read */
};

/* Reads the nth report in the log. Returns false if there is none. */
static bool read_log(const char *path, unsigned nth, struct report *r)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(1);
    }
    char line[LINE];
    unsigned seen = 0;
    bool in = false;
    while (fgets(line, sizeof(line), f)) {
        const char *h = strstr(line, "randprog seed=");
        if (h) {
            if (in)
                break;
            if (++seen < nth)
                continue;
            in = true;
            *r = (struct report){0};
            if (!field(h, "seed=", &r->seed) || !field(h, "index=", &r->index) ||
                !field(h, "size=", &r->size) || !field(h, "mix=", &r->mix) ||
                !field(h, "base=", &r->base) || !field(h, "fault=", &r->fault) ||
                !field(h, "int=", &r->intn) || r->size > SIZE_MAX_B) {
                fprintf(stderr, "btsx-rand: bad report line: %s", h);
                exit(1);
            }
            r->syscall = field(h, "syscall=", &r->syscall_nr);
            continue;
        }
        const char *b = strstr(line, "randprog bytes +");
        if (!in || !b)
            continue;
        char *end;
        uint64_t off = strtoull(b + strlen("randprog bytes +"), &end, 16);
        if (*end != ':' || off != r->got) {
            fprintf(stderr, "btsx-rand: bytes line out of order: %s", b);
            exit(1);
        }
        for (const char *h2 = end + 1; *h2 && r->got < r->size;) {
            while (*h2 == ' ')
                h2++;
            unsigned v;
            if (sscanf(h2, "%2x", &v) != 1)
                break;
            reported[r->got++] = (uint8_t)v;
            h2 += 2;
        }
    }
    fclose(f);
    return in;
}

static int by_addr(const void *a, const void *b)
{
    const struct rp_insn *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void disassemble(const struct rp_prog *p, const uint8_t *bytes, const char *objdump)
{
    char path[] = "/tmp/btsx-rand.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, bytes, p->code_len) != (ssize_t)p->code_len) {
        perror("btsx-rand: temporary file");
        exit(1);
    }
    close(fd);
    static struct rp_insn sorted[SIZE_MAX_B];
    memcpy(sorted, p->insn, p->ninsn * sizeof(sorted[0]));
    qsort(sorted, p->ninsn, sizeof(sorted[0]), by_addr);
    char cmd[LINE];
    snprintf(cmd, sizeof(cmd), "%s -D -w -b binary -mi386:x86-64 --adjust-vma=%#" PRIx64 " %s",
             objdump, p->base, path);
    FILE *f = popen(cmd, "r");
    if (!f) {
        perror(objdump);
        exit(1);
    }
    char line[LINE];
    uint32_t k = 0;
    bool padding = false;
    while (fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':'), *end;
        uint64_t a = strtoull(line, &end, 16);
        if (!colon || end != colon || colon[1] != '\t')
            continue;
        while (k < p->ninsn && sorted[k].addr < a)
            k++;
        bool on = k < p->ninsn && sorted[k].addr == a;
        if (!on) { /* runs of int3 padding: one line */
            if (!padding)
                printf("   %" PRIx64 ": (padding, not run)\n", a);
            padding = strstr(line, "int3") != NULL;
            if (!padding)
                printf(" ! %s", line + strspn(line, " "));
            continue;
        }
        padding = false;
        printf(" * %s", line + strspn(line, " "));
        /* The targets this instruction's transfers go to, in order of first use. */
        uint64_t shown[16];
        unsigned nshown = 0;
        for (uint32_t t = 0; t < p->nxfer; t++) {
            if (p->xfer[t].from != a)
                continue;
            bool dup = false;
            for (unsigned s = 0; s < nshown; s++)
                dup |= shown[s] == p->xfer[t].to;
            if (dup || nshown == 16)
                continue;
            shown[nshown++] = p->xfer[t].to;
            printf("          -> ");
            if (p->xfer[t].to == RP_RETURN)
                printf("the caller");
            else
                printf("%" PRIx64, p->xfer[t].to);
            printf(" (%s)", rp_class_name(p->xfer[t].cls));
            unsigned listed = 0;
            for (uint32_t u = t; u < p->nxfer; u++) {
                if (p->xfer[u].from != a || p->xfer[u].to != p->xfer[t].to)
                    continue;
                if (listed++ < SHOW_MAX)
                    printf(" #%u", u);
            }
            if (listed > SHOW_MAX)
                printf(" ... (%u times)", listed);
            printf("\n");
        }
    }
    pclose(f);
    unlink(path);
}

int main(int argc, char **argv)
{
    struct rp_params par = {.size = 1536, .mix = RP_MIX_ALL, .fault_addr = 0};
    uint64_t seed = 0, index = 0, base = DEFAULT_BASE;
    const char *log = NULL, *objdump = "objdump";
    unsigned nth = 1;
    bool transfers = false, dump = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--transfers") == 0) {
            transfers = true;
            continue;
        }
        if (strcmp(a, "--dump") == 0) {
            dump = true;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        if (strcmp(a, "--seed") == 0)
            seed = num(v);
        else if (strcmp(a, "--index") == 0)
            index = num(v);
        else if (strcmp(a, "--size") == 0)
            par.size = (uint32_t)num(v);
        else if (strcmp(a, "--mix") == 0)
            par.mix = strcmp(v, "all") == 0 ? RP_MIX_ALL : (uint32_t)num(v);
        else if (strcmp(a, "--base") == 0)
            base = num(v);
        else if (strcmp(a, "--fault") == 0)
            par.fault_addr = num(v);
        else if (strcmp(a, "--int") == 0)
            par.intn_vector = (uint8_t)num(v);
        else if (strcmp(a, "--syscall") == 0)
            par.syscall = true, par.syscall_nr = (uint32_t)num(v);
        else if (strcmp(a, "--log") == 0)
            log = v;
        else if (strcmp(a, "--nth") == 0)
            nth = (unsigned)num(v);
        else if (strcmp(a, "--objdump") == 0)
            objdump = v;
        else
            usage();
    }
    struct report r = {0};
    if (log) {
        if (!read_log(log, nth, &r)) {
            fprintf(stderr, "btsx-rand: no program report (randprog seed=...) in %s\n", log);
            return 1;
        }
        seed = r.seed, index = r.index, base = r.base;
        par = (struct rp_params){.size = (uint32_t)r.size,
                                 .mix = (uint32_t)r.mix,
                                 .fault_addr = r.fault,
                                 .intn_vector = (uint8_t)r.intn,
                                 .syscall = r.syscall,
                                 .syscall_nr = (uint32_t)r.syscall_nr};
    }
    if (par.size < RP_SIZE_MIN || par.size > SIZE_MAX_B) {
        fprintf(stderr, "btsx-rand: size must be %u..%u\n", RP_SIZE_MIN, SIZE_MAX_B);
        return 2;
    }
    struct rp_prog p = {.code = code,
                        .base = base,
                        .xfer = xf,
                        .xfer_cap = XFER_CAP,
                        .insn = ins,
                        .insn_cap = SIZE_MAX_B};
    int rc = rp_generate(&p, seed, index, &par);
    if (rc) {
        fprintf(stderr, "btsx-rand: rp_generate: error %d\n", rc);
        return 1;
    }
    if (dump) {
        char line[RP_LINE_MAX];
        for (uint32_t n = 0; rp_report_line(&p, n, line); n++)
            printf("%s\n", line);
        return 0;
    }
    printf("randprog seed=%#" PRIx64 " index=%" PRIu64 " size=%u mix=%#x base=%#" PRIx64
           " entry=%#" PRIx64 ": %u instructions, %u transfers\n",
           seed, index, par.size, par.mix, base, p.entry, p.ninsn, p.nxfer);
    const uint8_t *show = code;
    int status = 0;
    if (log) {
        uint32_t first = UINT32_MAX, ndiff = 0;
        for (uint32_t i = 0; i < par.size; i++)
            if (i >= r.got || reported[i] != code[i]) {
                ndiff++;
                if (first == UINT32_MAX)
                    first = i;
            }
        if (!ndiff) {
            printf("reported bytes: identical to the generator's\n");
        } else {
            printf("reported bytes: %u of %u differ from the generator's, the first at +%#x "
                   "(reported %02x, generated %02x); the reported bytes follow\n",
                   ndiff, par.size, first, first < r.got ? reported[first] : 0, code[first]);
            if (r.got < par.size)
                memset(reported + r.got, 0xCC, par.size - r.got);
            show = reported;
            status = 3;
        }
    }
    if (transfers) {
        for (uint32_t t = 0; t < p.nxfer; t++) {
            printf("#%u %" PRIx64 " -> ", t, p.xfer[t].from);
            if (p.xfer[t].to == RP_RETURN)
                printf("the caller");
            else
                printf("%" PRIx64, p.xfer[t].to);
            printf(" %s\n", rp_class_name(p.xfer[t].cls));
        }
        return status;
    }
    disassemble(&p, show, objdump);
    return status;
}
