/* Host tests of kernel/qr.c, the QR code encoder.
 *
 * Two outside oracles: Debian's qrencode (libqrencode's command-line tool) must produce the same
 * module matrix, bit for bit, for generated inputs at every level and version (qrencode cannot
 * be told a mask, so the comparison also checks the mask choice, hence the penalty rules); and
 * zbarimg (zbar-tools) must decode symbols rendered here, with every mask forced in turn, back
 * to the input. A missing tool fails the test: `make deps` installs both.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#define UNIT_TIMEOUT_S 300

#include "kernel/errno.h"
#include "kernel/qr.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The biggest input any case here encodes: version 40 at level L. */
#define DATA_MAX 2953

static struct qr_code qr;

/* A fixed-seed generator (xorshift64), so every run tests the same inputs on every host. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 32);
}

static unsigned rng_below(unsigned n)
{
    return n ? rng() % n : 0;
}

static void random_bytes(uint8_t *buf, size_t len)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)rng();
}

static const char level_letter[QR_LEVELS] = {'L', 'M', 'Q', 'H'};

/* A temporary file holding data; the caller unlinks it. */
static void write_temp(char *path, size_t path_len, const void *data, size_t len)
{
    int fd;

    snprintf(path, path_len, "%s/btsx-qr-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, data, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
}

/* Runs a command with its standard output in out (NUL-terminated, *len bytes); returns its
 * exit status, or -1 if it did not exit. The shell exits 127 for a missing tool. */
static int run(const char *cmd, char *out, size_t out_len, size_t *len)
{
    FILE *p = popen(cmd, "r");
    int status;

    if (!p)
        fail_msg("popen(%s) failed", cmd);
    *len = fread(out, 1, out_len - 1, p);
    out[*len] = '\0';
    status = pclose(p);
    return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void check_status(const char *cmd, int status)
{
    if (status == 127)
        fail_msg("'%s': not found; `make deps` installs it", cmd);
    if (status != 0)
        fail_msg("'%s' failed: exit status %d", cmd, status);
}

/* qrencode's matrix for data (8-bit mode, no margin, "##" per dark module and two spaces per
 * light one, a line per row) into m[y * size + x]; returns the size. version 0 lets qrencode
 * choose; otherwise it is the minimum version. */
static unsigned qrencode(const uint8_t *data, size_t len, enum qr_level level, unsigned version,
                         bool *m)
{
    static char out[2 * QR_SIZE_MAX * (2 * QR_SIZE_MAX + 1) + 2];
    char path[256], cmd[512], *line;
    unsigned size = 0;
    size_t n;
    int status;

    write_temp(path, sizeof(path), data, len);
    snprintf(cmd, sizeof(cmd), "qrencode -8 -l %c -v %u -t ASCII -m 0 -r %s", level_letter[level],
             version, path);
    status = run(cmd, out, sizeof(out), &n);
    unlink(path);
    check_status(cmd, status);

    line = out;
    for (unsigned y = 0; *line; y++) {
        char *nl = strchr(line, '\n');
        size_t w = nl ? (size_t)(nl - line) : strlen(line);

        if (y == 0)
            size = (unsigned)w / 2;
        if (w != 2 * size || size > QR_SIZE_MAX || y >= size)
            fail_msg("qrencode output: row %u is %zu characters (size %u)", y, w, size);
        for (unsigned x = 0; x < size; x++) {
            const char *c = line + 2 * x;

            if (!((c[0] == '#' && c[1] == '#') || (c[0] == ' ' && c[1] == ' ')))
                fail_msg("qrencode output: row %u column %u is '%.2s'", y, x, c);
            m[y * size + x] = c[0] == '#';
        }
        line += w + (nl ? 1 : 0);
    }
    if (!size)
        fail_msg("qrencode printed nothing for '%s'", cmd);
    return size;
}

static unsigned masks_chosen; /* bit m: qrencode and the encoder agreed on mask m somewhere */
/* False with --no-oracles (the sanitized passes): the encoder still runs over every input, but
 * qrencode and zbarimg, whose processes are most of the time, run in the plain pass only. */
static bool oracles = true;

/* Encodes data with the encoder and with qrencode and requires the same matrix. */
static void compare_with_qrencode(const uint8_t *data, size_t len, enum qr_level level,
                                  unsigned version)
{
    static bool m[QR_SIZE_MAX * QR_SIZE_MAX];
    unsigned diffs = 0, fx = 0, fy = 0;

    assert_int_equal(qr_encode(&qr, data, len, level, version, QR_MASK_AUTO), 0);
    if (!oracles) {
        masks_chosen |= 1u << qr.mask;
        return;
    }
    unsigned size = qrencode(data, len, level, version, m);
    if (qr.size != size)
        fail_msg("len %zu level %c version %u: size %u, qrencode %u", len, level_letter[level],
                 version, qr.size, size);
    for (unsigned y = 0; y < size; y++)
        for (unsigned x = 0; x < size; x++)
            if (qr_module(&qr, (int)x, (int)y) != m[y * size + x] && !diffs++) {
                fx = x;
                fy = y;
            }
    if (diffs)
        fail_msg("len %zu level %c version %u (mask %u): %u modules differ from qrencode, first "
                 "at x %u y %u",
                 len, level_letter[level], qr.version, qr.mask, diffs, fx, fy);
    masks_chosen |= 1u << qr.mask;
}

/* Every version at every level, one input of random length and one filling the symbol. */
static void test_qrencode_every_version(void **state)
{
    static uint8_t data[DATA_MAX];

    (void)state;
    for (unsigned v = QR_VERSION_MIN; v <= QR_VERSION_MAX; v++)
        for (int l = QR_LEVEL_L; l < QR_LEVELS; l++) {
            size_t cap = qr_capacity(v, (enum qr_level)l);
            size_t len = 1 + rng_below((unsigned)cap);

            random_bytes(data, len);
            compare_with_qrencode(data, len, (enum qr_level)l, v);
            random_bytes(data, cap);
            compare_with_qrencode(data, cap, (enum qr_level)l, v);
        }
}

/* More inputs on the small and middle versions, where a screen's symbol will be, and where
 * the masks' penalties are closest. */
static void test_qrencode_small_versions(void **state)
{
    static uint8_t data[DATA_MAX];

    (void)state;
    for (int i = 0; i < 400; i++) {
        unsigned v = 1 + rng_below(25);
        enum qr_level l = (enum qr_level)rng_below(QR_LEVELS);
        size_t len = 1 + rng_below((unsigned)qr_capacity(v, l));

        random_bytes(data, len);
        /* Some inputs of one repeated byte: long runs stress the penalty rules. */
        if (i % 8 == 0)
            memset(data, data[0], len);
        compare_with_qrencode(data, len, l, v);
    }
}

/* Inputs of all zero or all one bits leave the data region nearly uniform (the error correction
 * of zero codewords is zero), so each mask's dark share is far from half and differs between
 * masks: rule 4 decides, and its rounding and steps must match. */
static void test_qrencode_skewed(void **state)
{
    static uint8_t data[DATA_MAX];

    (void)state;
    for (unsigned v = QR_VERSION_MIN; v <= QR_VERSION_MAX; v++)
        for (int l = QR_LEVEL_L; l < QR_LEVELS; l++) {
            size_t cap = qr_capacity(v, (enum qr_level)l);
            size_t len = cap - rng_below(cap < 4 ? (unsigned)cap : 4);

            memset(data, (v + (unsigned)l) % 2 ? 0xff : 0x00, len);
            compare_with_qrencode(data, len, (enum qr_level)l, v);
        }
}

/* Every byte value alone in a version-1 symbol, the level turning with the byte: short inputs
 * are where two masks most often tie (test_qr_rules counts them), so the tie rule is compared
 * too. */
static void test_qrencode_one_byte(void **state)
{
    (void)state;
    for (unsigned b = 0; b < 256; b++) {
        uint8_t byte = (uint8_t)b;

        compare_with_qrencode(&byte, 1, (enum qr_level)(b % QR_LEVELS), 1);
    }
}

/* The smallest version that fits, chosen by both. */
static void test_qrencode_auto_version(void **state)
{
    static uint8_t data[DATA_MAX];

    (void)state;
    for (int i = 0; i < 60; i++) {
        enum qr_level l = (enum qr_level)rng_below(QR_LEVELS);
        size_t len = 1 + rng_below((unsigned)qr_capacity(QR_VERSION_MAX, l));

        random_bytes(data, len);
        compare_with_qrencode(data, len, l, QR_VERSION_AUTO);
        assert_true(qr_capacity(qr.version, l) >= len);
        if (qr.version > QR_VERSION_MIN)
            assert_true(qr_capacity(qr.version - 1, l) < len);
    }
}

/* Runs last of the qrencode tests: the comparisons must have covered all eight masks, or a
 * wrong formula of an unchosen mask could hide. */
static void test_qrencode_covered_every_mask(void **state)
{
    (void)state;
    if (masks_chosen != (1u << QR_MASKS) - 1)
        fail_msg("the qrencode comparisons chose only masks 0x%02x", masks_chosen);
}

/* The symbol as a PBM image: 4 modules of quiet zone (clause "Quiet zone"), scale pixels per
 * module. */
static void write_pbm(const char *path, unsigned scale)
{
    const int quiet = 4;
    int n = (int)qr.size + 2 * quiet;
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fprintf(f, "P1\n%d %d\n", n * (int)scale, n * (int)scale);
    for (int y = 0; y < n * (int)scale; y++) {
        for (int x = 0; x < n * (int)scale; x++)
            fputs(qr_module(&qr, x / (int)scale - quiet, y / (int)scale - quiet) ? "1" : "0", f);
        fputc('\n', f);
    }
    assert_int_equal(fclose(f), 0);
}

/* zbarimg must read the rendered symbol back as exactly text. */
static void decode_with_zbar(const char *text)
{
    static char out[4 * DATA_MAX];
    char path[256], cmd[512];
    size_t n;
    int fd, status;

    snprintf(path, sizeof(path), "%s/btsx-qr-XXXXXX.pbm",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    fd = mkstemps(path, 4);
    assert_true(fd >= 0);
    close(fd);
    write_pbm(path, 3);
    snprintf(cmd, sizeof(cmd), "zbarimg -q --raw %s 2>/dev/null", path);
    status = run(cmd, out, sizeof(out), &n);
    unlink(path);
    /* zbarimg exits 4 when it finds no symbol. */
    if (status == 4)
        fail_msg("version %u level %c mask %u: zbarimg found no symbol", qr.version,
                 level_letter[qr.level], qr.mask);
    check_status(cmd, status);
    /* --raw ends the text with a newline. */
    if (n && out[n - 1] == '\n')
        out[--n] = '\0';
    if (strcmp(out, text) != 0)
        fail_msg("version %u level %c mask %u: zbarimg read '%s', expected '%s'", qr.version,
                 level_letter[qr.level], qr.mask, out, text);
}

/* Printable text (zbarimg prints what it decodes as text), the empty one too, each mask forced,
 * the levels in turn. */
static void test_zbar_decodes(void **state)
{
    static char text[1100];
    static const size_t lengths[] = {0, 1, 20, 77, 300, 1024};

    (void)state;
    for (size_t i = 0; i < NELEM(lengths); i++) {
        size_t len = lengths[i];

        for (size_t j = 0; j < len; j++)
            text[j] = (char)(' ' + 1 + rng_below(94)); /* '!'..'~' */
        text[len] = '\0';
        for (unsigned mask = 0; mask < QR_MASKS; mask++) {
            enum qr_level l = (enum qr_level)((mask + i) % QR_LEVELS);

            assert_int_equal(qr_encode(&qr, text, len, l, QR_VERSION_AUTO, (int)mask), 0);
            assert_int_equal(qr.mask, mask);
            if (oracles)
                decode_with_zbar(text);
        }
    }
}

/* Capacities from the standard's table of data capacity (byte mode), at the corners and one
 * version that switches to the 16-bit character count. */
static void test_capacity(void **state)
{
    (void)state;
    assert_int_equal(qr_capacity(1, QR_LEVEL_L), 17);
    assert_int_equal(qr_capacity(1, QR_LEVEL_M), 14);
    assert_int_equal(qr_capacity(1, QR_LEVEL_Q), 11);
    assert_int_equal(qr_capacity(1, QR_LEVEL_H), 7);
    assert_int_equal(qr_capacity(10, QR_LEVEL_L), 271);
    assert_int_equal(qr_capacity(40, QR_LEVEL_L), 2953);
    assert_int_equal(qr_capacity(40, QR_LEVEL_H), 1273);
    assert_int_equal(qr_capacity(0, QR_LEVEL_L), 0);
    assert_int_equal(qr_capacity(41, QR_LEVEL_L), 0);
    assert_int_equal(qr_capacity(1, QR_LEVELS), 0);
}

static void test_fit_level(void **state)
{
    (void)state;
    assert_int_equal(qr_fit_level(7, 1), QR_LEVEL_H);
    assert_int_equal(qr_fit_level(8, 1), QR_LEVEL_Q);
    assert_int_equal(qr_fit_level(14, 1), QR_LEVEL_M);
    assert_int_equal(qr_fit_level(17, 1), QR_LEVEL_L);
    assert_int_equal(qr_fit_level(18, 1), E_TOOLONG);
    assert_int_equal(qr_fit_level(1273, 40), QR_LEVEL_H);
    assert_int_equal(qr_fit_level(2954, 40), E_TOOLONG);
    assert_int_equal(qr_fit_level(1, 0), E_INVAL);
    assert_int_equal(qr_fit_level(1, 41), E_INVAL);
    /* Whatever level it picks encodes within the version. */
    for (unsigned v = 1; v <= QR_VERSION_MAX; v += 13) {
        size_t len = qr_capacity(v, QR_LEVEL_M);
        int l = qr_fit_level(len, v);
        static uint8_t data[DATA_MAX];

        assert_true(l >= QR_LEVEL_M);
        assert_int_equal(qr_encode(&qr, data, len, (enum qr_level)l, QR_VERSION_AUTO, 0), 0);
        assert_true(qr.version <= v);
    }
}

static void test_errors(void **state)
{
    static uint8_t data[DATA_MAX + 1];

    (void)state;
    assert_int_equal(qr_encode(&qr, data, 18, QR_LEVEL_L, 1, QR_MASK_AUTO), E_TOOLONG);
    assert_int_equal(qr.version, 0);
    assert_false(qr_module(&qr, 0, 0)); /* no symbol: all light */
    assert_int_equal(qr_encode(&qr, data, 2954, QR_LEVEL_L, QR_VERSION_AUTO, 0), E_TOOLONG);
    assert_int_equal(qr_encode(&qr, data, 1, QR_LEVELS, 1, 0), E_INVAL);
    assert_int_equal(qr_encode(&qr, data, 1, QR_LEVEL_L, 41, 0), E_INVAL);
    assert_int_equal(qr_encode(&qr, data, 1, QR_LEVEL_L, 1, 8), E_INVAL);
    assert_int_equal(qr_encode(&qr, data, 1, QR_LEVEL_L, 1, -2), E_INVAL);
    assert_int_equal(qr_encode(&qr, NULL, 1, QR_LEVEL_L, 1, 0), E_INVAL);

    /* Outside the symbol is the quiet zone; the finder's corner is dark. */
    assert_int_equal(qr_encode(&qr, data, 2953, QR_LEVEL_L, QR_VERSION_AUTO, 0), 0);
    assert_int_equal(qr.version, 40);
    assert_int_equal(qr.size, QR_SIZE_MAX);
    assert_true(qr_module(&qr, 0, 0));
    assert_true(qr_module(&qr, QR_SIZE_MAX - 1, 0));
    assert_false(qr_module(&qr, -1, 0));
    assert_false(qr_module(&qr, 0, QR_SIZE_MAX));
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capacity),
        cmocka_unit_test(test_fit_level),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_qrencode_every_version),
        cmocka_unit_test(test_qrencode_small_versions),
        cmocka_unit_test(test_qrencode_skewed),
        cmocka_unit_test(test_qrencode_one_byte),
        cmocka_unit_test(test_qrencode_auto_version),
        cmocka_unit_test(test_qrencode_covered_every_mask),
        cmocka_unit_test(test_zbar_decodes),
    };

    if (argc > 1 && strcmp(argv[1], "--no-oracles") == 0) {
        oracles = false;
        argc--;
        argv++;
    }
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    alarm(UNIT_TIMEOUT_S);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
