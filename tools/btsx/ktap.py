"""Parse and strictly validate the KTAP v1 log btsx prints on COM1.

The kernel's output format (README.md, "Reading the results"):

    KTAP version 1
    # key: value            header (btsx, cpu, boot, cmdline, seed, backend)
    1..N
    # diagnostics           attach to the next result line
    ok 1 name
    not ok 2 name # TIMEOUT after 2000 ms
    # P passed, F failed, S skipped
    # verdict: PASS|FAIL    (optional)

Everything before the header is firmware/GRUB noise and is ignored.  Only
the standard library is used so the runner works on any CI machine.
"""

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

HEADER = "KTAP version 1"
# CSI sequences (colours, cursor moves), OSC strings and two-byte escapes:
# GRUB and OVMF paint the serial console with them.
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_=>])")
_PLAN = re.compile(r"1\.\.([0-9]+)")
_RESULT = re.compile(r"(ok|not ok) ([1-9][0-9]*)(.*)")
_SUMMARY = re.compile(r"# ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped")
_HEADER_KV = re.compile(r"# ([a-z]+): ?(.*)")

OUTCOMES = ("pass", "fail", "skip", "timeout")
# Directives each result kind may carry. TODO/XFAIL on an ok line are a pass
# with a note; anything else (e.g. "ok # TIMEOUT", "not ok # SKIP") is
# contradictory and rejected rather than guessed at.
_ALLOWED = {True: {"", "SKIP", "TODO", "XFAIL"},
            False: {"", "TIMEOUT", "ERROR", "TODO", "XFAIL"}}
_KNOWN = _ALLOWED[True] | _ALLOWED[False]


def clean(line: str) -> str:
    """Drop escape sequences and carriage returns from one raw log line."""
    return _ANSI.sub("", line).replace("\r", "").rstrip()


def is_summary(line: str) -> bool:
    return _SUMMARY.fullmatch(clean(line)) is not None


def is_result(line: str) -> bool:
    """A top-level result line ("ok N ..." or "not ok N ...")."""
    return _RESULT.fullmatch(clean(line)) is not None


@dataclass
class Result:
    number: int
    ok: bool
    name: str
    directive: str = ""
    reason: str = ""
    diag: list[str] = field(default_factory=list)

    @property
    def outcome(self) -> str:
        """One of OUTCOMES: what --expect compares against."""
        if self.directive == "SKIP":
            return "skip"
        if self.ok:
            return "pass"
        return "timeout" if self.directive == "TIMEOUT" else "fail"


@dataclass
class Report:
    found: bool = False
    header: dict[str, str] = field(default_factory=dict)
    plan: int | None = None
    results: list[Result] = field(default_factory=list)
    summary: tuple[int, int, int] | None = None
    verdict: str | None = None
    kernel_errors: list[str] = field(default_factory=list)     # '# error:' lines
    errors: list[str] = field(default_factory=list)            # validation failures
    # False when a TAP consumer (prove) must reject the stream too: plan
    # missing/repeated, numbering broken.  Used to cross-check with prove.
    tap_ok: bool = True
    body: list[str] = field(default_factory=list)              # cleaned lines after the header

    @property
    def valid(self) -> bool:
        return not self.errors

    def counts(self) -> tuple[int, int, int]:
        """(passed, failed, skipped) as the kernel's summary line counts them."""
        outs = [r.outcome for r in self.results]
        return (outs.count("pass"), outs.count("fail") + outs.count("timeout"),
                outs.count("skip"))

    def exit_code(self) -> int | None:
        """The isa-debug-exit code these results call for, None without a plan."""
        if self.plan is None:
            return None
        if self.plan == 0:
            return 2
        return 1 if self.counts()[1] else 0

    def tap_text(self) -> str:
        """The body as TAP 13 (Test::Harness 3.44 rejects version 14) for prove."""
        return "TAP version 13\n" + "".join(line + "\n" for line in self.body)


def parse(text: str) -> Report:
    """Parse a whole serial log (str) into a Report, recording every violation."""
    rep = Report()
    lines = text.split("\n")
    start = None
    for i, raw in enumerate(lines):
        # endswith: the firmware's last output may lack a newline.
        if clean(raw).endswith(HEADER):
            start = i
            break
    if start is None:
        rep.errors.append("no 'KTAP version 1' header in the log (kernel never started?)")
        rep.tap_ok = False
        return rep
    rep.found = True

    def err(lineno: int, msg: str, tap: bool = False) -> None:
        rep.errors.append(f"line {lineno + 1}: {msg}")
        if tap:
            rep.tap_ok = False

    diag: list[str] = []
    seen: set[int] = set()
    for i in range(start + 1, len(lines)):
        line = clean(lines[i])
        if not line:
            continue
        rep.body.append(line)
        m_sum = _SUMMARY.fullmatch(line)
        if line.endswith(HEADER):
            err(i, "second KTAP header (did the machine reboot?)")
        elif m_sum:
            if rep.summary is not None:
                err(i, "summary line repeated")
            else:
                passed, failed, skipped = (int(x) for x in m_sum.groups())
                rep.summary = (passed, failed, skipped)
        elif line.startswith("#"):
            kv = _HEADER_KV.fullmatch(line)
            if kv and kv.group(1) == "verdict":
                rep.verdict = kv.group(2)
            elif kv and kv.group(1) == "error":
                rep.kernel_errors.append(kv.group(2))
            elif rep.plan is None and not rep.results:
                if kv:                    # header; other lines are banners
                    rep.header.setdefault(kv.group(1), kv.group(2))
            else:
                diag.append(line)
        elif m_plan := _PLAN.fullmatch(line):
            n = int(m_plan.group(1))
            if rep.plan is not None:
                err(i, f"plan repeated ({line})", tap=True)
            elif rep.results or rep.summary:
                err(i, "plan after results or summary; it must come first")
            else:
                rep.plan = n
        elif m_res := _RESULT.fullmatch(line):
            res = _parse_result(m_res, diag, functools.partial(err, i))
            diag = []
            if rep.plan is None:
                err(i, f"result {res.number} before the plan")
            if rep.summary is not None:
                err(i, f"result {res.number} after the summary")
            if res.number in seen:
                err(i, f"result number {res.number} duplicated", tap=True)
            elif res.number != len(rep.results) + 1:
                err(i, f"result {res.number} out of sequence: expected "
                    f"{len(rep.results) + 1}", tap=True)
            if rep.plan is not None and res.number > rep.plan:
                err(i, f"result {res.number} outside plan 1..{rep.plan}", tap=True)
            seen.add(res.number)
            rep.results.append(res)
        else:
            err(i, f"unexpected line {line[:60]!r}")

    errors, tap_ok = _totals_problems(rep)
    rep.errors += errors
    rep.tap_ok = rep.tap_ok and tap_ok
    return rep


def _parse_result(m: re.Match[str], diag: list[str], err: Callable[[str], None]) -> Result:
    """One result line, with the diagnostics that came before it."""
    ok, number, rest = m.group(1) == "ok", int(m.group(2)), m.group(3)
    name, _, directive = rest.partition(" # ")
    name = name[1:] if name.startswith(" ") else name
    res = Result(number, ok, name, diag=diag)
    if not rest.startswith(" ") or not name or name != name.strip() or "#" in name:
        err(f"malformed result line: '{m.group(0)}' (want '[not ]ok N name[ # DIRECTIVE reason]')")
    if directive:
        res.directive, _, res.reason = directive.partition(" ")
        if res.directive not in _KNOWN:
            err(f"unknown directive '{res.directive}' in result {number}")
        elif res.directive not in _ALLOWED[ok]:
            err(f"'{m.group(1)}' with # {res.directive} is contradictory (result {number})")
            res.directive = ""      # count it by its ok/not ok word alone
    return res


def _totals_problems(rep: Report) -> tuple[list[str], bool]:
    """(errors, whether prove would still accept it) of the plan, summary and verdict
    against the results."""
    errors, tap_ok = [], True
    if rep.plan is None:
        errors.append("no plan line '1..N'")
        tap_ok = False
    elif len(rep.results) != rep.plan:
        errors.append(f"plan 1..{rep.plan} but {len(rep.results)} result(s)")
        tap_ok = False
    if rep.summary is None:
        errors.append("log ends without the '# P passed, F failed, S skipped' "
                      "summary (crash, hang or timeout?)")
    elif rep.summary != rep.counts():
        errors.append("summary says %d passed, %d failed, %d skipped but the results "
                      "give %d, %d, %d" % (rep.summary + rep.counts()))
    if rep.verdict is not None and rep.plan:
        want = "FAIL" if rep.counts()[1] else "PASS"
        if rep.verdict != want:
            errors.append(f"'# verdict: {rep.verdict}' but the results call for {want}")
    return errors, tap_ok
