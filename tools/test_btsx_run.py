"""Self-tests of the KTAP validator (btsx.ktap) and the runner's decisions (btsx.runner).

Run: python3 -m unittest discover -s tools -p 'test_*.py'
No emulator is needed: QEMU is replaced by a small Python script that
writes a canned serial log and exits with a chosen status.
"""

import contextlib
import io
import os
import shutil
import sys
import tempfile
import textwrap
import threading
import time
import unittest
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from unittest import mock

from btsx import bochs, ktap, logs, runner
from btsx.expect import expected_outcome, glob_matches, parse_expect, parse_expect_header

GOOD = """\
\x1b[2J\x1b[01;01HWelcome to GRUB!\r
  Booting `btsx'\r
\rKTAP version 1
# btsx 0.1.0
# cpu: Intel(R) Core(TM) i7
# boot: direct
# cmdline: tests=boot.* verbose
# seed: 12345
# backend: model (CPUID.01H:EDX.DS=0)
1..5
# memmap: 3 regions
ok 1 boot.memmap
not ok 2 paging.write_text
ok 3 apic.timer # SKIP no LAPIC timer
not ok 4 selftest.hang # TIMEOUT after 2000 ms
ok 5 framework.all_reported
# 2 passed, 2 failed, 1 skipped
# ---- begin btsx-report/1 ----
# btsx-report/1
# v=0.1.0
# be=model (CPUID.01H:EDX.DS=0)
# n=2/2/1
# f=paging.write_text:-
# t=selftest.hang:after 2000 ms
# s=1:no LAPIC timer
# r=FAIL
# ---- end btsx-report/1 ----
# verdict: FAIL
"""

PASSING = """\
KTAP version 1
# boot: direct
1..3
ok 1 boot.memmap
ok 2 apic.timer # SKIP no LAPIC timer
ok 3 ds.todo # TODO not finished
# 2 passed, 0 failed, 1 skipped
# ---- begin btsx-report/1 ----
# btsx-report/1
# v=0.1.0
# n=2/0/1
# s=1:no LAPIC timer
# r=PASS
# ---- end btsx-report/1 ----
# verdict: PASS
"""

SELFTEST = """\
KTAP version 1
1..4
ok 1 boot.memmap
not ok 2 selftest.fault # ERROR #PF at 0x1234
not ok 3 selftest.hang # TIMEOUT after 2000 ms
not ok 4 selftest.fail
# 1 passed, 3 failed, 0 skipped
# ---- begin btsx-report/1 ----
# btsx-report/1
# v=0.1.0
# n=1/3/0
# f=selftest.fault:-
# t=selftest.hang:after 2000 ms
# f=selftest.fail:-
# r=FAIL
# ---- end btsx-report/1 ----
"""

BAD_CMDLINE = """\
KTAP version 1
# btsx 0.1.0
# error: unknown option 'bogus=1'
1..0
# 0 passed, 0 failed, 0 skipped
# ---- begin btsx-report/1 ----
# btsx-report/1
# v=0.1.0
# n=0/0/0
# r=NONE
# ---- end btsx-report/1 ----
"""

SELFTEST_EXPECT = {"selftest.fault": "fail", "selftest.hang": "timeout", "selftest.fail": "fail"}


def edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


class KtapParser(unittest.TestCase):
    def assertInvalid(self, text: str, fragment: str, tap_ok: bool | None = None) -> ktap.Report:
        rep = ktap.parse(text)
        self.assertFalse(rep.valid, f"accepted:\n{text}")
        self.assertTrue(any(fragment in e for e in rep.errors), rep.errors)
        if tap_ok is not None:
            self.assertEqual(rep.tap_ok, tap_ok, rep.errors)
        return rep

    def test_example_from_the_contract(self) -> None:
        rep = ktap.parse(GOOD)
        self.assertEqual(rep.errors, [])
        self.assertEqual(rep.plan, 5)
        self.assertEqual(rep.counts(), (2, 2, 1))
        self.assertEqual([r.outcome for r in rep.results], ["pass", "fail", "skip", "timeout", "pass"])
        self.assertEqual(rep.results[2].reason, "no LAPIC timer")
        self.assertEqual(rep.results[0].diag, ["# memmap: 3 regions"])
        self.assertEqual(rep.header["boot"], "direct")
        self.assertEqual(rep.header["backend"], "model (CPUID.01H:EDX.DS=0)")
        self.assertEqual(rep.exit_code(), 1)
        self.assertTrue(rep.tap_ok)

    def test_todo_and_xfail_ok_lines_pass(self) -> None:
        rep = ktap.parse(edit(PASSING, "# TODO not finished", "# XFAIL known"))
        self.assertEqual(rep.errors, [])
        self.assertEqual(rep.results[2].outcome, "pass")
        self.assertEqual(ktap.parse(PASSING).exit_code(), 0)

    def test_not_ok_todo_counts_as_failed(self) -> None:
        rep = ktap.parse(edit(edit(PASSING, "ok 3 ds.todo", "not ok 3 ds.todo"),
                              "# 2 passed, 0 failed", "# 1 passed, 1 failed").replace("PASS", "FAIL"))
        self.assertEqual(rep.errors, [])
        self.assertEqual(rep.counts(), (1, 1, 1))

    def test_bad_command_line_log(self) -> None:
        rep = ktap.parse(BAD_CMDLINE)
        self.assertEqual(rep.errors, [])
        self.assertEqual((rep.plan, rep.exit_code()), (0, 2))
        self.assertEqual(rep.kernel_errors, ["unknown option 'bogus=1'"])

    def test_header_after_noise_without_newline(self) -> None:
        rep = ktap.parse("\x1b[0mGRUB noise" + PASSING)
        self.assertEqual(rep.errors, [])

    def test_no_header(self) -> None:
        self.assertInvalid("SeaBIOS\nBooting from DVD\n", "no 'KTAP version 1'")

    def test_missing_plan(self) -> None:
        self.assertInvalid(edit(PASSING, "1..3\n", ""), "no plan", tap_ok=False)

    def test_repeated_plan(self) -> None:
        self.assertInvalid(edit(PASSING, "1..3\n", "1..3\n1..3\n"), "plan repeated", tap_ok=False)

    def test_plan_after_results(self) -> None:
        self.assertInvalid(edit(edit(PASSING, "1..3\n", ""), "# 2 passed", "1..3\n# 2 passed"),
                           "plan after results")

    def test_duplicated_number(self) -> None:
        self.assertInvalid(edit(PASSING, "ok 2 apic", "ok 1 apic"), "number 1 duplicated", tap_ok=False)
        rep = self.assertInvalid(edit(PASSING, "ok 3 ds.todo", "ok 2 ds.todo"), "duplicated")
        self.assertFalse(rep.tap_ok)

    def test_gap(self) -> None:
        text = edit(edit(PASSING, "ok 3 ds.todo # TODO not finished", "ok 4 ds.todo"),
                    "1..3", "1..4")
        self.assertInvalid(text, "out of sequence: expected 3", tap_ok=False)

    def test_extra_result(self) -> None:
        self.assertInvalid(edit(PASSING, "# 2 passed, 0 failed", "ok 4 extra\n# 3 passed, 0 failed"),
                           "outside plan 1..3", tap_ok=False)

    def test_missing_results(self) -> None:
        self.assertInvalid(edit(PASSING, "1..3", "1..4"), "plan 1..4 but 3 result(s)", tap_ok=False)

    def test_wrong_summary(self) -> None:
        self.assertInvalid(edit(GOOD, "# 2 passed, 2 failed, 1 skipped", "# 3 passed, 2 failed, 1 skipped"),
                           "summary says 3 passed")

    def test_no_summary(self) -> None:
        cut = PASSING[:PASSING.index("# 2 passed")]
        rep = self.assertInvalid(cut, "without the '# P passed")
        self.assertTrue(rep.tap_ok)

    def test_repeated_summary(self) -> None:
        self.assertInvalid(PASSING + "# 2 passed, 0 failed, 1 skipped\n", "summary line repeated")

    def test_result_after_summary(self) -> None:
        self.assertInvalid(edit(PASSING, "ok 3 ds.todo # TODO not finished\n# 2 passed, 0 failed, 1 skipped",
                                "# 1 passed, 0 failed, 1 skipped\nok 3 ds.todo"), "after the summary")

    def test_result_before_plan(self) -> None:
        self.assertInvalid(edit(PASSING, "1..3\nok 1 boot.memmap", "ok 1 boot.memmap\n1..3"),
                           "before the plan")

    def test_malformed_results(self) -> None:
        for bad in ("ok 1", "ok 1 boot.memmap# SKIP x", "ok 1  boot.memmap", "ok 01 boot.memmap"):
            with self.subTest(bad=bad):
                self.assertFalse(ktap.parse(edit(PASSING, "ok 1 boot.memmap", bad)).valid)

    def test_unknown_or_lowercase_directive(self) -> None:
        self.assertInvalid(edit(PASSING, "# SKIP no", "# skip no"), "unknown directive 'skip'")
        self.assertInvalid(edit(PASSING, "# SKIP no", "# MAYBE no"), "unknown directive")

    def test_contradictory_directives(self) -> None:
        self.assertInvalid(edit(PASSING, "ok 1 boot.memmap", "ok 1 boot.memmap # TIMEOUT x"),
                           "contradictory")
        self.assertInvalid(edit(GOOD, "not ok 2 paging.write_text", "not ok 2 paging.write_text # SKIP x"),
                           "contradictory")

    def test_verdict_must_agree(self) -> None:
        self.assertInvalid(edit(PASSING, "verdict: PASS", "verdict: FAIL"), "results call for PASS")

    def test_reboot_shows_as_second_header(self) -> None:
        self.assertInvalid(PASSING + PASSING, "second KTAP header")

    def test_unexpected_line(self) -> None:
        self.assertInvalid(edit(PASSING, "ok 2 apic", "garbage\nok 2 apic"), "unexpected line")


def judged(text: str, status: int | None = 1, config: str = "direct",
           expect: Mapping[str, str] | None = None, expect_exit: int | None = None,
           append: str | None = None, expect_header: Sequence[tuple[str, str]] = (),
           stop: str | None = None) -> runner.Run:
    run = runner.Run(config, status=status, stop=stop, report=ktap.parse(text))
    return runner.judge(run, config, expect or {}, expect_exit, append, expect_header)


class Decisions(unittest.TestCase):
    def assertFails(self, run: runner.Run, fragment: str) -> None:
        self.assertTrue(run.reasons, "judged good")
        self.assertTrue(any(fragment in r for r in run.reasons), run.reasons)

    def test_all_passed_exit_1(self) -> None:
        run = judged(PASSING, status=1)
        self.assertEqual(run.reasons, [])
        self.assertEqual(run.kernel_code, 0)
        self.assertEqual(runner.tally(run, {}), (2, 0, 1))

    def test_expect_header(self) -> None:
        apic = edit(PASSING, "# boot: direct", "# boot: direct\n"
                    "# apic: xapic, timer 62491000 Hz (hpet; no PIT: channel 2 never counted down)")
        self.assertEqual(judged(apic, expect_header=[("apic", "*(hpet; no PIT:*")]).reasons, [])
        self.assertEqual(judged(apic, expect_header=[("boot", "direct")]).reasons, [])
        self.assertFails(judged(apic, expect_header=[("apic", "*(pit*")]), "does not match")
        self.assertFails(judged(apic, expect_header=[("boot", "dir")]), "does not match")
        self.assertFails(judged(PASSING, expect_header=[("apic", "*")]), "no '# apic:' header")
        self.assertEqual(parse_expect_header(["backend=*(0xc, netburst layout)*"]),
                         (("backend", "*(0xc, netburst layout)*"),))
        for bad in ("backend", "=x", "backend="):
            with self.assertRaises(ValueError):
                parse_expect_header([bad])

    def test_exit_code_must_match_results(self) -> None:
        self.assertFails(judged(PASSING, status=3), "exit code 1 but its results call for 0")
        self.assertFails(judged(SELFTEST, status=1, expect=SELFTEST_EXPECT), "call for 1")

    def test_failures_fail(self) -> None:
        run = judged(GOOD, status=3)
        self.assertFails(run, "2 test(s) failed")
        self.assertFalse(run.run_problem)
        self.assertEqual(runner.tally(run, {}), (2, 2, 1))

    def test_crash_and_odd_statuses(self) -> None:
        run = judged(PASSING, status=0)
        self.assertFails(run, "no proper exit")
        self.assertEqual(runner.tally(run, {}), (2, 1, 1))   # never clean on a crash
        self.assertFails(judged(PASSING, status=-9), "no proper exit")
        self.assertEqual(runner.kernel_exit(5), (2, None))

    def test_timeout_counts_a_failure(self) -> None:
        run = judged(PASSING[:60], status=None, stop="timeout")
        self.assertFails(run, "timeout")
        self.assertEqual(runner.tally(run, {})[1], 1)

    def test_no_exit_after_summary(self) -> None:
        self.assertFails(judged(PASSING, status=None, stop="late"), "did not exit")
        self.assertFails(judged(PASSING, status=None, stop="runaway"), "runaway")

    def test_expectations_hold(self) -> None:
        run = judged(SELFTEST, status=3, expect=SELFTEST_EXPECT)
        self.assertEqual(run.reasons, [])
        self.assertEqual(runner.tally(run, SELFTEST_EXPECT), (4, 0, 0))

    def test_expectation_violated(self) -> None:
        expect = dict(SELFTEST_EXPECT, **{"selftest.hang": "fail"})
        self.assertFails(judged(SELFTEST, status=3, expect=expect), "not as expected")

    def test_expected_test_missing(self) -> None:
        expect = dict(SELFTEST_EXPECT, **{"selftest.gone": "pass"})
        self.assertFails(judged(SELFTEST, status=3, expect=expect), "selftest.gone did not run")

    def test_unlisted_failure_with_expect(self) -> None:
        expect = {"selftest.fault": "fail", "selftest.hang": "timeout"}
        run = judged(SELFTEST, status=3, expect=expect)
        self.assertFails(run, "1 test(s) not as expected")
        self.assertEqual(runner.tally(run, expect), (3, 1, 0))

    def test_expected_failure_that_passes_is_wrong(self) -> None:
        self.assertFails(judged(PASSING, status=1, expect={"boot.memmap": "fail"}), "not as expected")

    def test_bad_command_line(self) -> None:
        self.assertEqual(judged(BAD_CMDLINE, status=5, expect_exit=2).reasons, [])
        self.assertFails(judged(BAD_CMDLINE, status=5), "no test ran (plan 1..0); unknown option")
        self.assertFails(judged(BAD_CMDLINE, status=1, expect_exit=2), "call for 2")
        self.assertFails(judged(GOOD, status=3, expect_exit=2), "exit code 1, expected 2")

    def test_invalid_ktap_fails_even_with_right_code(self) -> None:
        self.assertFails(judged(edit(PASSING, "1..3\n", ""), status=1), "no plan")

    def test_bochs_has_no_exit_code(self) -> None:
        self.assertEqual(judged(edit(PASSING, "boot: direct", "boot: bios"), status=None,
                                config="bochs").reasons, [])
        self.assertFails(judged(SELFTEST, status=None, config="bochs"), "3 test(s) failed")
        self.assertEqual(judged(SELFTEST, status=None, config="bochs", expect=SELFTEST_EXPECT).reasons, [])

    def test_boot_header_must_match_config(self) -> None:
        self.assertFails(judged(PASSING, status=1, config="uefi"), "'# boot: direct', expected uefi")

    def test_parse_expect(self) -> None:
        self.assertEqual(parse_expect(["a=fail,b=timeout", "c=skip"]),
                         {"a": "fail", "b": "timeout", "c": "skip"})
        self.assertEqual(parse_expect(["a=fail,a=fail"]), {"a": "fail"})
        for bad in ("a", "a=broken", "=pass", "a=fail,a=pass"):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                parse_expect([bad])

    def test_expect_globs(self) -> None:
        expect = parse_expect(["bts.task.*=pass,bts.*=skip,ds.?ircular=fail,bts.jmp=fail"])
        want = {"bts.jmp": "fail",              # an exact name wins over every glob
                "bts.fib": "skip", "bts.task.stream": "pass",   # the first glob that matches
                "ds.circular": "fail", "ds.circular_min": None, "btsx.x": None,
                "sched.yield": None}
        for name, outcome in want.items():
            with self.subTest(name=name):
                self.assertEqual(expected_outcome(name, expect), outcome)
        # '*' crosses dots, '?' is one character, and nothing else is special.
        self.assertTrue(glob_matches("*", "a.b.c"))
        self.assertFalse(glob_matches("a?c", "ac"))
        self.assertFalse(glob_matches("a.[bc]", "a.b"))
        self.assertTrue(glob_matches("a.[bc]", "a.[bc]"))

    def test_hw_backend_must_skip(self) -> None:
        """make selftest's backend=hw run: the BTS suites skip, the scheduler passes."""
        hw = parse_expect(["bts.*=skip,ds.*=skip,sched.*=pass"])
        skipped = """\
KTAP version 1
# boot: direct
# backend: none (backend=hw: CPUID.01H:EDX.DS=0)
1..5
ok 1 bts.jmp # SKIP no BTS backend: backend=hw: CPUID.01H:EDX.DS=0
ok 2 ds.circular # SKIP no BTS backend: backend=hw: CPUID.01H:EDX.DS=0
ok 3 sched.yield
ok 4 bts.task.stream # SKIP no BTS backend: backend=hw: CPUID.01H:EDX.DS=0
ok 5 framework.all_reported
# 2 passed, 0 failed, 3 skipped
# verdict: PASS
"""
        self.assertEqual(judged(skipped, status=1, expect=hw).reasons, [])
        fell_back = edit(skipped, "ok 2 ds.circular # SKIP no BTS backend: backend=hw: CPUID.01H:EDX.DS=0",
                         "ok 2 ds.circular").replace("2 passed, 0 failed, 3", "3 passed, 0 failed, 2")
        run = judged(fell_back, status=1, expect=hw)
        self.assertFails(run, "1 test(s) not as expected")
        self.assertEqual(runner.tally(run, hw), (2, 1, 2))
        no_ds = edit(skipped, "ds.circular", "bts.circular")
        self.assertFails(judged(no_ds, status=1, expect=hw), "no test matching --expect ds.* ran")
        broken_sched = edit(skipped, "ok 3 sched.yield", "ok 3 sched.yield # SKIP no timer") \
            .replace("2 passed, 0 failed, 3", "1 passed, 0 failed, 4")
        self.assertFails(judged(broken_sched, status=1, expect=hw), "not as expected")

    def test_cmdline_header_must_match_the_options(self) -> None:
        text = edit(PASSING, "# boot: direct", "# boot: direct\n# cmdline: /boot/btsx.elf tests=a.*  b")
        self.assertEqual(judged(text, status=1, append="tests=a.* b").reasons, [])
        self.assertFails(judged(text, status=1, append="tests=a.*"),
                         "kernel says '# cmdline: /boot/btsx.elf tests=a.*  b', but the options")
        self.assertFails(judged(edit(text, "tests=a.*  b", ""), status=1, append="bogus=1"),
                         "but the options given were 'bogus=1'")

    def test_accel_choice(self) -> None:
        no = lambda: (False, "/dev/kvm absent")  # noqa: E731
        yes = lambda: (True, "/dev/kvm works")   # noqa: E731
        boots = lambda: (True, "a test boot reached its verdict")    # noqa: E731
        hangs = lambda: (False, "a test boot gave no output in 5 s")  # noqa: E731
        unused = lambda: self.fail("test boot without a device")     # noqa: E731
        self.assertEqual(runner.choose_accel("auto", no, unused),
                         ("tcg", "KVM unusable: /dev/kvm absent"))
        self.assertEqual(runner.choose_accel("auto", yes, boots)[0], "kvm")
        self.assertEqual(runner.choose_accel("auto", yes, hangs),
                         ("tcg", "KVM unusable: /dev/kvm works, but a test boot gave no output in 5 s"))
        self.assertEqual(runner.choose_accel("tcg", yes, unused)[0], "tcg")
        self.assertEqual(runner.choose_accel("kvm", yes, boots)[0], "kvm")
        for probe, boot in ((no, unused), (yes, hangs)):
            with self.assertRaisesRegex(ValueError, "--accel kvm but KVM is unusable"):
                runner.choose_accel("kvm", probe, boot)

    def test_kvm_device(self) -> None:
        self.assertEqual(runner.probe_kvm("/nonexistent/kvm"), (False, "/nonexistent/kvm absent"))
        # /dev/null opens read/write but refuses the ioctl, as a device that is not KVM would.
        self.assertEqual(runner.probe_kvm("/dev/null"),
                         (False, "/dev/null unusable: Inappropriate ioctl for device"))
        with mock.patch("fcntl.ioctl", lambda fd, req: 11 if req == 0xAE00 else -1):
            self.assertEqual(runner.probe_kvm("/dev/null"),
                             (False, "/dev/null answers with KVM API version 11, not 12"))


class Commands(unittest.TestCase):
    def setUp(self) -> None:
        self.opts = runner.parse_args(["--build", "/b", "--tag", "t1"])
        self.p = self.opts.files("bios")

    def test_paths_are_tagged(self) -> None:
        self.assertEqual(self.p.log, Path("/b/logs/t1-bios.log"))

    def test_direct_uses_append_only(self) -> None:
        cmd = runner.qemu_command("direct", self.opts.files("direct"), "tests=a,b verbose", "tcg")
        self.assertIn("-append", cmd)
        self.assertEqual(cmd[cmd.index("-append") + 1], "tests=a,b verbose")
        self.assertNotIn("-fw_cfg", cmd)
        self.assertEqual(cmd[cmd.index("-kernel") + 1], "/b/btsx32.elf")

    def test_config_append(self) -> None:
        opts = runner.parse_args(["--append", "tests=a.*", "--config-append", "bochs=volume=quick",
                                  "--config-append", "uefi=verbose"])
        self.assertEqual(opts.append_for("bochs"), "tests=a.* volume=quick")
        self.assertEqual(opts.append_for("uefi"), "tests=a.* verbose")
        self.assertEqual(opts.append_for("direct"), "tests=a.*")
        self.assertEqual(runner.parse_args(["--config-append", "bios=x"]).append_for("bios"), "x")
        for bad in (["--config-append", "bochs"], ["--config-append", "nosuch=x"],
                    ["--config-append", "bios=a", "--config-append", "bios=b"]):
            with self.subTest(bad=bad), contextlib.redirect_stderr(io.StringIO()), \
                    self.assertRaises(SystemExit):
                runner.parse_args(bad)

    def test_smp(self) -> None:
        self.assertEqual(self.opts.smp, 1)
        cmd = runner.qemu_command("direct", self.opts.files("direct"), "", "tcg")
        self.assertEqual(cmd[cmd.index("-smp") + 1], "1")
        opts = runner.parse_args(["--smp", "4", "--config", "direct,bios"])
        self.assertEqual(opts.smp, 4)
        cmd = runner.qemu_command("bios", opts.files("bios"), "", "tcg", smp=opts.smp)
        self.assertEqual(cmd[cmd.index("-smp") + 1], "4")
        opts = runner.parse_args(["--smp", "2", "--config", "bochs-skylake"])
        text = bochs.bochsrc_text(opts.files("bochs-skylake"), "term", "m", Path("/i"), opts.smp)
        self.assertIn("cpu: model=m, count=2, reset_on_triple_fault=0", text)
        opts = runner.parse_args(["--smp", "direct=2", "--smp", "3", "--smp", "uefi=4"])
        self.assertEqual((opts.smp_for("direct"), opts.smp_for("bios"), opts.smp_for("uefi")),
                         (2, 3, 4))
        for bad in (["--smp", "0"], ["--smp", "17"], ["--smp", "x"], ["--smp", "direct=0"],
                    ["--smp", "nosuch=2"], ["--smp", "direct=2", "--smp", "direct=3"],
                    ["--smp", "=2"], ["--smp", "direct="]):
            with self.subTest(bad=bad), contextlib.redirect_stderr(io.StringIO()), \
                    self.assertRaises(SystemExit):
                runner.parse_args(bad)

    def test_qemu_one_at_a_time(self) -> None:
        one = runner.parse_args(["--config", "direct,bios,bochs", "-j", "2"])
        self.assertFalse(runner.qemu_one_at_a_time(one))
        several = runner.parse_args(["--config", "direct,bios,bochs", "-j", "2", "--smp", "direct=2"])
        self.assertTrue(runner.qemu_one_at_a_time(several))
        serial = runner.parse_args(["--config", "direct,bios", "--smp", "2"])
        self.assertFalse(runner.qemu_one_at_a_time(serial))
        bochs_only = runner.parse_args(["--config", "bochs,bochs-skylake", "-j", "2", "--smp", "2"])
        self.assertFalse(runner.qemu_one_at_a_time(bochs_only))
        self.assertEqual(runner.interleave_bochs(["direct", "bios", "uefi", "bochs", "bochs-skylake"]),
                         ["direct", "bochs", "bios", "bochs-skylake", "uefi"])
        self.assertEqual(runner.interleave_bochs(["bochs", "direct"]), ["direct", "bochs"])

    def test_runs_alone(self) -> None:
        cores = os.cpu_count() or 1
        opts = runner.parse_args(["--config", "direct,uefi,bochs-skylake", "-j", "2", "--smp",
                                  f"uefi={cores + 1}", "--smp", f"direct={cores}", "--smp",
                                  f"bochs-skylake={cores + 1}"])
        self.assertTrue(runner.runs_alone("uefi", opts))
        self.assertFalse(runner.runs_alone("direct", opts))         # as many CPUs as cores
        self.assertFalse(runner.runs_alone("bochs-skylake", opts))  # Bochs: simulated clocks
        serial = runner.parse_args(["--config", "uefi", "--smp", f"{cores + 1}"])
        self.assertFalse(runner.runs_alone("uefi", serial))         # nothing beside it anyway

    def test_iso_uses_fw_cfg_with_escaped_commas(self) -> None:
        cmd = runner.qemu_command("bios", self.p, "tests=a,b", "tcg")
        self.assertNotIn("-append", cmd)
        self.assertEqual(cmd[cmd.index("-fw_cfg") + 1], "name=opt/btsx/cmdline,string=tests=a,,b")
        self.assertIn("isa-debug-exit,iobase=0xf4,iosize=0x04", cmd)
        self.assertEqual(cmd[cmd.index("-serial") + 1], "file:/b/logs/t1-bios.log")
        self.assertEqual(cmd[cmd.index("-cpu") + 1], "max")

    def test_empty_append_and_kvm(self) -> None:
        cmd = runner.qemu_command("uefi", self.opts.files("uefi"), "", "kvm")
        self.assertNotIn("-fw_cfg", cmd)
        self.assertNotIn("-append", cmd)
        self.assertEqual(cmd[cmd.index("-cpu") + 1], "host,pmu=on")
        self.assertIn("if=pflash,format=raw,unit=1,file=/b/logs/t1-uefi.vars.fd", cmd)

    def test_bochsrc(self) -> None:
        p = self.opts.files("bochs-skylake")
        text = bochs.bochsrc_text(p, "term", bochs.CPU["bochs-skylake"], p.runiso)
        for line in ("cpu: model=corei7_skylake_x", "boot: cdrom", "port_e9_hack: enabled=1",
                     "com1: enabled=1, mode=file, dev=/b/logs/t1-bochs-skylake.log",
                     "display_library: term",
                     "ata0-master: type=cdrom, path=/b/logs/t1-bochs-skylake.iso",
                     "cpu: model=corei7_skylake_x, count=1, reset_on_triple_fault=0"):
            self.assertIn(line, text)
        self.assertEqual(bochs.CPU["bochs"], "core2_penryn_t9600")

    def test_run_grub_cfg(self) -> None:
        base = bochs.GRUB_CFG.read_text()
        self.assertIn("function btsx {", base)     # the entry below calls it
        text = bochs.run_grub_cfg(base, "  tests=bts.*,ds.?  it's\t$x;y ")
        self.assertTrue(text.startswith(base.rstrip("\n")))
        entry = text[len(base.rstrip("\n")):]
        self.assertIn("    btsx 'tests=bts.*,ds.?' 'it'\\''s' '$x;y'\n", entry)
        self.assertLess(entry.index("--id btsx_run"), entry.index("set default=btsx_run"))
        self.assertTrue(entry.rstrip().endswith("set timeout=0"))

    def test_rfb_gate_serialises_bochs_start(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            lock, log1, log2 = (Path(d, n) for n in ("lock", "b1.txt", "b2.txt"))
            first = bochs.RfbGate(log1, lock)
            got: list[bochs.RfbGate] = []
            second = threading.Thread(target=lambda: got.append(bochs.RfbGate(log2, lock)))
            second.start()
            first.poll(False)                       # Bochs has said nothing yet: keep the lock
            second.join(0.3)
            self.assertEqual(got, [])
            with open(log1, "w") as f:
                f.write("00000000000i[RFB   ] Trying port 5900\n"
                        "00000000000i[RFB   ] listening for connections on port 5900\n")
            first.poll(False)
            second.join(5)
            self.assertEqual((first.port, len(got)), (5900, 1))
            got[0].poll(True)                       # Bochs exited before saying: give it up
            self.assertIsNone(got[0].port)
            with mock.patch.object(bochs, "RFB_START_SECS", 0):
                third = bochs.RfbGate(log2, lock)  # free again
                third.poll(False)                   # and given up once the time is over
                self.assertIsNone(third.file)

    def test_bochs_panic_is_found(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            log = Path(d, "bochs.txt")
            with open(log, "w") as f:
                f.write("00000i[CPU0  ] ok\n00079p[CPU0  ] >>PANIC<< exception(): 3rd (13) exception\n"
                        "00080p[UNMAP ] >>PANIC<< Shutdown port: shutdown requested\n")
            self.assertEqual(bochs.panics(log), ["Bochs panic: exception(): 3rd (13) exception"])
            self.assertEqual(bochs.panics(Path(d, "none")), [])
            with open(log, "w") as f:
                f.write("00080p[UNMAP ] >>PANIC<< Shutdown port: shutdown requested\n")
            self.assertEqual(bochs.panics(log), [])


@unittest.skipUnless(shutil.which("prove"), "prove not installed")
class Prove(unittest.TestCase):
    def check(self, text: str) -> str | None:
        with tempfile.TemporaryDirectory() as d:
            return runner.run_prove(ktap.parse(text), Path(d, "x.tap"))

    def test_agrees(self) -> None:
        for text in (PASSING, GOOD, SELFTEST, BAD_CMDLINE, edit(PASSING, "ok 2 apic", "ok 1 apic")):
            with self.subTest(text=text[:80]):
                self.assertEqual(self.check(text), "")

    def test_disagreement_is_reported(self) -> None:
        rep = ktap.parse(edit(PASSING, "ok 3 ds", "ok 2 ds"))
        rep.tap_ok = True           # pretend the parser missed the duplicate
        with tempfile.TemporaryDirectory() as d:
            self.assertIn("prove disagrees", runner.run_prove(rep, Path(d, "x.tap")) or "")


FAKE_QEMU = """\
import os, sys, time
argv = sys.argv
log = argv[argv.index("-serial") + 1][len("file:"):]
mode = os.environ["FAKE_MODE"]
config = "direct" if "-kernel" in argv else "bios"
if argv[argv.index("-accel") + 1] == "kvm":
    with open(os.environ["FAKE_KVM_CALLS"], "a") as f:
        f.write(" ".join(argv[1:]) + "\\n")
    kvm = os.environ.get("FAKE_KVM", "works")
    if kvm == "abort":      # what this machine's QEMU does under -cpu host
        print("qemu-system-x86_64: warning: host doesn't support requested feature")
        print("qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69", file=sys.stderr)
        print("kvm.c:3183: kvm_buf_set_msrs: Assertion failed.", file=sys.stderr, flush=True)
        os.abort()
    if kvm == "hang":       # a vCPU that spins without a word
        time.sleep(60)
    if kvm == "garbage":    # output, but no verdict
        open(log, "w").write("KTAP version 1\\n1..2\\n")
        time.sleep(60)
with open(log, "w") as f:
    f.write(os.environ["FAKE_LOG_" + config.upper()])
    f.flush()
    if mode == "hang":
        time.sleep(60)
sys.exit(int(os.environ["FAKE_STATUS"]))
"""


class EndToEnd(unittest.TestCase):
    """main() with QEMU replaced by FAKE_QEMU."""

    def setUp(self) -> None:
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        for name in ("btsx32.elf", "btsx.iso"):
            open(os.path.join(self.dir, name), "w").close()
        qemu = os.path.join(self.dir, "qemu")
        with open(qemu, "w") as f:
            f.write(f"#!{sys.executable}\n" + FAKE_QEMU)
        os.chmod(qemu, 0o755)
        self.kvm_calls = os.path.join(self.dir, "kvm-calls")
        self.env = {"QEMU": qemu, "FAKE_MODE": "exit", "FAKE_STATUS": "1",
                    "FAKE_KVM_CALLS": self.kvm_calls,
                    "FAKE_LOG_DIRECT": PASSING,
                    "FAKE_LOG_BIOS": edit(PASSING, "boot: direct", "boot: bios")}

    def main(self, *argv: str, accel: str = "tcg",
             kvm_device: tuple[bool, str] = (False, "/dev/kvm absent"), **env: str) -> tuple[int, str]:
        """runner.main() with the fake QEMU; kvm_device is what the device probe finds."""
        out = io.StringIO()
        with mock.patch.dict(os.environ, dict(self.env, **env)), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(out), \
                mock.patch.object(runner, "probe_kvm", lambda: kvm_device), \
                mock.patch.object(runner, "KVM_PROBE_SECS", 1):
            code = runner.main(["--build", self.dir, "--accel", accel, *argv])
        return code, out.getvalue()

    def kvm_boots(self) -> list[str]:
        """The QEMU invocations that asked for KVM."""
        if not os.path.exists(self.kvm_calls):
            return []
        with open(self.kvm_calls) as f:
            return f.read().splitlines()

    def test_accel_auto_without_device(self) -> None:
        code, out = self.main("--config", "direct", accel="auto")
        self.assertEqual(code, 0, out)
        self.assertEqual(out.splitlines()[0], "accel: tcg (KVM unusable: /dev/kvm absent)")
        self.assertEqual(self.kvm_boots(), [])

    def test_accel_auto_ioctl_refused(self) -> None:
        refused = runner.probe_kvm("/dev/null")
        code, out = self.main("--config", "direct", accel="auto", kvm_device=refused)
        self.assertEqual(code, 0, out)
        self.assertEqual(out.splitlines()[0],
                         "accel: tcg (KVM unusable: /dev/null unusable: Inappropriate ioctl for device)")
        self.assertEqual(self.kvm_boots(), [])

    def test_accel_auto_test_boot_aborts(self) -> None:
        answers = (True, "/dev/kvm answers with KVM API version 12")
        code, out = self.main("--config", "direct,bios", "-j", "2", accel="auto",
                              kvm_device=answers, FAKE_KVM="abort")
        self.assertEqual(code, 0, out)
        self.assertEqual(out.splitlines()[0], "accel: tcg (KVM unusable: /dev/kvm answers with KVM "
                         "API version 12, but a test boot ended (SIGABRT) before its verdict: "
                         '"qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69")')
        boots = self.kvm_boots()
        self.assertEqual(len(boots), 1, boots)      # one test boot, and the runs use TCG
        self.assertIn("-kernel", boots[0])
        self.assertIn("-append tests=boot.memmap", boots[0])
        self.assertIn("bios    tcg", out)
        code, out = self.main("--config", "direct", accel="kvm", kvm_device=answers, FAKE_KVM="abort")
        self.assertEqual(code, 2, out)
        self.assertIn("btsx-run: --accel kvm but KVM is unusable: /dev/kvm answers with KVM API "
                      "version 12, but a test boot ended (SIGABRT)", out)
        self.assertNotIn("config", out)             # nothing booted

    def test_accel_auto_test_boot_hangs(self) -> None:
        answers = (True, "/dev/kvm answers with KVM API version 12")
        start = time.monotonic()
        code, out = self.main("--config", "direct", accel="auto", kvm_device=answers, FAKE_KVM="hang")
        self.assertLess(time.monotonic() - start, 10)
        self.assertEqual(code, 0, out)
        self.assertEqual(out.splitlines()[0], "accel: tcg (KVM unusable: /dev/kvm answers with KVM "
                         "API version 12, but a test boot gave no output in 1 s)")
        code, out = self.main("--config", "direct", accel="auto", kvm_device=answers, FAKE_KVM="garbage")
        self.assertIn("but a test boot reached no verdict in 1 s [log: ", out.splitlines()[0])

    def test_accel_auto_test_boot_passes(self) -> None:
        answers = (True, "/dev/kvm answers with KVM API version 12")
        code, out = self.main("--config", "direct,bios", "-j", "2", accel="auto", kvm_device=answers)
        self.assertEqual(code, 0, out)
        self.assertRegex(out.splitlines()[0], r"^accel: kvm \(/dev/kvm answers with KVM API version 12; "
                         r"a test boot \(tests=boot.memmap\) reached its verdict in [0-9.]+ s\)$")
        self.assertEqual(len(self.kvm_boots()), 3)     # the test boot once, then both runs
        self.assertIn("direct  kvm", out)
        self.assertIn("bios    kvm", out)

    def test_good_run(self) -> None:
        junit = os.path.join(self.dir, "j.xml")
        code, out = self.main("--config", "direct,bios", "-j", "2", "--junit", junit)
        self.assertEqual(code, 0, out)
        self.assertEqual(out.splitlines()[-1], "4 passed, 0 failed, 2 skipped")
        suites = ET.parse(junit).getroot().findall("testsuite")
        self.assertEqual([s.get("name") for s in suites], ["direct", "bios"])
        self.assertEqual(len(suites[0].findall("testcase")), 4)
        self.assertTrue(all(c.get("time") for c in suites[0].findall("testcase")))    # per-test times
        self.assertEqual(len(suites[0].findall("testcase/skipped")), 1)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "logs", "direct.log")))

    def test_bench_reads_the_accel_line_and_the_log(self) -> None:
        """bench.py finds the runner's accelerator and a tagged run's log through btsx.logs."""
        code, out = self.main("--config", "direct", "--tag", "bench-kernel")
        self.assertEqual(code, 0, out)
        m = logs.ACCEL_LINE.search(out)
        self.assertEqual(m.group(1) if m else None, "tcg", out)
        build = Path(self.dir)
        log = logs.RunFiles.of(build, logs.default_logdir(build), "bench-kernel", "direct").log
        self.assertEqual(logs.read_text(log), PASSING)

    def test_failures_and_junit(self) -> None:
        junit = os.path.join(self.dir, "j.xml")
        code, out = self.main("--config", "direct", "--junit", junit, "--append", "tests=boot.* verbose",
                              FAKE_STATUS="3", FAKE_LOG_DIRECT=GOOD)
        self.assertEqual(code, 1, out)
        self.assertIn("direct: paging.write_text: fail  <-- FAILED", out)
        self.assertEqual(out.splitlines()[-1], "2 passed, 2 failed, 1 skipped")
        failures = ET.parse(junit).getroot().findall("testsuite/testcase/failure")
        self.assertEqual(len(failures), 2)

    def test_expect(self) -> None:
        code, out = self.main("--config", "direct", "--expect",
                              "selftest.fault=fail,selftest.hang=timeout,selftest.fail=fail",
                              FAKE_STATUS="3", FAKE_LOG_DIRECT=SELFTEST)
        self.assertEqual(code, 0, out)
        self.assertEqual(out.splitlines()[-1], "4 passed, 0 failed, 0 skipped")

    def test_timeout_kills_the_emulator(self) -> None:
        cut = PASSING[:PASSING.index("# 2 passed")]
        junit = os.path.join(self.dir, "j.xml")
        code, out = self.main("--config", "direct", "--timeout", "1", "--junit", junit,
                              FAKE_MODE="hang", FAKE_LOG_DIRECT=cut)
        self.assertEqual(code, 1, out)
        self.assertIn("FAIL: timeout", out)
        self.assertEqual(out.splitlines()[-1], "2 passed, 1 failed, 1 skipped")
        run_case = [c for c in ET.parse(junit).getroot().iter("testcase") if c.get("name") == "(run)"]
        self.assertIsNotNone(run_case[0].find("failure"))

    def test_missing_files(self) -> None:
        os.remove(os.path.join(self.dir, "btsx.iso"))
        code, out = self.main("--config", "bios")
        self.assertEqual(code, 2)
        self.assertIn("missing", out)

    def test_list_configs(self) -> None:
        code, out = self.main("--list-configs")
        self.assertEqual(code, 0)
        self.assertEqual([line.split()[0] for line in out.splitlines()],
                         ["direct", "bios", "uefi", "bochs", "bochs-skylake", "bochs-icelake",
                          "bochs-p4"])


class Supervise(unittest.TestCase):
    def test_grace_after_summary_and_group_kill(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            log, out = Path(d, "log"), Path(d, "out")
            script = textwrap.dedent(f"""
                import subprocess, sys, time
                child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
                open({os.path.join(d, 'pid')!r}, "w").write(str(child.pid))
                open({str(log)!r}, "w").write("# 1 passed, 0 failed, 0 skipped\\n")
                time.sleep(60)
            """)
            stopped = runner.supervise([sys.executable, "-c", script], log, out, timeout=30, grace=0.5)
            self.assertEqual(stopped, (None, "late"))
            with open(os.path.join(d, "pid")) as f:
                child = int(f.read())
            for _ in range(50):     # the grandchild died with the group
                if not alive(child):
                    break
                time.sleep(0.1)
            else:
                self.fail("grandchild survived")

    def test_result_times(self) -> None:
        """Each result line's arrival is timed from the start: the JUnit per-test times."""
        with tempfile.TemporaryDirectory() as d:
            log, out = Path(d, "log"), Path(d, "out")
            script = textwrap.dedent(f"""
                import time
                f = open({str(log)!r}, "w", buffering=1)
                f.write("1..2\\n    ok 1 nested\\nok 1 a\\n")
                time.sleep(0.6)
                f.write("# diag\\nnot ok 2 b\\n# 1 passed, 1 failed, 0 skipped\\n")
            """)
            at: list[float] = []
            self.assertEqual(runner.supervise([sys.executable, "-c", script], log, out, timeout=30,
                                              grace=5, result_at=at), (0, None))
            self.assertEqual(len(at), 2, at)        # the nested result is not one of the run's
            self.assertGreaterEqual(at[1] - at[0], 0.5, at)

    def test_timeout_runaway_and_stream(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            log, out = Path(d, "log"), Path(d, "out")
            script = textwrap.dedent(f"""
                import time
                with open({str(log)!r}, "w") as f:
                    f.write("\\x1b[2J\\x1b[1;1HGRUB\\r\\nKTAP version 1\\n1..1\\n")
                    f.flush()
                    time.sleep(1)
                    f.write("x" * 3000)
                    f.flush()
                    time.sleep(60)
            """)
            cmd = [sys.executable, "-c", script]
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                self.assertEqual(runner.supervise(cmd, log, out, timeout=0.5, grace=5, stream="> "),
                                 (None, "timeout"))
            self.assertEqual(printed.getvalue(), "> GRUB\n> KTAP version 1\n> 1..1\n")
            with mock.patch.object(runner, "MAX_LOG", 2000):
                self.assertEqual(runner.supervise(cmd, log, out, timeout=30, grace=5), (None, "runaway"))
            self.assertEqual(runner.supervise([sys.executable, "-c", "raise SystemExit(5)"],
                                              log, out, timeout=30, grace=5), (5, None))


def alive(pid: int) -> bool:
    """True while pid runs (a zombie left for init to reap counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


if __name__ == "__main__":
    unittest.main()
