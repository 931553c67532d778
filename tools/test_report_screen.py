"""Self-tests of the btsx-report/1 reader (btsx.report) and the summary screen checks
(btsx.screen). Run: python3 -m unittest discover -s tools -p 'test_*.py'
"""

import os
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from btsx import ktap, report, screen

LOG = """\
KTAP version 1
# btsx 0.1.0
# cpu: Intel(R) Core(TM) i7-8650U CPU @ 1.90GHz (family 0x6 model 0x8e stepping 10)
# backend: hw (probe passed)
# screen: vga 80x25
1..5
ok 1 boot.memmap
# FAIL: want 5, got 4
not ok 2 selftest.fail
ok 3 bts.pebs # SKIP no PEBS here
not ok 4 selftest.hang # TIMEOUT after 300 ms
ok 5 ds.pebs # SKIP no PEBS here
# 1 passed, 2 failed, 2 skipped
# ---- begin btsx-report/1 ----
# btsx-report/1
# v=0.1.0
# cpu=Intel(R) Core(TM) i7-8650U~
# n=1/2/2
# f=selftest.fail:want 5, got 4
# t=selftest.hang:after 300 ms
# s=2:no PEBS here
# r=FAIL
# ---- end btsx-report/1 ----
# verdict: FAIL
"""


def edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def problems(log: str) -> list[str]:
    k = ktap.parse(log)
    text = report.extract(k.body)
    assert text is not None
    return report.check(report.parse(text), k)


class ReportBlock(unittest.TestCase):
    def test_agrees(self) -> None:
        k = ktap.parse(LOG)
        self.assertEqual(k.errors, [])     # the block keeps the KTAP valid
        self.assertEqual(problems(LOG), [])
        rep = report.parse(report.extract(k.body) or "")
        self.assertEqual(rep.facts["cpu"], "Intel(R) Core(TM) i7-8650U~")
        self.assertEqual(rep.failures, [("f", "selftest.fail", "want 5, got 4"),
                                        ("t", "selftest.hang", "after 300 ms")])
        self.assertEqual(rep.skips, [(2, "no PEBS here")])

    def test_counts_disagree(self) -> None:
        self.assertIn("report says n=1/1/2 but the KTAP results give 1/2/2",
                      problems(edit(LOG, "# n=1/2/2", "# n=1/1/2")))

    def test_verdict_disagrees(self) -> None:
        self.assertTrue(any("r=PASS" in p for p in problems(edit(LOG, "# r=FAIL", "# r=PASS"))))

    def test_failure_left_out_without_more(self) -> None:
        got = problems(edit(LOG, "# t=selftest.hang:after 300 ms\n", ""))
        self.assertTrue(any("lists 1 of 2 failures" in p for p in got), got)
        # ... and with more= saying so, that is fine.
        left_out = "# t=selftest.hang:after 300 ms\n# s=2:no PEBS here\n"
        self.assertEqual(problems(edit(LOG, left_out, "# more=2\n")), [])

    def test_wrong_failure_and_kind(self) -> None:
        got = problems(edit(LOG, "# f=selftest.fail:", "# f=selftest.other:"))
        self.assertTrue(any("failure 1 of the KTAP results is selftest.fail" in p for p in got))
        got = problems(edit(LOG, "# t=selftest.hang", "# f=selftest.hang"))
        self.assertTrue(any("KTAP says timeout" in p for p in got), got)

    def test_skip_groups(self) -> None:
        self.assertTrue(problems(edit(LOG, "# s=2:", "# s=1:")))
        self.assertTrue(problems(edit(LOG, "# s=2:no PEBS here", "# s=2:no BTS")))
        self.assertEqual(problems(edit(LOG, "# s=2:no PEBS here", "# s=2:no PEBS~")), [])

    def test_format_errors(self) -> None:
        self.assertTrue(problems(edit(LOG, "# btsx-report/1\n", "# btsx-report/2\n")))
        self.assertTrue(problems(edit(LOG, "# cpu=", "# CPU=")))
        too_big = edit(LOG, "# r=FAIL", "# x=" + "y" * 20 + "\n# z=" + "y" * 20 + "\n# r=FAIL")
        self.assertTrue(any("over the 154 limit" in p for p in problems(too_big)))
        self.assertTrue(any("end with r=" in p for p in
                            problems(edit(LOG, "# r=FAIL\n", "# r=FAIL\n# x=1\n"))))

    def test_missing_end_marker(self) -> None:
        self.assertTrue(problems(edit(LOG, "# ---- end btsx-report/1 ----\n", "")))

    def test_escape_and_cut(self) -> None:
        self.assertEqual(report.escape("a\\b\nc\xe9"), "a\\\\b\\x0ac\\xe9")
        self.assertTrue(report.matches("no PEB~", "no PEBS"))
        self.assertFalse(report.matches("no PEBS~", "no PEBS"))
        self.assertFalse(report.matches("no BTS", "no PEBS"))


def text_screen(rows: list[str], band_bg: int = 0x4) -> screen.TextScreen:
    cells = []
    for i, row in enumerate(rows + [""] * (25 - len(rows))):
        bg = band_bg if i == 24 else 0
        cells += [(bg << 12) | 0x0700 | ord(c) for c in row.ljust(80)[:80]]
    return screen.TextScreen(80, 25, cells)


GOOD_SCREEN = [" btsx 0.1.0: summary", "CPU: Intel(R) Core(TM) i7-8650U", "  CPU @ 1.90GHz",
               "Backend: hw (probe passed)", "Tests: 1 passed, 2 failed, 2", "  skipped",
               "FAIL selftest.fail", "  want 5, got 4", "TIMEOUT selftest.hang",
               "  after 300 ms"] + [""] * 14 + [" verdict: FAIL"]


class SummaryScreen(unittest.TestCase):
    def check(self, rows: list[str], band_bg: int = 0x4) -> list[str]:
        return screen.check_text(text_screen(rows, band_bg), ktap.parse(LOG))

    def test_good(self) -> None:
        self.assertEqual(self.check(GOOD_SCREEN), [])

    def test_failure_missing(self) -> None:
        rows = [r for r in GOOD_SCREEN[:-1] if "selftest.hang" not in r and "300 ms" not in r]
        got = self.check(rows + [""] * (24 - len(rows)) + GOOD_SCREEN[-1:])
        self.assertTrue(any("lacks failed test(s) selftest.hang" in p for p in got), got)
        # An "N more" line that covers it is fine.
        rows.append("1 more: see the serial log")
        self.assertEqual(self.check(rows + [""] * (24 - len(rows)) + GOOD_SCREEN[-1:]), [])

    def test_more_too_small(self) -> None:
        rows = [r for r in GOOD_SCREEN[:-1] if "selftest" not in r and r.startswith("  ") is False]
        rows.append("1 more: see the serial log")
        got = self.check(rows + [""] * (24 - len(rows)) + GOOD_SCREEN[-1:])
        self.assertTrue(any("lacks failed test(s)" in p for p in got), got)

    def test_log_tail_is_not_the_summary(self) -> None:
        tail = ["ok 4 bts.task.crash", "# rip 0x1234", "# 1 passed, 2 failed, 2 skipped",
                "# verdict: FAIL"]
        got = self.check([""] * 21 + tail, band_bg=0)
        self.assertTrue(any("CPU line" in p for p in got), got)
        self.assertTrue(any("not the verdict" in p for p in got), got)

    def test_band_colour_and_cpu(self) -> None:
        self.assertTrue(any("colour" in p for p in self.check(GOOD_SCREEN, band_bg=0x2)))
        rows = list(GOOD_SCREEN)
        rows[1] = "CPU: something else"
        self.assertTrue(any("CPU line" in p for p in self.check(rows)))
        rows = list(GOOD_SCREEN)
        rows[3] = "Backend: model"
        self.assertTrue(any("Backend: hw" in p for p in self.check(rows)))

    def test_qr_area_must_stay_clear(self) -> None:
        rows = list(GOOD_SCREEN)
        rows[5] = rows[5].ljust(60) + "stray"
        self.assertTrue(any("QR area" in p for p in self.check(rows)))


def ppm(width: int, height: int, band: tuple[int, int, int] | None, band_cols: int) -> bytes:
    px = bytearray(3 * width * height)
    if band:
        top = (height // 16 - 1) * 16     # the last whole text row, as fbcon has it
        for y in range(top, top + 16):
            for x in range(band_cols):
                px[3 * (y * width + x):3 * (y * width + x) + 3] = bytes(band)
    return b"P6\n# made here\n%d %d\n255\n" % (width, height) + bytes(px)


class Framebuffer(unittest.TestCase):
    def test_parse_ppm(self) -> None:
        w, h, px = screen.parse_ppm(ppm(80, 32, (1, 2, 3), 80))
        self.assertEqual((w, h, px[-3:]), (80, 32, b"\x01\x02\x03"))
        with self.assertRaises(ValueError):
            screen.parse_ppm(ppm(80, 32, None, 0)[:-5])

    def test_band(self) -> None:
        self.assertEqual(screen.check_pixels(*screen.parse_ppm(ppm(800, 600, (0, 0xAA, 0), 408)),
                                             "PASS"), [])
        # The wrong colour, or only a verdict line's few characters, is no band.
        self.assertTrue(screen.check_pixels(*screen.parse_ppm(ppm(800, 600, (0xAA, 0, 0), 408)),
                                            "PASS"))
        self.assertTrue(screen.check_pixels(*screen.parse_ppm(ppm(800, 600, (0, 0xAA, 0), 120)),
                                            "PASS"))

    def test_geometry(self) -> None:
        self.assertEqual(screen.screen_geometry("vga 80x25"), ("vga", 80, 25))
        self.assertEqual(screen.screen_geometry("framebuffer 800x600"), ("framebuffer", 800, 600))
        self.assertIsNone(screen.screen_geometry("none 0x0"))


def render(geometry: tuple[str, int, int], plan: screen.QrPlan,
           flip: tuple[int, int] | None = None, quiet_rgb: bytes = screen.LIGHT) -> bytes:
    """A screendump with plan's symbol where tests/summary.c draws it: VGA text 720x400 (cells
    9x16, modules 9x8, the whole area light), or a framebuffer (square modules, a light
    square of symbol and quiet zone in a black area)."""
    kind, w, h = geometry
    size = len(plan.matrix)
    if kind == "vga":
        width, height, mw, mh = w * 9, h * 16, 9, 8
        x0 = (w - screen.QR_COLS) * 9
        left = x0 + (screen.QR_COLS - size) // 2 * mw
        top = (2 * h - size) // 2 * mh
        light = (x0, 0, width, height)
    else:
        width, height = w, h
        x0 = (w // 8 - screen.QR_COLS) * 8
        side = size + 2 * plan.quiet
        mw = mh = min(w - x0, h) // side
        lx, ly = x0 + (w - x0 - side * mw) // 2, (h - side * mh) // 2
        light = (lx, ly, lx + side * mw, ly + side * mh)
        left, top = lx + plan.quiet * mw, ly + plan.quiet * mh
    px = bytearray(3 * width * height)
    for y in range(light[1], light[3]):
        for x in range(light[0], light[2]):
            px[3 * (y * width + x):3 * (y * width + x) + 3] = quiet_rgb
    for j in range(size):
        for i in range(size):
            dark = plan.matrix[j][i] != ((i, j) == flip)
            for y in range(top + j * mh, top + (j + 1) * mh):
                row = 3 * (y * width + left + i * mw)
                px[row:row + 3 * mw] = (screen.DARK if dark else screen.LIGHT) * mw
    return b"P6\n%d %d\n255\n" % (width, height) + bytes(px)


class QrCode(unittest.TestCase):
    """The QR check against symbols drawn here the way the kernel's design draws them."""

    TEXT = report.extract(ktap.parse(LOG).body) or ""
    VGA = ("vga", 80, 25)
    FB = ("framebuffer", 800, 600)

    def claim(self, geometry: tuple[str, int, int], plan: screen.QrPlan) -> list[str]:
        version = (len(plan.matrix) - 17) // 4
        return [f"# report qr: version {version}, level {plan.level}, mask 0, "
                f"quiet zone {plan.quiet}"]

    def check(self, geometry: tuple[str, int, int], decoded: str | None = None,
              flip: tuple[int, int] | None = None, quiet_rgb: bytes = screen.LIGHT) -> list[str]:
        plan = screen.qr_plan(self.TEXT, geometry)
        assert plan is not None
        image = screen.parse_ppm(render(geometry, plan, flip, quiet_rgb))
        return screen.check_qr(self.TEXT, self.claim(geometry, plan), geometry, image,
                               self.TEXT if decoded is None else decoded)

    def test_plan_follows_the_design(self) -> None:
        # 145 bytes: past version 6 at L (134), so version 7 with the 2-module zone.
        vga = screen.qr_plan(self.TEXT, self.VGA)
        assert vga is not None
        self.assertEqual((len(vga.matrix), vga.level, vga.quiet), (45, "L", 2))
        # 134 bytes fit version 6 at L: 41 + 8 = 49 modules with the standard's zone.
        short = screen.qr_plan(self.TEXT[:134], self.VGA)
        assert short is not None
        self.assertEqual((len(short.matrix), short.level, short.quiet), (41, "L", 4))
        self.assertIsNone(screen.qr_plan(self.TEXT + "x" * 60, self.VGA))
        self.assertIsNone(screen.qr_plan(self.TEXT, ("vga", 72, 25)))   # no QR area
        fb = screen.qr_plan(self.TEXT, self.FB)
        assert fb is not None
        self.assertEqual((fb.level, fb.quiet), ("H", 4))

    def test_good(self) -> None:
        self.assertEqual(self.check(self.VGA), [])
        self.assertEqual(self.check(self.FB), [])

    def test_decoded_text_differs(self) -> None:
        for cut in (self.TEXT[:-1], self.TEXT.replace("r=FAIL", "r=PASS")):
            self.assertTrue(any("decodes to" in p for p in self.check(self.VGA, decoded=cut)))

    def test_flipped_module(self) -> None:
        for geometry in (self.VGA, self.FB):
            problems = self.check(geometry, flip=(20, 30))
            self.assertTrue(any("1 QR module(s) differ" in p and "(20, 30)" in p
                                for p in problems), problems)

    def test_quiet_zone_colour(self) -> None:
        for geometry in (self.VGA, self.FB):
            problems = self.check(geometry, quiet_rgb=b"\xaa\xaa\xaa")
            self.assertTrue(any("quiet zone" in p or "no QR code" in p for p in problems),
                            problems)

    def test_log_line(self) -> None:
        plan = screen.qr_plan(self.TEXT, self.VGA)
        assert plan is not None
        image = screen.parse_ppm(render(self.VGA, plan))
        bodies: list[list[str]] = [[], ["# report qr: version 7, level M, mask 0, quiet zone 2"]]
        for body in bodies:
            self.assertTrue(screen.check_qr(self.TEXT, body, self.VGA, image, self.TEXT))
        self.assertTrue(screen.check_qr(None, [], self.VGA, image, self.TEXT))
        # A screen without a QR area: a '# report qr: version' line is wrong, none is right.
        narrow = ("vga", 72, 25)
        claim = ["# report qr: version 7, level L, mask 0, quiet zone 2"]
        self.assertTrue(screen.check_qr(self.TEXT, claim, narrow, image, None))
        self.assertEqual(screen.check_qr(self.TEXT, [], narrow, image, None), [])

    def test_zbarimg(self) -> None:
        plan = screen.qr_plan(self.TEXT, self.VGA)
        assert plan is not None
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "screen.ppm"
            path.write_bytes(render(self.VGA, plan))
            self.assertEqual(screen.zbarimg(path), (self.TEXT, None))
            path.write_bytes(render(self.VGA, plan, quiet_rgb=b"\x00\x00\x00"))
            self.assertIsNone(screen.zbarimg(path)[0])
            with mock.patch.dict(os.environ, {"PATH": tmp}):
                self.assertIn("zbarimg not found", screen.zbarimg(path)[1] or "")


if __name__ == "__main__":
    unittest.main()
