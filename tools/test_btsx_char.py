"""Tests of btsx-char (btsx.char): reading '# char:' lines of real runs and of junk, the tables.

The logs in tools/testdata/char-*.log are serial logs of real `tests=char.*` runs under the
model (the direct configuration; char-bochs-p4.log the bochs-p4 one); each test states the
command line the kernel was given and takes its expectations from what that line tells the
model to do (docs/model.md), not from the output. char-netburst-skid0.log is kept as the
runner wrote it, with CRLF line ends.
"""
import contextlib
import io
import os
import tempfile
import unittest
from pathlib import Path

from btsx import char as bc

DATA = Path(__file__).resolve().parent / "testdata"

HEADER = """\
KTAP version 1
# btsx 0.1.0
# cpu: Intel(R) Xeon(R) CPU E5-2680 v2 @ 2.80GHz (family 0x6 model 0x3e stepping 4) ucode 0x42e
# hypervisor: XenVMMXenVMM
# backend: hw (all six probe steps passed)
# profile: hw (pmi_skid_max=8 ...)
"""


def parse(text: str, source: str = "mem.log") -> bc.Report:
    report = bc.read_serial_log(source, text.splitlines())
    assert report is not None
    return report


def fields(value: str) -> dict[str, str]:
    """The key=value pairs of a fact's value."""
    return dict(w.split("=", 1) for w in value.split() if "=" in w)


class RealRunsTest(unittest.TestCase):
    def read(self, name: str) -> bc.Report:
        return bc.read_report(DATA / f"char-{name}.log")

    def assert_common(self, r: bc.Report, qemu: bool = True) -> None:
        # Under the model, whatever its freedoms (store() in ds/model.c): the threshold
        # record is stored before the PMI, handlers are not recorded (no model.handler_records
        # was given), SYSCALL is filtered by the CPL after it, a full buffer drops records.
        self.assertEqual(r.backend, "model")
        self.assertRegex(r.ucode, r"^0x[0-9a-f]+$")
        if qemu:
            self.assertTrue(r.cpu.startswith("QEMU TCG CPU"), r.cpu)
            self.assertEqual(r.hypervisor, "TCGTCGTCGTCG")
        self.assertEqual(r.facts["threshold_record_before_pmi"].split()[0], "yes")
        self.assertEqual(r.facts["handler_records"], "no n=64")  # 32 runs x (int3, int n)
        self.assertEqual(r.facts["syscall_cpl_filter"], "uses=destination n=2")
        self.assertEqual(r.facts["full_buffer_interrupt_mode"].split()[0], "stops")
        self.assertGreaterEqual(int(fields(r.facts["pmi_skid_records"])["n"]), 512)  # PMI_WANT
        # The model takes an interrupt at the next instruction it steps (model_trap_entry).
        self.assertEqual(r.facts["irq_landing_insns"], "min=0 max=0 n=64")
        # The model records with the layout model.layout chose, and only with that one.
        layout = fields(r.facts["model"])["layout"]
        other = {"core": "netburst", "netburst": "core"}[layout]
        self.assertEqual(r.facts["debugctl_layout"], f"{layout} tried={layout},{other}")

    def test_exact(self) -> None:
        r = self.read("exact")  # tests=char.* seed=7
        self.assert_common(r)
        self.assertEqual(r.profile, "exact")
        self.assertEqual(fields(r.facts["model"]), {
            "profile": "exact", "skid": "0", "offos_returns": "always", "layout": "core",
            "pmi": "fixed", "seed": "7"})
        skid = fields(r.facts["pmi_skid_records"])
        self.assertEqual((skid["min"], skid["max"]), ("0", "0"))
        self.assertEqual(r.facts["offos_kernel_to_user_returns"], "always n=48")

    def test_hw_seed(self) -> None:
        r = self.read("hw-seed1")  # tests=char.* model=hw seed=1
        self.assert_common(r)
        self.assertEqual(r.profile, "hw")
        model = fields(r.facts["model"])
        # model=hw: skid MODEL_HW_SKID (4), returns either (ds/options.h).
        self.assertEqual((model["skid"], model["offos_returns"], model["seed"], model["layout"]),
                         ("4", "either", "1", "core"))
        skid = fields(r.facts["pmi_skid_records"])
        self.assertEqual((skid["min"], skid["max"]), ("0", "4"))
        self.assertEqual(r.facts["offos_kernel_to_user_returns"], "sometimes n=48")

    def test_hw_nmi_never(self) -> None:
        r = self.read("hw-nmi-never")  # model=hw pmi=nmi model.offos_returns=never seed=2
        self.assert_common(r)
        model = fields(r.facts["model"])
        self.assertEqual((model["pmi"], model["offos_returns"]), ("nmi", "never"))
        self.assertEqual(fields(r.facts["pmi_skid_records"])["max"], "4")
        self.assertEqual(r.facts["offos_kernel_to_user_returns"], "never n=48")

    def test_netburst_skid0_crlf(self) -> None:
        r = self.read("netburst-skid0")  # model=hw model.skid=0 model.layout=netburst seed=3
        self.assert_common(r)
        model = fields(r.facts["model"])
        self.assertEqual((model["skid"], model["layout"]), ("0", "netburst"))
        self.assertEqual(fields(r.facts["pmi_skid_records"])["max"], "0")
        self.assertEqual(r.facts["offos_kernel_to_user_returns"], "sometimes n=48")

    def test_bochs_p4(self) -> None:
        r = self.read("bochs-p4")  # the bochs-p4 configuration, tests=char.*
        self.assert_common(r, qemu=False)
        # Bochs has no hypervisor leaf; its brand string starts with blanks, not kept.
        self.assertEqual(r.hypervisor, "none")
        self.assertTrue(r.cpu.startswith("Intel(R) Celeron(R) CPU 2.80GHz (family 0xf "), r.cpu)
        # model.layout=auto: the table's layout for GenuineIntel family 0FH, NetBurst.
        self.assertEqual(fields(r.facts["model"])["layout"], "netburst")
        self.assertEqual(r.profile, "exact")

    def test_table_of_all(self) -> None:
        reports = [self.read(n) for n in ("exact", "hw-seed1", "hw-nmi-never", "netburst-skid0",
                                          "bochs-p4")]
        md = bc.markdown(reports).splitlines()
        self.assertEqual(len(md), 2 + 5)
        head = [c.strip() for c in md[0].strip("|").split("|")]
        self.assertEqual(head[:6], list(bc.FIXED_COLUMNS))
        self.assertIn("pmi_skid_records", head)
        self.assertEqual(len(head), 6 + 9)  # model + the eight measured facts
        self.assertEqual(len(bc.csv_text(reports).splitlines()), 1 + 5)


class SyntheticTest(unittest.TestCase):
    def test_header_and_facts(self) -> None:
        r = parse(HEADER + "# char: pmi_skid_records min=0 max=2 n=512\n"
                  "# char: debugctl_layout core\nok 1 char.pmi_skid\n")
        self.assertEqual(r.cpu, "Intel(R) Xeon(R) CPU E5-2680 v2 @ 2.80GHz "
                                "(family 0x6 model 0x3e stepping 4)")
        self.assertEqual((r.ucode, r.hypervisor, r.backend, r.profile),
                         ("0x42e", "XenVMMXenVMM", "hw", "hw"))
        self.assertEqual(r.facts, {"pmi_skid_records": "min=0 max=2 n=512",
                                   "debugctl_layout": "core"})

    def test_old_cpu_line_and_unknown_ucode(self) -> None:
        self.assertEqual(parse("# cpu: X (family 0x6 model 0x1 stepping 0)\n").ucode, "-")
        self.assertEqual(parse("# cpu: X (family 0x6 model 0x1 stepping 0) ucode unknown\n").ucode,
                         "unknown")

    def test_noise_is_ignored(self) -> None:
        r = parse("\x1b[2J\x1b[1;1HSeaBIOS\r\n\ufffd\ufffd\n" + HEADER +
                  "#char: x yes\n  # char: indented yes\nsome # char: inline yes\n")
        self.assertEqual(r.facts, {})

    def test_malformed_lines_are_rejected_with_file_and_line(self) -> None:
        for bad in ("# char:", "# char: ", "# char: Skid 1", "# char: skid  yes",
                    "# char: skid yes no", "# char: skid n=", "# char: skid =3",
                    "# char: skid n=1=2", "# char: skid yes ", "# char: 9skid yes",
                    "# char: skid\tyes"):
            with self.subTest(bad=bad), self.assertRaises(bc.ReportError) as cm:
                parse(HEADER + "ok 1 x\n" + bad + "\n", "m.log")
            self.assertIn("m.log:8: malformed '# char:' line", str(cm.exception))

    def test_fact_twice(self) -> None:
        with self.assertRaises(bc.ReportError) as cm:
            parse(HEADER + "# char: a yes\n# char: a no\n", "d.log")
        self.assertIn("d.log:8: fact 'a' given twice (first at line 7)", str(cm.exception))

    def test_not_a_log(self) -> None:
        self.assertIsNone(bc.read_serial_log("x", ["hello", "# char: a yes"]))

    def test_missing_facts_and_escaping(self) -> None:
        a = parse(HEADER.replace("XenVMMXenVMM", "a|b") + "# char: a yes\n", "a.log")
        b = parse(HEADER + "# char: b no n=3\n", "b,log")
        md = bc.markdown([a, b]).splitlines()
        self.assertIn("a\\|b", md[2])
        self.assertTrue(md[2].endswith("| yes | - |"), md[2])
        self.assertTrue(md[3].endswith("| - | no n=3 |"), md[3])
        self.assertIn('"b,log"', bc.csv_text([a, b]))


REPORT = """\
btsx-report/1
v=0.1.0
cpu=Intel(R) Core(TM) i7-8650U~
fms=6.8e.a
uc=0xf4
be=hw (all six probe steps p~
n=90/1/4
f=ds.stream:2 records out of~
r=FAIL
"""


class ReportTextTest(unittest.TestCase):
    """The btsx-report/1 text as zbarimg prints it from a screendump or a phone decodes it."""

    def test_report_text(self) -> None:
        lines = (REPORT + "\n").splitlines()     # zbarimg's own newline at the end
        self.assertIsNone(bc.read_serial_log("qr.txt", lines))
        r = bc.read_report_text("qr.txt", lines)
        assert r is not None
        self.assertEqual((r.cpu, r.ucode, r.hypervisor, r.backend, r.profile, r.facts),
                         ("Intel(R) Core(TM) i7-8650U~ (fms 6.8e.a)", "0xf4", "none", "hw", "-",
                          {}))
        r = bc.read_report_text("qr.txt", (REPORT.replace("uc=0xf4\n", "hv=KVMKVMKVM\n")
                                           .replace("\n", "\r\n")).splitlines())
        assert r is not None
        self.assertEqual((r.ucode, r.hypervisor), ("-", "KVMKVMKVM"))
        r = bc.read_report_text("qr.txt", REPORT.replace("uc=0xf4\n", "more=3\n").splitlines())
        assert r is not None
        self.assertEqual(r.hypervisor, "-")     # left out for the size, not absent

    def test_not_a_report_and_bad_reports(self) -> None:
        self.assertIsNone(bc.read_report_text("x", ["hello", "btsx-report/1"]))
        self.assertIsNone(bc.read_report_text("x", []))
        for text, why in ((REPORT.replace("btsx-report/1", "btsx-report/2"), "btsx-report/2 is not"),
                          (REPORT.replace("r=FAIL\n", ""), "lacks one of"),
                          (REPORT.replace("n=90/1/4", "n=90"), "want n=P/F/S"),
                          (REPORT + "oops\n", "is not key=value")):
            with self.subTest(why=why), self.assertRaises(bc.ReportError) as cm:
                bc.read_report_text("p.txt", text.splitlines())
            self.assertIn(why, str(cm.exception))

    def test_a_table_of_a_log_and_a_photo(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            log, photo = os.path.join(d, "a.log"), os.path.join(d, "photo.txt")
            Path(log).write_text(HEADER + "# char: a yes\n")
            Path(photo).write_text(REPORT)
            table = bc.markdown([bc.read_report(Path(log)), bc.read_report(Path(photo))])
            self.assertIn("| " + photo + " | Intel(R) Core(TM) i7-8650U~ (fms 6.8e.a) | 0xf4 | "
                          "none | hw | - | - |", table)


class MainTest(unittest.TestCase):
    def run_main(self, *args: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = bc.main(list(args))
        return rc, out.getvalue(), err.getvalue()

    def test_table_and_errors(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            good, bad, junk = (os.path.join(d, n) for n in ("good.log", "bad.log", "junk.bin"))
            Path(good).write_text(HEADER + "# char: a yes\n")
            Path(bad).write_text(HEADER + "# char: a YES\n")
            Path(junk).write_bytes(bytes(range(256)) * 4)
            rc, out, err = self.run_main(good)
            self.assertEqual((rc, err), (0, ""))
            self.assertTrue(out.startswith("| log | cpu |"))
            rc, out, _ = self.run_main("--csv", good)
            self.assertEqual(out.splitlines()[0], "log,cpu,ucode,hypervisor,backend,profile,a")
            rc, out, err = self.run_main(good, bad, junk, os.path.join(d, "missing.log"))
            self.assertEqual((rc, out), (1, ""))
            self.assertIn(f"{bad}:7: malformed", err)
            self.assertIn(f"{junk}:1: not a btsx log", err)
            self.assertIn("missing.log: cannot read", err)


if __name__ == "__main__":
    unittest.main()
