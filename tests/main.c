/*
 * kmain: bring the machine up in dependency order (kernel, then the DS layer), then hand over
 * to the test runner. It lives in tests/, the top of the dependency chain, because it is the
 * one place that knows every layer.
 */
#include "ds/bts.h"
#include "sched/sched.h"
#include "sched/syscall.h"
#include "kernel/acpi.h"
#include "kernel/apic.h"
#include "kernel/bootinfo.h"
#include "kernel/cmdline.h"
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/fwcfg.h"
#include "kernel/gdt.h"
#include "kernel/hpet.h"
#include "kernel/ioapic.h"
#include "kernel/mem.h"
#include "kernel/nmiwd.h"
#include "kernel/paging.h"
#include "kernel/panic.h"
#include "kernel/printf.h"
#include "kernel/shutdown.h"
#include "kernel/smp.h"
#include "kernel/stackprot_report.h"
#include "kernel/string.h"
#include "kernel/trap.h"
#ifdef BTSX_UBSAN
#include "kernel/ubsan_report.h"
#endif
#include "tests/test.h"

#define CMDLINE_ERR_MAX 160

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

/* The loader's command line, plus QEMU's fw_cfg file when the runner passed one. Returns
 * false if the result did not fit: a cut line must be refused, not half-obeyed. */
static bool assemble_cmdline(void)
{
    if (strlcpy(cmdline, boot_info.cmdline, sizeof(cmdline)) >= sizeof(cmdline) ||
        boot_info.cmdline_truncated)
        return false;
    if (!cpu_is_qemu())
        return true;
    char extra[BOOTINFO_CMDLINE_MAX];
    int n = fwcfg_read_file(FWCFG_CMDLINE_FILE, extra, sizeof(extra));
    if (n <= 0)
        return true;
    if ((size_t)n >= sizeof(extra) - 1)
        return false;
    size_t len = strlen(cmdline);
    if (len && len + 1 < sizeof(cmdline))
        cmdline[len++] = ' ';
    return strlcpy(cmdline + len, extra, sizeof(cmdline) - len) < sizeof(cmdline) - len;
}

void kmain(uint32_t magic, uint64_t info);
void kmain(uint32_t magic, uint64_t info)
{
    console_init();
    stackprot_report_init();
#ifdef BTSX_UBSAN
    ubsan_report_init(test_fail); /* the UBSan kernel (make ubsan) */
#endif
    cpu_init();
    gdt_init();
    smp_init_bsp();
    idt_init();

    const char *why = NULL;
    if (bootinfo_parse(magic, info, &why) != 0)
        panic("boot: %s (magic %#x, info %#lx)", why, magic, info);

    cpu_enable_protections();
    mem_init();
    paging_init();
    heap_init();

    /* Each layer's options take effect as the layer starts below. A refused line changes
     * none of them: the run then only reports why. */
    char err[CMDLINE_ERR_MAX] = "";
    bool bad = true;
    if (assemble_cmdline())
        bad = cmdline_parse(cmdline, err, sizeof(err)) != 0;
    else
        ksnprintf(err, sizeof(err), "command line longer than %u characters", CMDLINE_MAX_LEN);
    if (console_screen_wanted())
        attach_screen();

    acpi_init();
    ioapic_init();
    hpet_init();
    apic_init();
    nmi_watchdog_init();
    smp_init();
    ds_init();
    trap_probe_syscall_tf(); /* before syscall_init() sets up SYSCALL for good */
    sched_init();
    sched_set_ds_hook(ds_switch_traces);
    sched_supervise_init();
    syscall_init();
    sched_init_aps(syscall_init); /* SYSCALL's MSRs are each CPU's */
    test_run_all(cmdline, bad ? err : NULL);
}
