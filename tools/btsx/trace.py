"""btsx-trace: decode, symbolise and profile the BTS records a btsx run printed.

Boot with the kernel option `dump` and every trace a test collects is printed as KTAP
diagnostics, one record a line:  # bts-record TEST INDEX FROM TO FLAGS
This tool reads such a serial log (build/logs/*.log), names the addresses with the kernel's
symbols (nm over build/btsx.elf) and prints the records, a branch profile, or an SVG plot.

  tools/btsx-trace build/logs/direct.log                 every record, symbolised
  tools/btsx-trace LOG --test 'bts.fib' --profile        the most frequent branches
  tools/btsx-trace LOG --test 'ds.*' --svg profile.svg   the same as a bar chart
"""
import argparse
import bisect
import collections
import fnmatch
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from btsx.logs import read_log

RECORD_RE = re.compile(r"^(?:#\s*)?bts-record\s+(\S+)\s+(\d+)\s+(0x[0-9a-fA-F]+|0)\s+"
                       r"(0x[0-9a-fA-F]+|0)\s+(0x[0-9a-fA-F]+|0)\s*$")
ESCAPE = 0x8000000000000000          # ds/record.h BTS_ESCAPE: a timestamp record
QUALIFIERS = {1: "arrive", 2: "depart"}
SYMBOL_TYPES = set("TtDdRrBb")


@dataclass(frozen=True)
class Record:
    test: str
    index: int
    frm: int
    to: int
    flags: int

    @property
    def kind(self) -> str:
        if self.frm != ESCAPE:
            return "branch"
        return QUALIFIERS.get(self.flags, "bad-timestamp")


def parse_log(lines: Iterable[str]) -> list[Record]:
    """Records in log order; other lines (KTAP, firmware noise) are ignored."""
    out = []
    for line in lines:
        m = RECORD_RE.match(line.strip().replace("\r", ""))
        if m:
            out.append(Record(m.group(1), int(m.group(2)), int(m.group(3), 16),
                              int(m.group(4), 16), int(m.group(5), 16)))
    return out


class Symbols:
    """Address -> name+offset over `nm -n` output; one name per address, not an _end label."""

    def __init__(self, pairs: Iterable[tuple[int, str]], end: int | None = None) -> None:
        addrs: list[int] = []
        names: list[str] = []
        for addr, name in sorted(pairs):
            if addrs and addrs[-1] == addr:
                if names[-1].endswith("_end") and not name.endswith("_end"):
                    names[-1] = name
                continue
            addrs.append(addr)
            names.append(name)
        self.addrs, self.names, self.end = addrs, names, end

    @classmethod
    def from_elf(cls, elf: Path, nm: str = "nm") -> "Symbols":
        text = subprocess.run([nm, "-n", "--defined-only", str(elf)], check=True,
                              stdout=subprocess.PIPE, text=True).stdout
        pairs, end = [], None
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in SYMBOL_TYPES:
                pairs.append((int(parts[0], 16), parts[2]))
            if len(parts) == 3 and parts[2] == "_kernel_end":
                end = int(parts[0], 16)
        return cls(pairs, end)

    def name(self, addr: int) -> str:
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0 or (self.end is not None and addr >= self.end):
            return "%#x" % addr
        off = addr - self.addrs[i]
        return self.names[i] + ("+%#x" % off if off else "")


def describe(rec: Record, syms: Symbols) -> str:
    if rec.kind == "branch":
        return "%s -> %s" % (syms.name(rec.frm), syms.name(rec.to))
    return "%s at TSC %d" % (rec.kind, rec.to)


def profile(records: Iterable[Record], syms: Symbols, top: int) -> list[tuple[int, str, str]]:
    edges = collections.Counter((r.frm, r.to) for r in records if r.kind == "branch")
    return [(n, syms.name(f), syms.name(t)) for (f, t), n in edges.most_common(top)]


def svg_plot(rows: Sequence[tuple[int, str, str]], title: str) -> str:
    """A horizontal bar chart of (count, from, to) rows, as a standalone SVG document."""
    bar_h, left, width = 18, 420, 360
    most = max((n for n, _, _ in rows), default=1)
    h = 40 + bar_h * len(rows)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="monospace" font-size="11">' % (left + width + 80, h),
           '<text x="8" y="18" font-size="13">%s</text>' % escape(title)]
    for i, (n, f, t) in enumerate(rows):
        y = 30 + i * bar_h
        w = max(1, int(width * n / most))
        out.append('<text x="8" y="%d">%s</text>' % (y + 12, escape("%s -> %s" % (f, t))[:70]))
        out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#3b7dd8"/>'
                   % (left, y + 2, w, bar_h - 4))
        out.append('<text x="%d" y="%d">%d</text>' % (left + w + 6, y + 12, n))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="btsx-trace", description=(__doc__ or "").split("\n")[0])
    ap.add_argument("log", type=Path, help="a serial log of a run booted with `dump`")
    ap.add_argument("--elf", type=Path, default=Path("build/btsx.elf"),
                    help="the kernel image (symbols)")
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--test", default="*", help="only tests matching this glob")
    ap.add_argument("--profile", action="store_true", help="the most frequent branches")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--svg", metavar="FILE", help="write the profile as an SVG bar chart")
    args = ap.parse_args(argv)

    try:
        records = [r for r in parse_log(read_log(args.log).splitlines())
                   if fnmatch.fnmatchcase(r.test, args.test)]
        syms = Symbols.from_elf(args.elf, args.nm)
    except (OSError, subprocess.CalledProcessError) as e:
        print("btsx-trace: %s" % e, file=sys.stderr)
        return 2
    if not records:
        print("btsx-trace: no bts-record lines for %r in %s (boot with `dump`)"
              % (args.test, args.log), file=sys.stderr)
        return 1

    if args.profile or args.svg:
        rows = profile(records, syms, args.top)
        if args.svg:
            Path(args.svg).write_text(svg_plot(rows, "btsx branch profile: %s" % args.test))
        for n, f, t in rows:
            print("%8d  %s -> %s" % (n, f, t))
        return 0
    test: str | None = None
    for r in records:
        if r.test != test:
            test = r.test
            print("%s:" % test)
        print("  %5d  %s" % (r.index, describe(r, syms)))
    return 0
