/* Host tests of kernel/string.c, built with -DBTSX_STRING_TEST so its functions are named
 * kstr_* and run beside libc (see kernel/string.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <cmocka.h>

#define UNIT_TIMEOUT_S 60

/* Last: its renaming macros must not reach the system headers above. */
#include "kernel/string.h"

#define BUF 64

static void fill_pattern(unsigned char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 7 + 1);
}

static void test_memcpy_memset(void **state)
{
    unsigned char src[BUF], dst[BUF];

    (void)state;
    fill_pattern(src, BUF);
    kstr_memset(dst, 0xee, BUF);
    for (size_t i = 0; i < BUF; i++)
        assert_int_equal(dst[i], 0xee);
    assert_ptr_equal(kstr_memcpy(dst + 3, src, 10), dst + 3);
    assert_int_equal(dst[2], 0xee);
    assert_memory_equal(dst + 3, src, 10);
    assert_int_equal(dst[13], 0xee);
    /* memset takes an int and stores its low byte. */
    assert_ptr_equal(kstr_memset(dst, 0x1ab, 4), dst);
    assert_int_equal(dst[0], 0xab);
    assert_int_equal(dst[3], 0xab);
    assert_int_equal(dst[4], src[1]); /* from the memcpy above */
    kstr_memcpy(dst, src, 0);
    assert_int_equal(dst[0], 0xab);
}

/* Every alignment of source and destination and every length around the word size: the
 * word-at-a-time paths and the byte tails agree with a byte-by-byte reference, and nothing
 * outside [dst, dst + n) changes. */
static void test_memcpy_memset_alignments(void **state)
{
    _Alignas(8) unsigned char src[BUF], dst[BUF], ref[BUF];

    (void)state;
    fill_pattern(src, BUF);
    for (size_t so = 0; so < 8; so++)
        for (size_t doff = 0; doff < 8; doff++)
            for (size_t n = 0; n <= 40; n++) {
                kstr_memset(dst, 0xee, BUF);
                for (size_t i = 0; i < BUF; i++)
                    ref[i] = i >= doff && i < doff + n ? src[so + i - doff] : 0xee;
                kstr_memcpy(dst + doff, src + so, n);
                assert_memory_equal(dst, ref, BUF);
                for (size_t i = 0; i < BUF; i++)
                    ref[i] = i >= doff && i < doff + n ? 0x5a : 0xee;
                kstr_memset(dst, 0xee, BUF);
                kstr_memset(dst + doff, 0x15a, n);
                assert_memory_equal(dst, ref, BUF);
            }
}

static void test_memmove_overlap(void **state)
{
    unsigned char buf[BUF], ref[BUF];

    (void)state;
    /* Forward overlap: dst after src. */
    fill_pattern(buf, BUF);
    fill_pattern(ref, BUF);
    assert_ptr_equal(kstr_memmove(buf + 5, buf, 20), buf + 5);
    assert_memory_equal(buf + 5, ref, 20);
    assert_memory_equal(buf, ref, 5);
    /* Backward overlap: dst before src. */
    fill_pattern(buf, BUF);
    kstr_memmove(buf, buf + 5, 20);
    assert_memory_equal(buf, ref + 5, 20);
    assert_memory_equal(buf + 20, ref + 20, BUF - 20);
    /* Same place. */
    kstr_memmove(buf, buf, BUF);
    assert_memory_equal(buf + 20, ref + 20, BUF - 20);
}

static void test_memcmp(void **state)
{
    (void)state;
    assert_int_equal(kstr_memcmp("abc", "abc", 3), 0);
    assert_true(kstr_memcmp("abc", "abd", 3) < 0);
    assert_true(kstr_memcmp("abd", "abc", 3) > 0);
    assert_int_equal(kstr_memcmp("abX", "abY", 2), 0);
    assert_int_equal(kstr_memcmp("a", "b", 0), 0);
    /* Bytes compare as unsigned: 0x80 is greater than 0x7f. */
    assert_true(kstr_memcmp("\x80", "\x7f", 1) > 0);
}

static void test_strlen_strnlen(void **state)
{
    const char unterminated[4] = {'a', 'b', 'c', 'd'};

    (void)state;
    assert_int_equal(kstr_strlen(""), 0);
    assert_int_equal(kstr_strlen("hello"), 5);
    assert_int_equal(kstr_strnlen("hello", 3), 3);
    assert_int_equal(kstr_strnlen("hello", 10), 5);
    assert_int_equal(kstr_strnlen("hello", 0), 0);
    assert_int_equal(kstr_strnlen(unterminated, 4), 4);
}

static void test_strcmp_strncmp(void **state)
{
    (void)state;
    assert_int_equal(kstr_strcmp("", ""), 0);
    assert_int_equal(kstr_strcmp("abc", "abc"), 0);
    assert_true(kstr_strcmp("abc", "abd") < 0);
    assert_true(kstr_strcmp("abc", "ab") > 0);
    assert_true(kstr_strcmp("ab", "abc") < 0);
    assert_true(kstr_strcmp("\xc3\xa9", "z") > 0); /* UTF-8 after ASCII */
    assert_int_equal(kstr_strncmp("abcX", "abcY", 3), 0);
    assert_true(kstr_strncmp("abcX", "abcY", 4) < 0);
    assert_int_equal(kstr_strncmp("a", "b", 0), 0);
    assert_int_equal(kstr_strncmp("ab", "ab", 10), 0); /* stops at the NUL */
    assert_true(kstr_strncmp("ab", "abc", 10) < 0);
}

static void test_strchr(void **state)
{
    const char *s = "boot.memmap";

    (void)state;
    assert_ptr_equal(kstr_strchr(s, '.'), s + 4);
    assert_ptr_equal(kstr_strchr(s, 'b'), s);
    assert_ptr_equal(kstr_strchr(s, 'p'), s + 10);
    assert_null(kstr_strchr(s, 'z'));
    assert_ptr_equal(kstr_strchr(s, '\0'), s + 11);
}

static void test_strstr(void **state)
{
    const char *s = "ubsan: t.c:12: bounds";

    (void)state;
    assert_ptr_equal(kstr_strstr(s, "t.c:12"), s + 7);
    assert_ptr_equal(kstr_strstr(s, "ubsan"), s);
    assert_ptr_equal(kstr_strstr(s, "bounds"), s + 15);
    assert_ptr_equal(kstr_strstr(s, ""), s);
    assert_null(kstr_strstr(s, "boundsX"));
    assert_null(kstr_strstr(s, "t.c:13"));
    assert_null(kstr_strstr("", "a"));
    const char *t = "aab"; /* a partial match at the start must not hide the one after it */
    assert_ptr_equal(kstr_strstr(t, "ab"), t + 1);
}

static void test_strlcpy(void **state)
{
    char buf[8];

    (void)state;
    kstr_memset(buf, 'Z', sizeof(buf));
    assert_int_equal(kstr_strlcpy(buf, "abc", sizeof(buf)), 3);
    assert_string_equal(buf, "abc");
    assert_int_equal(kstr_strlcpy(buf, "abcdefghijk", sizeof(buf)), 11);
    assert_string_equal(buf, "abcdefg");
    assert_int_equal(kstr_strlcpy(buf, "abcdefg", sizeof(buf)), 7);
    assert_string_equal(buf, "abcdefg");
    kstr_memset(buf, 'Z', sizeof(buf));
    assert_int_equal(kstr_strlcpy(buf, "xyz", 1), 3);
    assert_int_equal(buf[0], '\0');
    assert_int_equal(buf[1], 'Z');
    assert_int_equal(kstr_strlcpy(buf, "xyz", 0), 3);
    assert_int_equal(buf[0], '\0');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memcpy_memset),   cmocka_unit_test(test_memcpy_memset_alignments),
        cmocka_unit_test(test_memmove_overlap), cmocka_unit_test(test_memcmp),
        cmocka_unit_test(test_strlen_strnlen),  cmocka_unit_test(test_strcmp_strncmp),
        cmocka_unit_test(test_strchr),          cmocka_unit_test(test_strstr),
        cmocka_unit_test(test_strlcpy),
    };
    /* A runaway loop in the code under test must fail the run, not hang `make unit`. */
    alarm(UNIT_TIMEOUT_S);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
