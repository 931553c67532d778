"""btsx-char: one table of what the BTS of several machines does, from their btsx logs.

A btsx run of the `char.*` suite prints one `# char:` line per measured fact (the format is
docs/hardware.md §13) after a header that names the CPU (with its microcode revision), the
hypervisor, the BTS backend and its guarantee profile. This tool reads such logs (the runner's
build/logs/*.log, or a raw serial capture) and writes one row per log, one column per fact:

  tools/btsx-char build/logs/direct.log other-machine.log      Markdown, to stdout
  tools/btsx-char --csv *.log > envelope.csv                   CSV

A malformed `# char:` line, a fact given twice or a file that is no btsx log is reported as
FILE:LINE on stderr, and then no table is written (exit status 1).

Each input format is one reader (READERS): a function that recognises its text and returns a
Report, or None for text that is not its format. A new format is one more reader. Besides
serial logs, it reads the `btsx-report/1` text (docs/report.md) on its own, as a phone or
zbarimg decodes it from the summary screen's QR code: that gives the machine's columns (the
report carries no `# char:` facts: they stay on the serial log).
"""
import argparse
import csv
import io
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from btsx import report as btsx_report
from btsx.logs import read_log

# The header lines the table takes a column from (tests/framework.c, tests/btscheck.c).
HEADER_RE = re.compile(r"^# (btsx|cpu|hypervisor|backend|profile): (.*)$")
CPU_UCODE_RE = re.compile(r"^(.*) ucode (\S+)$")
# `# char: FACT [WORD] [KEY=VALUE ...]`: lower-case names, values without blanks or '='.
CHAR_PREFIX = "# char:"
NAME = r"[a-z][a-z0-9_]*"
CHAR_RE = re.compile(rf"^# char: ({NAME})((?: {NAME})?(?: {NAME}=[^\s=]+)*)$")

FIXED_COLUMNS = ("log", "cpu", "ucode", "hypervisor", "backend", "profile")


class ReportError(Exception):
    """What is wrong with one input, as FILE:LINE: why."""


@dataclass
class Report:
    """What one machine's log says: the header's facts and each `# char:` fact's value."""
    source: str
    cpu: str = "-"
    ucode: str = "-"
    hypervisor: str = "-"
    backend: str = "-"
    profile: str = "-"
    facts: dict[str, str] = field(default_factory=dict)

    def column(self, name: str) -> str:
        fixed = {"log": self.source, "cpu": self.cpu, "ucode": self.ucode,
                 "hypervisor": self.hypervisor, "backend": self.backend, "profile": self.profile}
        return fixed[name] if name in fixed else self.facts.get(name, "-")


Reader = Callable[[str, list[str]], Optional[Report]]


def first_word(text: str) -> str:
    return text.split(" ", 1)[0] if text else "-"


def read_serial_log(source: str, lines: list[str]) -> Optional[Report]:
    """A btsx serial log (KTAP with the btsx header), with whatever the firmware printed
    around it. None if no line of the btsx header is there."""
    report = Report(source)
    seen_header = False
    where: dict[str, int] = {}
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n").rstrip("\r")
        m = HEADER_RE.match(line)
        if m:
            seen_header = True
            key, value = m.group(1), m.group(2).strip()
            if key == "cpu":
                u = CPU_UCODE_RE.match(value)
                report.cpu, report.ucode = (u.group(1), u.group(2)) if u else (value, "-")
            elif key == "hypervisor":
                report.hypervisor = value
            elif key in ("backend", "profile"):
                setattr(report, key, first_word(value))
            continue
        if not line.startswith(CHAR_PREFIX):
            continue
        c = CHAR_RE.match(line)
        if not c:
            raise ReportError(f"{source}:{number}: malformed '# char:' line: {line!r} "
                              "(expected '# char: FACT [VALUE] [KEY=VALUE ...]')")
        fact, value = c.group(1), c.group(2).strip()
        if fact in report.facts:
            raise ReportError(f"{source}:{number}: fact '{fact}' given twice "
                              f"(first at line {where[fact]})")
        report.facts[fact] = value
        where[fact] = number
    return report if seen_header else None


REPORT_VERSION_RE = re.compile(r"^btsx-report/[0-9]+$")


def read_report_text(source: str, lines: list[str]) -> Optional[Report]:
    """A btsx-report/1 text on its own (decoded from the screen's QR code). None if the first
    line that is not blank is no btsx-report version line."""
    body = [line.rstrip("\r") for line in lines]
    while body and not body[0].strip():
        body.pop(0)
    while body and not body[-1].strip():
        body.pop()      # zbarimg ends its output with a newline of its own
    if not body or not REPORT_VERSION_RE.match(body[0]):
        return None
    if body[0] != btsx_report.VERSION:
        raise ReportError(f"{source}:1: {body[0]} is not a version this tool reads "
                          f"({btsx_report.VERSION})")
    rep = btsx_report.parse("".join(line + "\n" for line in body))
    if rep.errors:
        raise ReportError(f"{source}: {rep.errors[0]}")
    f = rep.facts
    report = Report(source)
    report.cpu = f"{f.get('cpu', '-')} (fms {f['fms']})" if "fms" in f else f.get("cpu", "-")
    report.ucode = f.get("uc", "-")
    # The report leaves out "none", but also what did not fit (counted in more=).
    report.hypervisor = f.get("hv", "none" if rep.more == 0 else "-")
    report.backend = first_word(f.get("be", ""))
    return report


# The formats an input may be in, tried in order.
READERS: list[Reader] = [read_serial_log, read_report_text]


def read_report(path: Path) -> Report:
    """The report in one file, by the first reader that recognises it."""
    try:
        text = read_log(path)
    except OSError as e:
        raise ReportError(f"{path}: cannot read: {e.strerror or e}") from e
    lines = text.splitlines()
    for reader in READERS:
        report = reader(str(path), lines)
        if report is not None:
            return report
    raise ReportError(f"{path}:1: not a btsx log (no '# cpu:' or other btsx header line) nor a "
                      f"{btsx_report.VERSION} text")


def columns(reports: Sequence[Report]) -> list[str]:
    """The fixed columns, then every fact in the order the logs first give it."""
    facts: list[str] = []
    for r in reports:
        facts += [f for f in r.facts if f not in facts]
    return list(FIXED_COLUMNS) + facts


def markdown(reports: Sequence[Report]) -> str:
    cols = columns(reports)

    def row(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    out = [row(cols), row(["---"] * len(cols))]
    out += [row([r.column(c) for c in cols]) for r in reports]
    return "\n".join(out) + "\n"


def csv_text(reports: Sequence[Report]) -> str:
    cols = columns(reports)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in reports:
        w.writerow([r.column(c) for c in cols])
    return buf.getvalue()


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="btsx-char", description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", nargs="+", type=Path, help="serial logs of btsx runs")
    ap.add_argument("--csv", action="store_true", help="CSV instead of a Markdown table")
    args = ap.parse_args(argv)
    reports, errors = [], []
    for path in args.logs:
        try:
            reports.append(read_report(path))
        except ReportError as e:
            errors.append(str(e))
    for message in errors:
        print(f"btsx-char: {message}", file=sys.stderr)
    if errors:
        return 1
    sys.stdout.write(csv_text(reports) if args.csv else markdown(reports))
    return 0
