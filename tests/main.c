/*
 * kmain: bring the machine up in dependency order (kernel, then the DS layer), then hand over
 * to the test runner. It lives in tests/, the top of the dependency chain, because it is the
 * one place that knows every layer.
 */
#include "ds/bts.h"
#include "sched/sched.h"
#include "kernel/apic.h"
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/fwcfg.h"
#include "kernel/gdt.h"
#include "kernel/mem.h"
#include "kernel/paging.h"
#include "kernel/panic.h"
#include "kernel/shutdown.h"
#include "kernel/string.h"
#include "tests/test.h"

#define CMDLINE_ERR_MAX 160

static struct btsx_options options;
static char cmdline[BOOTINFO_CMDLINE_MAX];

static void attach_screen(void)
{
    if (boot_info.screen == SCREEN_KIND_TEXT) {
        console_attach_vga(boot_info.fb.base, boot_info.fb.width, boot_info.fb.height);
    } else if (boot_info.screen == SCREEN_KIND_RGB) {
        int err = console_attach_fb(&boot_info.fb);
        if (err)
            kprintf("# screen: framebuffer %ux%u %u bpp unusable: %s\n", boot_info.fb.width,
                    boot_info.fb.height, boot_info.fb.bpp, err_str(err));
    }
}

/* The loader's command line, plus QEMU's fw_cfg file when the runner passed one. */
static void assemble_cmdline(void)
{
    strlcpy(cmdline, boot_info.cmdline, sizeof(cmdline));
    if (!cpu_is_qemu())
        return;
    char extra[BOOTINFO_CMDLINE_MAX];
    if (fwcfg_read_file(FWCFG_CMDLINE_FILE, extra, sizeof(extra)) > 0) {
        size_t n = strlen(cmdline);
        if (n && n + 1 < sizeof(cmdline))
            cmdline[n++] = ' ';
        strlcpy(cmdline + n, extra, sizeof(cmdline) - n);
    }
}

void kmain(uint32_t magic, uint64_t info);
void kmain(uint32_t magic, uint64_t info)
{
    console_init();
    cpu_init();
    gdt_init();
    idt_init();

    const char *why = NULL;
    if (bootinfo_parse(magic, info, &why) != 0)
        panic("boot: %s (magic %#x, info %#lx)", why, magic, info);

    cpu_enable_protections();
    mem_init();
    paging_init();
    heap_init();

    assemble_cmdline();
    cmdline_defaults(&options);
    char err[CMDLINE_ERR_MAX] = "";
    bool bad = cmdline_parse(cmdline, &options, err, sizeof(err)) != 0;
    if (options.console == CONSOLE_ALL)
        attach_screen();

    apic_init(options.apic);
    ds_init(&options);
    sched_init();
    shutdown_set_method(options.exit);
    test_run_all(&options, cmdline, bad ? err : NULL);
}
