"""The btsx-report/1 block of a serial log (docs/report.md): find it, parse it, and check
it against the KTAP results of the same log.

On the log the report sits between two marker lines after the KTAP summary, each of its
lines a KTAP diagnostic ("# " and one report line):

    # ---- begin btsx-report/1 ----
    # btsx-report/1
    # v=0.1.0
    # n=12/4/2
    # f=selftest.fail:want 5, got 4
    # r=FAIL
    # ---- end btsx-report/1 ----
"""

import re
from dataclasses import dataclass, field

from btsx import ktap

VERSION = "btsx-report/1"
BEGIN = f"# ---- begin {VERSION} ----"
END = f"# ---- end {VERSION} ----"
MAX_BYTES = 154         # tests/report.h REPORT_MAX
VALUE_MAX = 28          # tests/report.h REPORT_VALUE_MAX
CUT = "~"               # tests/report.h REPORT_CUT
FIXED = ("v", "n", "r")
VERDICTS = {"PASS", "FAIL", "NONE"}
_KEY = re.compile(r"[a-z]+")
_COUNTS = re.compile(r"([0-9]+)/([0-9]+)/([0-9]+)")


@dataclass
class Report:
    text: str = ""                                  # the report itself, newlines included
    facts: dict[str, str] = field(default_factory=dict)
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # (f|t, name, why)
    skips: list[tuple[int, str]] = field(default_factory=list)          # (count, reason)
    more: int = 0
    counts: tuple[int, int, int] | None = None
    verdict: str | None = None
    errors: list[str] = field(default_factory=list)


def extract(body: list[str]) -> str | None:
    """The report text from a KTAP body (cleaned lines), None without a begin marker.
    An unterminated block yields what it has, which then fails to parse."""
    try:
        start = body.index(BEGIN)
    except ValueError:
        return None
    lines = []
    for line in body[start + 1:]:
        if line == END:
            break
        lines.append(line[2:] if line.startswith("# ") else line)
    else:
        lines.append("(no end marker)")
    return "".join(line + "\n" for line in lines)


def escape(value: str) -> str:
    """A value as the kernel writes it: '\\\\' and '\\xHH' outside printable ASCII."""
    out = []
    for b in value.encode("latin-1", "replace"):
        out.append("\\\\" if b == 0x5C else chr(b) if 0x20 <= b < 0x7F else f"\\x{b:02x}")
    return "".join(out)


def matches(reported: str, value: str) -> bool:
    """Whether a reported value is value (escaped), whole or cut with CUT."""
    full = escape(value)
    if reported == full:
        return True
    return reported.endswith(CUT) and full.startswith(reported[:-len(CUT)]) \
        and len(full) > len(reported) - len(CUT)


def parse(text: str) -> Report:
    rep = Report(text=text)
    if len(text.encode()) > MAX_BYTES:
        rep.errors.append(f"report is {len(text.encode())} bytes, over the {MAX_BYTES} limit")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0] != VERSION:
        rep.errors.append(f"report does not start with '{VERSION}'")
        return rep
    for line in lines[1:]:
        key, sep, value = line.partition("=")
        if not sep or not _KEY.fullmatch(key):
            rep.errors.append(f"report line {line!r} is not key=value")
            continue
        if len(value) > VALUE_MAX and key not in FIXED:
            rep.errors.append(f"report value of {key}= is over {VALUE_MAX} bytes")
        if key in ("f", "t"):
            name, _, why = value.partition(":")
            rep.failures.append((key, name, why))
        elif key == "s":
            count, _, reason = value.partition(":")
            if not count.isdigit():
                rep.errors.append(f"report line {line!r}: want s=COUNT:reason")
            else:
                rep.skips.append((int(count), reason))
        elif key == "more":
            rep.more = int(value) if value.isdigit() else -1
        elif key == "n":
            m = _COUNTS.fullmatch(value)
            if m:
                p, f, s = (int(x) for x in m.groups())
                rep.counts = (p, f, s)
            else:
                rep.errors.append(f"report line {line!r}: want n=P/F/S")
        elif key == "r":
            rep.verdict = value
        else:
            rep.facts.setdefault(key, value)
    if rep.counts is None or rep.verdict is None or "v" not in rep.facts:
        rep.errors.append("report lacks one of v=, n=, r=")
    if lines[-1:] and not lines[-1].startswith("r="):
        rep.errors.append("report does not end with r=")
    if rep.verdict is not None and rep.verdict not in VERDICTS:
        rep.errors.append(f"report verdict r={rep.verdict} is none of {sorted(VERDICTS)}")
    return rep


def check(rep: Report, k: ktap.Report) -> list[str]:
    """Where the report disagrees with the KTAP results of the same log."""
    problems = list(rep.errors)
    if rep.counts is not None and rep.counts != k.counts():
        problems.append("report says n=%d/%d/%d but the KTAP results give %d/%d/%d"
                        % (rep.counts + k.counts()))
    want = "NONE" if not k.plan else "FAIL" if k.counts()[1] else "PASS"
    if rep.verdict is not None and rep.verdict != want:
        problems.append(f"report says r={rep.verdict} but the KTAP results call for {want}")
    failed = [r for r in k.results if r.outcome in ("fail", "timeout")]
    # The report lists the first failures in run order; more= counts what it left out.
    for i, (key, name, _why) in enumerate(rep.failures):
        if i >= len(failed) or failed[i].name != name:
            problems.append(f"report lists {key}={name}, but failure {i + 1} of the KTAP "
                            f"results is {failed[i].name if i < len(failed) else 'none'}")
        elif (key == "t") != (failed[i].outcome == "timeout"):
            problems.append(f"report says {key}= for {name}, KTAP says {failed[i].outcome}")
    missing = len(failed) - len(rep.failures)
    if missing > 0 and rep.more < missing:
        problems.append(f"report lists {len(rep.failures)} of {len(failed)} failures and "
                        f"more={rep.more}")
    reasons: dict[str, int] = {}
    for r in k.results:
        if r.outcome == "skip":
            reasons[r.reason] = reasons.get(r.reason, 0) + 1
    for count, reason in rep.skips:
        hits = [why for why in reasons if matches(reason, why or "-")]
        if not hits:
            problems.append(f"report skip reason {reason!r} is no KTAP skip reason")
        else:
            total = sum(reasons[w] for w in hits)
            # A cut reason may stand for several that start alike: then at most their sum.
            if count < 1 or count > total or (len(hits) == 1 and count != total):
                problems.append(f"report says {count} skipped for {reason!r}, KTAP says {total}")
    left = max(missing, 0) + len(reasons) - len(rep.skips)
    if left > 0 and rep.more < left:
        problems.append(f"report leaves out {left} failure/skip line(s) but says more={rep.more}")
    return problems
