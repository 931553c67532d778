/*
 * cmdline.*: the in-kernel parser accepts the contract's options and refuses anything else by
 * name, leaving the options unchanged (the host unit tests cover it in depth; this proves the
 * kernel build of it).
 */
#include "kernel/cmdline.h"
#include "kernel/string.h"
#include "tests/test.h"

#define ERR_LEN 160

TEST(cmdline, accepts, "every documented option parses", 0)
{
    struct btsx_options o;
    char err[ERR_LEN] = "";
    cmdline_defaults(&o);
    int rc = cmdline_parse("tests=boot.*,apic.?elf_ipi backend=model seed=0x2a verbose "
                           "exit=halt pmi=nmi apic=xapic console=serial model.layout=netburst",
                           &o, err, sizeof(err));
    if (!CHECK(rc == 0, "rejected: %s", err))
        return;
    CHECK_EQ(o.nglobs, 2);
    CHECK(o.backend == BACKEND_MODEL && o.seed == 42 && o.seed_set && o.verbose, "values wrong");
    CHECK(o.exit == EXIT_HALT && o.pmi == PMI_NMI && o.apic == APIC_MODE_XAPIC &&
              o.console == CONSOLE_SERIAL && o.model_layout == MODEL_LAYOUT_NETBURST,
          "enums wrong");
    CHECK(cmdline_selects(&o, "boot.memmap") && cmdline_selects(&o, "apic.self_ipi"),
          "globs do not select");
    CHECK(!cmdline_selects(&o, "apic.timer_rate"), "glob selects too much");
}

TEST(cmdline, rejects, "bad options are named and change nothing", 0)
{
    static const char *const bad[] = {
        "frobnicate",
        "backend=fast",
        "seed=12x",
        "seed=99999999999999999999",
        "seed=1 seed=2",
        "tests=",
        "tests=a,,b",
        "exit=",
        "=1",
        "verbose=2",
        "console=vga",
        "model.layout=p4",
    };
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct btsx_options o, before;
        char err[ERR_LEN] = "";
        cmdline_defaults(&o);
        o.seed = 7;
        before = o;
        int rc = cmdline_parse(bad[i], &o, err, sizeof(err));
        CHECK(rc < 0, "'%s' accepted", bad[i]);
        CHECK(err[0] != '\0', "'%s' rejected without a message", bad[i]);
        CHECK(memcmp(&o, &before, sizeof(o)) == 0, "'%s' changed the options", bad[i]);
        test_info("'%s': %s", bad[i], err);
    }
}
