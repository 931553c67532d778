"""Reading the screen a run leaves, through QEMU's human monitor on a unix socket, and
checking that it shows the summary (tests/summary.c) rather than the log's tail.

VGA text (bios, direct): `xp` of the text buffer at 0xb8000, cell by cell (character in
the low byte, attribute in the high byte). Framebuffer (uefi): `screendump` to a PPM file,
of which the check needs only the pixel colours.
"""

import re
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
    rows = screen.text()
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
    width = screen.cols - qr_cols if screen.cols >= qr_cols + 24 else screen.cols
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
    if any(c & 0xFF for c in _qr_area(screen, qr_cols) if (c & 0xFF) != 0x20):
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
