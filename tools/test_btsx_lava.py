"""Self-tests of btsx-lava (btsx.lava): the monitor pattern under pexpect's way of matching,
the cases-against-KTAP check, job rendering, and the results command on real lava-run logs.

Run: python3 -m unittest discover -s tools -p 'test_*.py'
The logs in tools/testdata/lava-*.log are lava-run 2023.01's standard output, captured from
`make lava`'s jobs: lava-selftest.log (selftest=1 tests=boot.*,selftest.*, direct) and
lava-direct-msr.log (tests=boot.*,msr.* verbose, direct: two skips), and
lava-direct-naive-pattern.log, every suite on direct with a planted fault: the monitor pattern
'(?<=\\n)(?P<result>not ok|ok) [0-9]+ (?P<test_case_id>[^\\s#]+)', which does not wait for
the end of the line.
"""

import contextlib
import io
import json
import re
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path

from btsx import ktap, lava

DATA = Path(__file__).parent / "testdata"
SELFTEST_LOG = DATA / "lava-selftest.log"
MSR_LOG = DATA / "lava-direct-msr.log"
NAIVE_LOG = DATA / "lava-direct-naive-pattern.log"
SELFTEST_EXPECT = "selftest.fault=fail,selftest.hang=timeout,selftest.fail=fail,selftest.hang_irqoff=timeout"


def monitor_cases(serial: str, chunk: int, pattern: str = lava.PATTERN,
                  fixup: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(name, result) of each case LAVA's monitor records from serial output that arrives
    chunk characters at a time: pexpect (re.DOTALL) searches its buffer for [end, pattern]
    after each read, takes the match that starts first (the earlier pattern on a tie) and
    keeps what follows it."""
    fixup = lava.FIXUP if fixup is None else fixup
    start = serial.index(ktap.HEADER) + len(ktap.HEADER)
    end_re, case_re = re.compile(lava.END, re.DOTALL), re.compile(pattern, re.DOTALL)
    cases: list[tuple[str, str]] = []
    buf, pos = "", start
    while pos < len(serial):
        buf, pos = buf + serial[pos:pos + chunk], pos + chunk
        while True:
            hits = [(m.start(), i, m) for i, m in enumerate((end_re.search(buf), case_re.search(buf)))
                    if m]
            if not hits:
                break
            _, which, m = min(hits, key=lambda h: (h[0], h[1]))
            buf = buf[m.end():]
            if which == 0:
                return cases
            cases.append((m.group("test_case_id"), fixup.get(m.group("result"), m.group("result"))))
    raise AssertionError("the end pattern never matched")


def as_cases(pairs: list[tuple[str, str]]) -> list[dict[str, object]]:
    return [{"definition": "btsx", "result": r, "extra": {"test_case_id": n}} for n, r in pairs]


def serial_of(path: Path) -> str:
    """The serial output a log holds, as the terminal delivered it (CR LF line ends)."""
    return lava.parse_log(path.read_text()).serial.replace("\n", "\r\n")


class MonitorPattern(unittest.TestCase):
    def test_every_chunking_gives_the_ktap_cases(self) -> None:
        for path in (SELFTEST_LOG, MSR_LOG):
            serial = serial_of(path)
            rep = ktap.parse(serial)
            self.assertTrue(rep.valid, rep.errors)
            want = [(r.name, lava.LAVA_OUTCOME[r.outcome]) for r in rep.results]
            for chunk in (1, 2, 3, 5, 7, 16, 64, 4096):
                with self.subTest(log=path.name, chunk=chunk):
                    self.assertEqual(monitor_cases(serial, chunk), want)
                    self.assertEqual(lava.compare(as_cases(want), rep), [])

    def test_line_forms(self) -> None:
        text = ("KTAP version 1\r\n1..7\r\nok 1 a.b\r\nok 2 c.d # SKIP no BTS: CPUID.01H:EDX.DS=0\r\n"
                "not ok 3 e.f # TIMEOUT after 300 ms\r\nnot ok 4 g.h\r\nok 5 i.j # TODO later\r\n"
                "# FAIL: x.c:1: ok 9 fake # SKIP inside a diagnostic\r\nok 6 k.l # SKIP\r\n"
                "ok 7 framework.all_reported\r\n# verdict: FAIL\r\n")
        self.assertEqual(monitor_cases(text, 1), [
            ("a.b", "pass"), ("c.d", "skip"), ("e.f", "fail"), ("g.h", "fail"), ("i.j", "pass"),
            ("k.l", "skip"), ("framework.all_reported", "pass")])

    def test_end_matches_no_tests_run(self) -> None:
        text = "KTAP version 1\r\n# error: bad command line\r\n1..0\r\n# verdict: NO TESTS RUN\r\n"
        self.assertEqual(monitor_cases(text, 4), [])

    def test_pattern_without_the_line_end_is_caught(self) -> None:
        """A planted fault: the pattern as one would first write it, matching as soon as a name
        and a result are there. Read a few characters at a time it records truncated names and
        skips as passes, and compare() reports both."""
        naive = r"(?<=\n)(?P<result>not ok|ok) [0-9]+ (?P<test_case_id>[^\s#]+)"
        serial = serial_of(MSR_LOG)
        rep = ktap.parse(serial)
        problems = lava.compare(as_cases(monitor_cases(serial, 3, naive)), rep)
        self.assertTrue(any("is named" in p for p in problems), problems)
        whole = lava.compare(as_cases(monitor_cases(serial, 4096, naive)), rep)
        self.assertTrue(any("msr.gp_contained as pass" in p for p in whole), whole)
        # Without the line start too, '# boot.memmap took 8830 us' holds 'ok 8830 us'.
        loose = lava.compare(as_cases(monitor_cases(serial, 4096, naive[len("(?<=\\n)"):])), rep)
        self.assertIn("LAVA test case 1 'us' (pass) has no KTAP result", loose)

    def test_matches_lava_runs_own_records(self) -> None:
        """The logs' own cases (what lava-run recorded with this pattern) are the KTAP's."""
        for path in (SELFTEST_LOG, MSR_LOG):
            log = lava.parse_log(path.read_text())
            rep = ktap.parse(log.serial)
            self.assertEqual(len(log.cases), rep.plan)
            self.assertEqual(lava.compare(log.cases, rep), [])

    def test_lava_run_with_a_naive_pattern(self) -> None:
        """What lava-run itself recorded with the planted pattern: names cut where a read
        ended, and skips as passes. compare() names each; the KTAP itself is fine."""
        log = lava.parse_log(NAIVE_LOG.read_text())
        rep = ktap.parse(log.serial)
        self.assertTrue(rep.valid, rep.errors)
        problems = lava.compare(log.cases, rep)
        self.assertIn("LAVA test case 2 is named 'boot.frame', KTAP result 2 'boot.frames'", problems)
        self.assertIn("LAVA records msr.gp_contained as pass, KTAP as skip (LAVA: skip)", problems)
        self.assertEqual(lava.compare(as_cases(monitor_cases(log.serial.replace("\n", "\r\n"), 7)),
                                      rep), [])


class Compare(unittest.TestCase):
    def setUp(self) -> None:
        log = lava.parse_log(MSR_LOG.read_text())
        self.rep = ktap.parse(log.serial)
        self.cases = log.cases

    def test_missing_case(self) -> None:
        problems = lava.compare(self.cases[:4] + self.cases[5:], self.rep)
        self.assertIn("LAVA recorded 10 test case(s), the plan is 1..11", problems)
        self.assertEqual(problems[1:], ["LAVA has no test case for result 5 boot.cpu_state"])

    def test_timeouts_not_matched(self) -> None:
        """A planted fault: a pattern that matches no '# TIMEOUT' line."""
        log = lava.parse_log(SELFTEST_LOG.read_text())
        rep = ktap.parse(log.serial)
        pattern = lava.PATTERN.replace("(?: # [^\\r\\n]*)?", "(?: # (?!TIMEOUT)[^\\r\\n]*)?")
        self.assertNotEqual(pattern, lava.PATTERN)
        cases = as_cases(monitor_cases(log.serial.replace("\n", "\r\n"), 5, pattern))
        self.assertEqual(lava.compare(cases, rep), [
            "LAVA recorded 8 test case(s), the plan is 1..10",
            "LAVA has no test case for result 7 selftest.hang",
            "LAVA has no test case for result 9 selftest.hang_irqoff"])

    def test_skip_recorded_as_pass(self) -> None:
        cases = json.loads(json.dumps(self.cases))
        cases[7]["result"] = "pass"
        self.assertEqual(lava.compare(cases, self.rep),
                         ["LAVA records msr.gp_contained as pass, KTAP as skip (LAVA: skip)"])

    def test_truncated_name(self) -> None:
        cases = json.loads(json.dumps(self.cases))
        cases[6]["extra"]["test_case_id"] = "msr.write_round"
        self.assertEqual(lava.compare(cases, self.rep),
                         ["LAVA test case 7 is named 'msr.write_round', KTAP result 7 "
                          "'msr.write_roundtrip'"])

    def test_extra_case(self) -> None:
        problems = lava.compare(self.cases + self.cases[-1:], self.rep)
        self.assertEqual(len(problems), 2, problems)


class Render(unittest.TestCase):
    TEMPLATES = Path(__file__).parent.parent / "lava" / "jobs"

    def test_direct_and_iso_arguments(self) -> None:
        vals = lava.values("qemu-bios", "tests=bts.*,ds.* verbose", {"iso": "file:///x.iso"}, "")
        self.assertEqual(vals["iso_arg"],
                         '-cdrom {iso} -fw_cfg "name=opt/btsx/cmdline,string=tests=bts.*,,ds.* verbose"')
        self.assertEqual(vals["kernel_arg"], '-kernel {kernel} -append "tests=bts.*,ds.* verbose"')
        self.assertEqual(lava.values("x", "", {}, "")["kernel_arg"], "-kernel {kernel}")

    def test_rendered_values_are_yaml_scalars(self) -> None:
        text = (self.TEMPLATES / "qemu-direct.yaml").read_text()
        job = lava.render(text, lava.values("qemu-direct", "tests=a", {"kernel": "file:///k"}, "j"))
        self.assertIn('image_arg: "-kernel {kernel} -append \\"tests=a\\""', job)
        self.assertNotIn("${", job)

    def test_unknown_placeholder(self) -> None:
        with self.assertRaisesRegex(ValueError, r"no value for \$\{iso_url\}"):
            lava.render((self.TEMPLATES / "qemu-bios.yaml").read_text(), lava.values("b", "", {}, ""))

    def test_bad_command_line(self) -> None:
        for bad in ('tests="a"', "x={y}", "a\\b"):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                lava.values("x", bad, {}, "")

    def test_grub_commands(self) -> None:
        iso = lava.values("g", "tests=bts.*", {"iso": "http://h/btsx.iso"}, "")
        text_mode = 'if [ "$grub_platform" = "pc" ]; then set gfxpayload=text; fi'
        self.assertEqual(iso["grub_commands"], [
            "net_bootp", "loopback iso (tftp,{SERVER_IP})/{KERNEL}", "set root=(iso)", text_mode,
            "multiboot2 /boot/btsx.elf tests=bts.*", "boot"])
        kernel = lava.values("g", "", {"kernel": "http://h/btsx.elf"}, "")
        self.assertEqual(kernel["grub_commands"], [
            "net_bootp", "set root=(tftp,{SERVER_IP})", text_mode, "multiboot2 /{KERNEL}", "boot"])

    def test_suites_and_timeouts(self) -> None:
        self.assertEqual(lava.selected_suites("tests=bts.*"), ["bts", "bts.task"])
        self.assertEqual(lava.selected_suites("tests=bts.task.* verbose"), ["bts.task"])
        self.assertEqual(lava.selected_suites("tests=boot.memmap,ds.stream"), ["boot", "ds"])
        self.assertEqual(lava.selected_suites("tests=b*"), ["boot", "bench", "bts", "bts.task"])
        self.assertNotIn("selftest", lava.selected_suites(""))
        self.assertIn("selftest", lava.selected_suites("selftest=1"))
        self.assertEqual(lava.test_seconds("tests=boot.*"), lava.BOOT_SECONDS + 20)


class Results(unittest.TestCase):
    def run_main(self, *args: str) -> tuple[int, str]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = lava.main(["results", *args])
        return code, out.getvalue()

    def test_selftest_as_expected(self) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            junit = Path(tmp) / "junit.xml"
            code, out = self.run_main(f"direct={SELFTEST_LOG}", "--expect", SELFTEST_EXPECT,
                                      "--junit", str(junit))
            self.assertEqual(code, 0, out)
            self.assertEqual(out.splitlines()[-1], "10 passed, 0 failed, 0 skipped")
            suite = ET.parse(junit).getroot()[0]
            self.assertEqual((suite.get("name"), suite.get("tests"), suite.get("failures")),
                             ("direct", "11", "0"))

    def test_selftest_without_expectations_fails(self) -> None:
        code, out = self.run_main(f"direct={SELFTEST_LOG}")
        self.assertEqual(code, 1)
        self.assertEqual(out.splitlines()[-1], "6 passed, 4 failed, 0 skipped")
        self.assertIn("direct: selftest.hang: timeout (after 300 ms)  <-- FAILED", out)

    def test_wrong_configuration(self) -> None:
        code, out = self.run_main(f"bios={MSR_LOG}")
        self.assertEqual(code, 1)
        self.assertIn("kernel says '# boot: direct', expected bios", out)

    def test_lava_disagreeing_fails(self) -> None:
        text = MSR_LOG.read_text().replace('"result": "skip"', '"result": "pass"', 1)
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "lava.log"
            log.write_text(text)
            code, out = self.run_main(f"direct={log}")
        self.assertEqual(code, 1)
        self.assertIn("LAVA records msr.gp_contained as pass, KTAP as skip", out)

    def test_unfinished_job(self) -> None:
        lines = MSR_LOG.read_text().splitlines()
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "lava.log"
            log.write_text("\n".join(lines[:len(lines) // 2]) + "\n")
            code, out = self.run_main(f"direct={log}")
        self.assertEqual(code, 1)
        self.assertIn("lava-run's log has no job result", out)

    def test_usage(self) -> None:
        self.assertEqual(self.run_main("direct=/no/such/log")[0], 2)
        with contextlib.redirect_stderr(io.StringIO()), self.assertRaises(SystemExit) as e:
            lava.main(["results", "nosuchconfig=" + str(MSR_LOG)])
        self.assertEqual(e.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
