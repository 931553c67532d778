#include "kernel/shutdown.h"

#include "kernel/cmdline.h"
#include "kernel/cpu.h"
#include "kernel/io.h"
#include "kernel/serial.h"

#define KBC_STATUS_PORT 0x64
#define KBC_CMD_RESET   0xFE
#define KBC_INPUT_FULL  0x02

static enum exit_method method = EXIT_AUTO;
OPTION_CHOICE("exit", method, {"debugexit", EXIT_DEBUGEXIT}, {"halt", EXIT_HALT},
              {"reboot", EXIT_REBOOT});

static void reboot(void)
{
    /* Pulse the reset line through the keyboard controller; a triple fault is the fallback. */
    for (int i = 0; i < 100000 && (inb(KBC_STATUS_PORT) & KBC_INPUT_FULL); i++)
        ;
    outb(KBC_STATUS_PORT, KBC_CMD_RESET);
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) empty = {0, 0};
    __asm__ volatile("lidt %0; int3" : : "m"(empty));
}

void machine_exit(enum exit_code code)
{
    irq_disable();
    serial_flush();
    enum exit_method m = method;
    if (m == EXIT_AUTO)
        m = cpu_is_qemu() ? EXIT_DEBUGEXIT : EXIT_HALT;
    if (m == EXIT_DEBUGEXIT)
        outl(ISA_DEBUG_EXIT_PORT, code);
    if (m == EXIT_REBOOT)
        reboot();
    if (cpu_is_bochs()) {
        /* Bochs's shutdown port ends the emulator when it sees this string. */
        for (const char *s = "Shutdown"; *s; s++)
            outb(BOCHS_SHUTDOWN_PORT, (uint8_t)*s);
    }
    for (;;)
        cpu_halt(); /* the verdict stays on the screen */
}
