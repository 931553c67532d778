"""Reading the screen a run leaves, through QEMU's human monitor on a unix socket, and
checking that it shows the summary (tests/summary.c) rather than the log's tail.

VGA text (bios, direct): `xp` of the text buffer at 0xb8000, cell by cell (character in
the low byte, attribute in the high byte). Framebuffer (uefi): `screendump` to a PPM file,
of which the check needs only the pixel colours.
"""

import re
import subprocess
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from btsx import ktap

VGA_TEXT = 0xB8000
# The verdict band's background: tests/framework.c's CON_GREEN / CON_RED in the VGA
# palette (kernel/fbcon.c) and as VGA attribute nibbles.
BAND_RGB = {"PASS": (0x00, 0xAA, 0x00), "FAIL": (0xAA, 0x00, 0x00),
            "NO TESTS RUN": (0xAA, 0x00, 0x00)}
BAND_ATTR_BG = {"PASS": 0x2, "FAIL": 0x4, "NO TESTS RUN": 0x4}
_XP_LINE = re.compile(r"\s*[0-9a-f]+:((?:\s+0x[0-9a-f]+)+)\s*$")
# What the QR area's cells may hold (kernel/vga.c vga_put_halves): a space, the full block,
# the lower and the upper half block.
QR_CELL_CHARS = {0x20, 0xDB, 0xDC, 0xDF}
_MORE = re.compile(r"([0-9]+) more: see the serial log")


class Monitor:
    """QEMU's human monitor on a unix socket: one command at a time, answers read until the
    next prompt."""

    PROMPT = b"(qemu) "

    def __init__(self, path: Path, timeout: float = 10.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(path))
        self._read_to_prompt()      # the banner

    def _read_to_prompt(self) -> str:
        data = b""
        while not data.endswith(self.PROMPT):
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            data += chunk
        return data.decode("utf-8", "replace")

    def command(self, line: str) -> str:
        self.sock.sendall(line.encode() + b"\n")
        return ktap.clean(self._read_to_prompt()).replace("(qemu)", "")

    def close(self) -> None:
        self.sock.close()


def connect(path: Path, wait: float = 10.0) -> Monitor:
    """The monitor, once QEMU has created its socket."""
    deadline = time.monotonic() + wait
    while True:
        try:
            return Monitor(path)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def halted(mon: Monitor) -> bool:
    """Whether the CPU sits in HLT (the kernel's end: interrupts off, then halt)."""
    return "HLT=1" in mon.command("info registers")


@dataclass
class TextScreen:
    cols: int
    rows: int
    cells: list[int]

    def row_text(self, r: int) -> str:
        return "".join(chr(c & 0xFF) if 0x20 <= (c & 0xFF) < 0x7F else "?"
                       for c in self.cells[r * self.cols:(r + 1) * self.cols])

    def text(self) -> list[str]:
        return [self.row_text(r) for r in range(self.rows)]


def read_text(mon: Monitor, cols: int, rows: int) -> TextScreen:
    out = mon.command(f"xp /{cols * rows}hx {VGA_TEXT:#x}")
    cells: list[int] = []
    for line in out.splitlines():
        m = _XP_LINE.match(line)
        if m:
            cells += [int(x, 16) for x in m.group(1).split()]
    if len(cells) != cols * rows:
        raise ValueError(f"xp gave {len(cells)} cells, want {cols * rows}")
    return TextScreen(cols, rows, cells)


def parse_ppm(data: bytes) -> tuple[int, int, bytes]:
    """(width, height, RGB bytes) of a binary PPM (P6, maxval 255) as QEMU writes it."""
    fields: list[bytes] = []
    pos = 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos) + 1
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    if fields[0] != b"P6" or fields[3] != b"255":
        raise ValueError("not a P6 PPM with maxval 255")
    w, h = int(fields[1]), int(fields[2])
    pixels = data[pos + 1:pos + 1 + 3 * w * h]
    if len(pixels) != 3 * w * h:
        raise ValueError("PPM shorter than its header says")
    return w, h, pixels


def screen_geometry(header: str | None) -> tuple[str, int, int] | None:
    """('vga'|'framebuffer', cols or pixels wide, rows or pixels high) from the kernel's
    '# screen:' header value, None without a screen."""
    m = re.fullmatch(r"(vga|framebuffer) ([0-9]+)x([0-9]+)", header or "")
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else None


def check_text(screen: TextScreen, rep: ktap.Report, qr_cols: int = 49) -> list[str]:
    """What the summary must show on a text screen, from the same log's KTAP results."""
    problems = []
    # The text pane only: the QR area's block characters are no text.
    width = screen.cols - qr_cols if screen.cols >= qr_cols + 24 else screen.cols
    rows = [row[:width] for row in screen.text()]
    text = "\n".join(rows)
    verdict = rep.verdict or ""
    last = rows[-1]
    if not last.startswith(f" verdict: {verdict}"):     # the band, not a log line
        problems.append(f"screen's last row is {last.strip()!r}, not the verdict {verdict!r}")
    elif (screen.cells[(screen.rows - 1) * screen.cols] >> 12) & 0xF != BAND_ATTR_BG.get(verdict):
        problems.append("screen's verdict band is not in the verdict's colour")
    brand = (rep.header.get("cpu") or "").split(" (family")[0]
    if f"CPU: {brand[:20]}" not in text:
        problems.append(f"screen does not show the CPU line 'CPU: {brand[:20]}'")
    backend = (rep.header.get("backend") or "").split(" ")[0]
    if backend and f"Backend: {backend}" not in text:
        problems.append(f"screen does not show 'Backend: {backend}'")
    failed = [r for r in rep.results if r.outcome in ("fail", "timeout")]
    shown = [r for r in failed
             if any(row.rstrip() == (f"{'TIMEOUT' if r.outcome == 'timeout' else 'FAIL'} "
                                     f"{r.name}")[:width].rstrip() for row in rows)]
    m = _MORE.search(text)
    more = int(m.group(1)) if m else 0
    if len(failed) - len(shown) > more:
        absent = [r.name for r in failed if r not in shown]
        problems.append(f"screen lacks failed test(s) {', '.join(absent)} "
                        f"({repr(m.group(0)) if m else 'no N more line'})")
    if any((c & 0xFF) not in QR_CELL_CHARS for c in _qr_area(screen, qr_cols)):
        problems.append("screen's QR area (the right-hand columns) holds text")
    return problems


def _qr_area(screen: TextScreen, qr_cols: int) -> list[int]:
    if screen.cols < qr_cols + 24:
        return []
    return [screen.cells[r * screen.cols + c] for r in range(screen.rows)
            for c in range(screen.cols - qr_cols, screen.cols)]


def check_pixels(width: int, height: int, pixels: bytes, verdict: str,
                 cell_height: int = 16) -> list[str]:
    """The framebuffer's last text row must be the verdict band: mostly the verdict colour
    (the log's tail would leave it black, or in a full-width colour only on its verdict
    line's few characters)."""
    rgb = bytes(BAND_RGB.get(verdict, (0, 0, 0)))
    rows = height // cell_height
    if not rows:
        return ["framebuffer smaller than one text row"]
    top = (rows - 1) * cell_height
    band = pixels[3 * width * top:3 * width * (top + cell_height)]
    hits = sum(1 for i in range(0, len(band), 3) if band[i:i + 3] == rgb)
    share = hits / (width * cell_height)
    # The band spans the text area (the screen less the QR area): well over a third.
    if share < 0.3:
        return [f"framebuffer's last text row is {share:.0%} verdict colour "
                f"#{rgb.hex()}: no verdict band (the screen shows something else)"]
    return []


# ---------------------------------------------------------------- the report's QR code
# tests/summary.c: the QR area is the SUMMARY_QR_COLS columns at the right of a screen at
# least SUMMARY_QR_COLS + SUMMARY_MIN_TEXT_COLS wide; on VGA text two modules a cell, the
# standard's quiet zone (QR_QUIET) if the symbol leaves room for it, else QR_QUIET_TEXT_MIN;
# on the framebuffer square modules of at least QR_FB_MODULE_MIN pixels and QR_QUIET.
QR_COLS = 49
QR_MIN_TEXT_COLS = 24
QR_QUIET = 4
QR_QUIET_TEXT_MIN = 2
QR_FB_MODULE_MIN = 4
FB_CELL_WIDTH = 8           # the kernel's console font (Terminus 8x16)
LIGHT = b"\xff\xff\xff"     # CON_WHITE
DARK = b"\x00\x00\x00"      # CON_BLACK
LEVELS = "HQML"             # most robust first
_QR_LINE = re.compile(r"# report qr: version ([0-9]+), level ([LMQH]), mask ([0-7]), "
                      r"quiet zone ([0-9]+)")

Matrix = list[list[bool]]


def qrencode(text: str, level: str) -> Matrix:
    """The symbol Debian's qrencode makes of text (byte mode, smallest version at level,
    mask by the penalty rules, as the kernel's encoder: tests/unit/test_qr.c)."""
    out = subprocess.run(["qrencode", "-8", "-l", level, "-t", "ASCII", "-m", "0", "-o", "-"],
                         input=text.encode("latin-1"), capture_output=True, check=True).stdout
    rows = [r for r in out.decode("ascii").split("\n") if r]
    return [[r[2 * i] == "#" for i in range(len(r) // 2)] for r in rows]


@dataclass
class QrPlan:
    level: str
    quiet: int
    matrix: Matrix


def qr_plan(text: str, geometry: tuple[str, int, int]) -> QrPlan | None:
    """What the design puts on this screen for text: the most robust level whose smallest
    symbol, with its quiet zone, fits the QR area; None if there is no area or no fit."""
    kind, w, h = geometry
    if kind == "vga":
        if w < QR_COLS + QR_MIN_TEXT_COLS:
            return None
        side, quiets = min(QR_COLS, 2 * h), [QR_QUIET, QR_QUIET_TEXT_MIN]
    else:
        cols = w // FB_CELL_WIDTH
        if cols < QR_COLS + QR_MIN_TEXT_COLS:
            return None
        side = min(w - (cols - QR_COLS) * FB_CELL_WIDTH, h) // QR_FB_MODULE_MIN
        quiets = [QR_QUIET]
    symbols: dict[str, Matrix] = {}
    for quiet in quiets:
        for level in LEVELS:
            if level not in symbols:
                try:
                    symbols[level] = qrencode(text, level)
                except subprocess.CalledProcessError:   # too long even for version 40
                    symbols[level] = [[False]] * 999
            if len(symbols[level]) + 2 * quiet <= side:
                return QrPlan(level, quiet, symbols[level])
    return None


def qr_area_x(geometry: tuple[str, int, int], width: int) -> int:
    """First pixel column of the QR area in a screendump of this screen."""
    kind, w, _ = geometry
    if kind == "vga":
        return (w - QR_COLS) * (width // w)
    return (w // FB_CELL_WIDTH - QR_COLS) * FB_CELL_WIDTH


def _bbox(width: int, pixels: bytes, x0: int, x1: int, y0: int, y1: int,
          colour: bytes) -> tuple[int, int, int, int] | None:
    xs, ys = [], []
    for y in range(y0, y1):
        row = pixels[3 * (y * width + x0):3 * (y * width + x1)]
        hits = [i // 3 for i in range(0, len(row), 3) if row[i:i + 3] == colour]
        if hits:
            xs += [x0 + hits[0], x0 + hits[-1]]
            ys.append(y)
    return (min(xs), ys[0], max(xs) + 1, ys[-1] + 1) if xs else None


def read_symbol(width: int, height: int, pixels: bytes, x0: int, size: int, quiet: int
                ) -> tuple[Matrix, tuple[float, float], list[str]]:
    """The size x size modules of the symbol in the screendump's QR area (from pixel column
    x0): the bounding box of the dark pixels within that of the light ones, sampled at each
    module's centre. Also the module's
    size in pixels, and what is wrong: a pixel neither dark nor light where a module's centre
    is, or a quiet zone of fewer than quiet light modules."""
    # The light square first (on the framebuffer the area around it is the screen's black),
    # then the dark modules in it.
    light = _bbox(width, pixels, x0, width, 0, height, LIGHT)
    box = light and _bbox(width, pixels, light[0], light[2], light[1], light[3], DARK)
    if box is None:
        return [], (0.0, 0.0), ["no QR code on the screen: no dark pixel on light in its area"]
    bx0, by0, bx1, by1 = box
    mw, mh = (bx1 - bx0) / size, (by1 - by0) / size
    problems: list[str] = []
    matrix = []
    for j in range(size):
        row = []
        for i in range(size):
            x, y = int(bx0 + (i + 0.5) * mw), int(by0 + (j + 0.5) * mh)
            px = pixels[3 * (y * width + x):3 * (y * width + x) + 3]
            if px not in (DARK, LIGHT) and len(problems) < 3:
                problems.append(f"QR module ({i},{j}) is #{px.hex()}, neither dark nor light")
            row.append(px == DARK)
        matrix.append(row)
    qx0, qy0 = round(bx0 - quiet * mw), round(by0 - quiet * mh)
    qx1, qy1 = round(bx1 + quiet * mw), round(by1 + quiet * mh)
    if qx0 < x0 or qy0 < 0 or qx1 > width or qy1 > height:
        problems.append(f"QR quiet zone of {quiet} modules does not fit the screen")
    else:
        for y in range(qy0, qy1):
            xs = range(qx0, qx1) if y < by0 or y >= by1 else [*range(qx0, bx0), *range(bx1, qx1)]
            bad = [x for x in xs if pixels[3 * (y * width + x):3 * (y * width + x) + 3] != LIGHT]
            if bad:
                problems.append(f"QR quiet zone ({quiet} modules) is not light at pixel "
                                f"({bad[0]},{y})")
                break
    return matrix, (mw, mh), problems


def zbarimg(path: Path) -> tuple[str | None, str | None]:
    """(the text zbarimg decodes from the image, None) or (None, why not)."""
    try:
        run = subprocess.run(["zbarimg", "--raw", "-q", str(path)], capture_output=True)
    except FileNotFoundError:
        return None, "zbarimg not found (Debian zbar-tools): the QR code cannot be checked"
    if run.returncode != 0 or not run.stdout:
        return None, f"zbarimg decodes no QR code from {path.name} (status {run.returncode})"
    # --raw ends each symbol's data with a newline of its own.
    out = run.stdout.decode("latin-1")
    return (out[:-1] if out.endswith("\n") else out), None


def check_qr(report: str | None, body: list[str], geometry: tuple[str, int, int],
             ppm: tuple[int, int, bytes], decoded: str | None) -> list[str]:
    """The QR code on the screen against the report on the serial log (report, None if the
    log has none): decoded is what zbarimg read from the screendump. The decoded text must
    be the report, byte for byte; the symbol module for module the one qrencode makes of the
    report at the level the design calls for; its quiet zone light; the log's '# report qr:'
    line must name that version and level."""
    if report is None:
        return ["no report on the serial log to compare the QR code with"]
    plan = qr_plan(report, geometry)
    claim = next((m for m in map(_QR_LINE.fullmatch, body) if m), None)
    if plan is None:
        return [] if claim is None else ["the kernel drew a QR code where none fits"]
    problems = []
    if decoded is not None and decoded != report:
        problems.append(f"QR code decodes to {decoded!r}, the serial log's report is {report!r}")
    size = len(plan.matrix)
    if claim is None:
        problems.append("no '# report qr: version ...' line on the serial log")
    elif (int(claim.group(1)), claim.group(2), int(claim.group(4))) != \
            ((size - 17) // 4, plan.level, plan.quiet):
        problems.append(f"log says '{claim.group(0)[2:]}', the design calls for version "
                        f"{(size - 17) // 4}, level {plan.level}, quiet zone {plan.quiet}")
    width, height, pixels = ppm
    matrix, _, bad = read_symbol(width, height, pixels, qr_area_x(geometry, width), size,
                                 plan.quiet)
    problems += bad
    if matrix:
        diff = [(i, j) for j in range(size) for i in range(size)
                if matrix[j][i] != plan.matrix[j][i]]
        if diff:
            problems.append(f"{len(diff)} QR module(s) differ from qrencode's symbol of the "
                            f"report (level {plan.level}), first at {diff[0]}")
    return problems
