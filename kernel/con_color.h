/* The sixteen screen console colours, shared by the VGA text console and the framebuffer
 * console.
 *
 * The order is the VGA attribute order (IBM VGA Technical Reference, "Attribute Controller":
 * bits 0-2 are blue/green/red, bit 3 is intensity), so the text console can use a value
 * directly as an attribute nibble; fbcon maps the same values to the canonical VGA RGB
 * palette.
 */
#ifndef BTSX_KERNEL_CON_COLOR_H
#define BTSX_KERNEL_CON_COLOR_H

enum con_color {
    CON_BLACK,
    CON_BLUE,
    CON_GREEN,
    CON_CYAN,
    CON_RED,
    CON_MAGENTA,
    CON_BROWN,
    CON_LIGHT_GREY,
    CON_DARK_GREY,
    CON_LIGHT_BLUE,
    CON_LIGHT_GREEN,
    CON_LIGHT_CYAN,
    CON_LIGHT_RED,
    CON_LIGHT_MAGENTA,
    CON_YELLOW,
    CON_WHITE,
};

/* Number of colours; a colour fits in one attribute nibble. */
#define CON_COLOR_COUNT 16
#define CON_COLOR_MASK  0x0F
/* The intensity bit: colours 8-15 are the bright versions of 0-7. */
#define CON_BRIGHT      0x08

/* What both consoles start with: the BIOS default attribute 0x07. */
#define CON_DEFAULT_FG CON_LIGHT_GREY
#define CON_DEFAULT_BG CON_BLACK

#endif /* BTSX_KERNEL_CON_COLOR_H */
