"""Property-based tests (Hypothesis, Debian's python3-hypothesis) of the parsers that read
what a machine printed: the KTAP validator, the btsx-report/1 parser, the characterisation
log reader and the log file reader. Whatever the input, each answers (valid, or rejected
with a reason) and never raises anything else; well-formed input is accepted."""
import os
import tempfile
import unittest
from pathlib import Path

from hypothesis import given, settings, strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.database import DirectoryBasedExampleDatabase

from btsx import char, ktap, logs, report

# Lines near the grammar, so that the parsers' branches are reached, mixed with any text.
KTAP_LINES = st.one_of(
    st.sampled_from(["KTAP version 1", "1..0", "1..3", "# verdict: PASS", "# error: oops",
                     "# 1 passed, 0 failed, 0 skipped", "ok 1 a.b", "not ok 2 c # TIMEOUT x",
                     "ok 3 d # SKIP why", "# backend: model", "", "\r", "ok 1", "1..-1"]),
    st.builds(lambda ok, n, name: f"{'ok' if ok else 'not ok'} {n} {name}",
              st.booleans(), st.integers(-2, 12), st.text(max_size=12)),
    st.text(max_size=40),
)
# Hypothesis's files (its caches, and the examples that once failed, replayed first) live
# under build/, so that make clean removes them and the source tree stays clean.
HOME = Path(__file__).resolve().parent.parent / "build" / "hypothesis"
set_hypothesis_home_dir(str(HOME))  # type: ignore[no-untyped-call]  # untyped in 6.67
DATABASE = DirectoryBasedExampleDatabase(str(HOME / "examples"))
SETTINGS = settings(max_examples=150, deadline=None, database=DATABASE)


class KtapProperties(unittest.TestCase):
    @SETTINGS
    @given(st.lists(KTAP_LINES, max_size=25))
    def test_any_lines_validate_or_give_reasons(self, lines: list[str]) -> None:
        rep = ktap.parse("\n".join(lines))
        self.assertIsInstance(rep, ktap.Report)
        self.assertTrue(all(isinstance(e, str) and e for e in rep.errors))
        if not rep.found:
            self.assertFalse(rep.valid)
        rep.counts()
        rep.exit_code()

    @SETTINGS
    @given(st.lists(st.sampled_from(["pass", "fail", "skip", "timeout"]), max_size=12),
           st.lists(st.text(alphabet="abcxyz.", min_size=1, max_size=10), min_size=12,
                    max_size=12))
    def test_well_formed_documents_validate(self, outcomes: list[str], names: list[str]) -> None:
        lines = ["firmware noise", "KTAP version 1", "# backend: model", f"1..{len(outcomes)}"]
        for i, (o, name) in enumerate(zip(outcomes, names), 1):
            lines.append({"pass": f"ok {i} {name}", "fail": f"not ok {i} {name}",
                          "skip": f"ok {i} {name} # SKIP why",
                          "timeout": f"not ok {i} {name} # TIMEOUT after 5 s"}[o])
        p, f, s = (outcomes.count("pass"), outcomes.count("fail") + outcomes.count("timeout"),
                   outcomes.count("skip"))
        lines.append(f"# {p} passed, {f} failed, {s} skipped")
        rep = ktap.parse("\n".join(lines) + "\n")
        self.assertEqual(rep.errors, [])
        self.assertEqual(rep.counts(), (p, f, s))
        self.assertEqual([r.outcome for r in rep.results], outcomes)


class ReportProperties(unittest.TestCase):
    @SETTINGS
    @given(st.lists(st.one_of(st.sampled_from(["btsx-report/1", "n=1/2/3", "r=PASS", "more=x",
                                               "s=a:b", "f=x:y", "v=0.1"]),
                              st.text(max_size=30)), max_size=12))
    def test_any_text_parses_or_gives_reasons(self, lines: list[str]) -> None:
        rep = report.parse("\n".join(lines))
        self.assertTrue(all(isinstance(e, str) and e for e in rep.errors))

    @SETTINGS
    @given(st.text(max_size=40))
    def test_escaped_values_match_their_source(self, value: str) -> None:
        esc = report.escape(value)
        self.assertTrue(all(0x20 <= ord(c) < 0x7F for c in esc))
        self.assertTrue(report.matches(esc, value))

    @SETTINGS
    @given(st.lists(st.text(max_size=30), max_size=10))
    def test_extract_never_raises(self, body: list[str]) -> None:
        text = report.extract(body)
        self.assertTrue(text is None or isinstance(text, str))


class CharProperties(unittest.TestCase):
    @SETTINGS
    @given(st.lists(st.one_of(st.sampled_from(["# cpu: X (microcode 0x1)", "# backend: model",
                                               "# char: skid 3", "# char: skid 4", "# char:",
                                               "# profile: hw (x)"]),
                              st.text(max_size=40)), max_size=15))
    def test_serial_log_gives_a_report_or_a_reason(self, lines: list[str]) -> None:
        try:
            rep = char.read_serial_log("log", lines)
        except char.ReportError as e:
            self.assertTrue(str(e).startswith("log:"))
        else:
            self.assertTrue(rep is None or isinstance(rep, char.Report))


class LogsProperties(unittest.TestCase):
    @SETTINGS
    @given(st.binary(max_size=200))
    def test_any_bytes_read_as_text(self, data: bytes) -> None:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "serial.log"
            path.write_bytes(data)
            text = logs.read_log(path)
            self.assertEqual(text, data.decode("utf-8", "replace"))
            self.assertEqual(logs.read_text(Path(d) / "missing.log"), "")
            os.unlink(path)


if __name__ == "__main__":
    unittest.main()
