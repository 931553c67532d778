/* libFuzzer target: the kernel command-line parser, kernel/cmdline.c.
 *
 * The input is the line (up to its first NUL), then one byte for the error buffer's size.
 * Invariants (kernel/cmdline.h): the result is 0 or one of the four CMDLINE_E* codes; on error
 * no option's variable changes and the message is a terminated string inside the buffer; a
 * line over CMDLINE_MAX_LEN fails with CMDLINE_ETOOLONG; a line that was accepted is accepted
 * again and stores the same values (parsing is a function of the line).
 */
#include <stdbool.h>

#include "kernel/cmdline.h"
#include "tests/fuzz/fuzz.h"

/* One option of each kind, two lists with their own limits: the shapes the kernel declares. */
enum pick { PICK_A, PICK_B, PICK_C };
static struct {
    enum pick pick;
    bool flag;
    uint64_t num;
    bool num_set;
    char list[4][8];
    unsigned nlist;
    char words[2][3];
    unsigned nwords;
} v;

OPTION_CHOICE("pick", v.pick, {"a", PICK_A}, {"bee", PICK_B}, {"c.d", PICK_C});
OPTION_FLAG("flag", v.flag);
OPTION_U64("num", v.num, v.num_set);
OPTION_LIST("list", "ITEM[,ITEM...]", "item", v.list, v.nlist);
OPTION_LIST("w.words", "W[,W...]", "word", v.words, v.nwords);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = {data, size};
    char *line = fz_string(&in, 4 * CMDLINE_MAX_LEN);
    size_t errlen = fz_u8(&in) % 80;
    char *err = errlen ? malloc(errlen) : NULL;
    size_t len = strlen(line);

    memset(&v, 0x5a, sizeof(v));
    if (err)
        memset(err, 'X', errlen);
    __typeof__(v) before = v;

    int rc = cmdline_parse(line, err, errlen);
    fz_check(rc == 0 || rc == CMDLINE_EUNKNOWN || rc == CMDLINE_EVALUE || rc == CMDLINE_EDUP ||
                 rc == CMDLINE_ETOOLONG,
             "cmdline_parse returned %d", rc);
    if (len > CMDLINE_MAX_LEN)
        fz_check(rc == CMDLINE_ETOOLONG, "a %zu-byte line gave %d", len, rc);
    if (rc) {
        fz_check(!memcmp(&v, &before, sizeof(v)), "a rejected line (%d) changed a variable", rc);
        if (err) {
            fz_check(memchr(err, '\0', errlen), "the message is not terminated in the buffer");
            fz_check(errlen == 1 || err[0], "a rejected line with an empty message");
        }
    } else {
        __typeof__(v) after = v;
        memset(&v, 0x5a, sizeof(v));
        fz_check(cmdline_parse(line, NULL, 0) == 0, "an accepted line was rejected the 2nd time");
        fz_check(!memcmp(&v, &after, sizeof(v)), "the same line stored different values");
        if (v.nlist != before.nlist)
            fz_check(v.nlist <= 4, "%u list items stored in 4 slots", v.nlist);
        if (v.nwords != before.nwords)
            fz_check(v.nwords <= 2, "%u words stored in 2 slots", v.nwords);
        for (unsigned i = 0; i < 4 && v.nlist <= 4 && i < v.nlist; i++)
            fz_check(memchr(v.list[i], '\0', sizeof(v.list[i])), "list item %u unterminated", i);
    }
    free(err);
    free(line);
    return 0;
}
