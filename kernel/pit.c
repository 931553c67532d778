#include "kernel/pit.h"

#include "kernel/io.h"

#define PIT_CH2_DATA       0x42
#define PIT_CMD            0x43
#define PIT_GATE_PORT      0x61 /* bit 0: channel-2 gate, bit 1: speaker, bit 5: OUT2 */
#define GATE_ON            0x01
#define SPEAKER_ON         0x02
#define OUT2               0x20
#define CMD_CH2_LOHI_MODE0 0xB0 /* channel 2, lobyte/hibyte, mode 0 (interrupt on count) */
#define MAX_COUNT          0xFFFF

void pit_oneshot_start(unsigned ms)
{
    uint64_t count = PIT_HZ * ms / 1000;
    if (count > MAX_COUNT)
        count = MAX_COUNT; /* about 54 ms: callers ask for less */
    uint8_t g = inb(PIT_GATE_PORT);
    outb(PIT_GATE_PORT, (g & ~SPEAKER_ON) & ~GATE_ON);
    outb(PIT_CMD, CMD_CH2_LOHI_MODE0);
    outb(PIT_CH2_DATA, count & 0xFF);
    outb(PIT_CH2_DATA, count >> 8);
    outb(PIT_GATE_PORT, (g & ~SPEAKER_ON) | GATE_ON); /* a rising gate starts the count */
}

int pit_oneshot_done(void)
{
    return inb(PIT_GATE_PORT) & OUT2;
}

/* Port reads an absent PIT may take before we give up: each is a bus cycle of about 1 us on
 * hardware (and an exit under an emulator), so this bounds the probe at about a second where
 * the countdown itself takes 1 ms. */
#define PRESENT_SPINS 1000000
#define PRESENT_MS    1

bool pit_present(void)
{
    pit_oneshot_start(PRESENT_MS);
    /* Mode 0 drives OUT low when programmed: a missing chip reads as all ones (or never
     * changes), so both edges must be seen. */
    if (pit_oneshot_done())
        return false;
    for (unsigned i = 0; i < PRESENT_SPINS; i++)
        if (pit_oneshot_done())
            return true;
    return false;
}
