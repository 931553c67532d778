# Host unit tests of the screen consoles: kernel/vga.c (text mode), kernel/fbcon.c
# (framebuffer) and its font parser kernel/psf.c. Included by the top-level Makefile; `make unit` runs them from the repo root.
#
# test_fbcon reads the console font at run time from $(UNIT_DIR)/font.psf (the kernel's font,
# gunzipped here) and writes one rendered screen to $(UNIT_DIR)/fbcon.ppm for eyeballing.

# Rules here must not become the default goal of the top-level Makefile.
console_mk_default_goal := $(.DEFAULT_GOAL)

# The font the kernel links (the top-level FONT) unless told otherwise.
CONSOLE_FONT_GZ ?= $(or $(FONT),/usr/share/consolefonts/Lat15-Terminus16.psf.gz)

CONSOLE_UNIT_FONT := $(UNIT_DIR)/font.psf
CONSOLE_UNIT_PPM  := $(UNIT_DIR)/fbcon.ppm

UNIT_TESTS += $(UNIT_DIR)/test_vga $(UNIT_DIR)/test_fbcon $(UNIT_DIR)/test_psf

$(CONSOLE_UNIT_FONT): $(CONSOLE_FONT_GZ)
	@mkdir -p $(@D)
	gzip -dc $< > $@.tmp
	mv $@.tmp $@

$(UNIT_DIR)/test_vga: tests/unit/test_vga.c kernel/vga.c kernel/vga.h kernel/con_color.h \
		    kernel/errno.h kernel/textcursor.c kernel/textcursor.h
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -o $@ tests/unit/test_vga.c kernel/vga.c kernel/textcursor.c \
		$(UNIT_LIBS)

# The font is a prerequisite so that `make unit` has it before running the test.
$(UNIT_DIR)/test_fbcon: tests/unit/test_fbcon.c kernel/fbcon.c kernel/fbcon.h kernel/con_color.h \
		      kernel/psf.c kernel/psf.h \
		      kernel/errno.c kernel/errno.h kernel/textcursor.c kernel/textcursor.h \
		      $(CONSOLE_UNIT_FONT)
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -DFBCON_TEST_FONT='"$(CONSOLE_UNIT_FONT)"' \
		-DFBCON_TEST_PPM='"$(CONSOLE_UNIT_PPM)"' \
		-o $@ tests/unit/test_fbcon.c kernel/fbcon.c kernel/psf.c kernel/errno.c \
		kernel/textcursor.c $(UNIT_LIBS)

$(UNIT_DIR)/test_psf: tests/unit/test_psf.c kernel/psf.c kernel/psf.h kernel/errno.h \
		    $(CONSOLE_UNIT_FONT)
	@mkdir -p $(@D)
	$(HOSTCC) $(UNIT_CFLAGS) -DPSF_TEST_FONT='"$(CONSOLE_UNIT_FONT)"' \
		-o $@ tests/unit/test_psf.c kernel/psf.c $(UNIT_LIBS)

.DEFAULT_GOAL := $(console_mk_default_goal)
