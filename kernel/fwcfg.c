#include "kernel/fwcfg.h"

#include <stdint.h>

#include "kernel/errno.h"
#include "kernel/io.h"
#include "kernel/string.h"

#define FWCFG_PORT_SEL  0x510
#define FWCFG_PORT_DATA 0x511
#define FWCFG_SIGNATURE 0x0000
#define FWCFG_FILE_DIR  0x0019
#define FWCFG_NAME_LEN  56

static void read_bytes(void *dst, size_t n)
{
    uint8_t *p = dst;
    while (n--)
        *p++ = inb(FWCFG_PORT_DATA);
}

static uint32_t be32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3];
}

int fwcfg_read_file(const char *name, char *buf, size_t len)
{
    char sig[4];
    outw(FWCFG_PORT_SEL, FWCFG_SIGNATURE);
    read_bytes(sig, sizeof(sig));
    if (memcmp(sig, "QEMU", 4) != 0)
        return E_NOTSUP;

    uint8_t cnt[4];
    outw(FWCFG_PORT_SEL, FWCFG_FILE_DIR);
    read_bytes(cnt, sizeof(cnt));
    for (uint32_t i = 0, n = be32(cnt); i < n; i++) {
        struct {
            uint8_t size[4], select[2], reserved[2];
            char name[FWCFG_NAME_LEN];
        } f;
        read_bytes(&f, sizeof(f));
        if (strncmp(f.name, name, FWCFG_NAME_LEN) != 0)
            continue;
        uint32_t size = be32(f.size);
        size_t take = size < len - 1 ? size : len - 1;
        outw(FWCFG_PORT_SEL, (uint16_t)(f.select[0] << 8 | f.select[1]));
        read_bytes(buf, take);
        buf[take] = '\0';
        return (int)take;
    }
    return E_NOENT;
}
