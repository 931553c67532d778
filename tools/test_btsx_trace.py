"""Tests of btsx-trace (btsx.trace): parsing dumped records, naming addresses, the profile, the plot."""
import contextlib
import io
import os
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET
from pathlib import Path
from unittest import mock

from btsx import trace as bt

LOG = """\
\x1b[2JGRUB noise\r
KTAP version 1
# bts-record bts.jmp 0 0x10c28c 0x1010f1 0
# bts-record bts.jmp 1 0x1010f4 0x101100 0
ok 1 bts.jmp
# bts-record bts.task.ts 0 0x8000000000000000 0x1234 0x1
# bts-record bts.task.ts 1 0x8000000000000000 0x1240 0x2
# bts-record bts.task.ts 2 0x8000000000000000 0x1250 0x7
#  bts-record broken line 0x1
# bts-record bts.jmp x 0x1 0x2 0
"""

SYMS = [(0x101000, "tc_jmp"), (0x101000, "tc_chain_end"), (0x1010f0, "tc_b_end"),
        (0x1010f0, "tc_b"), (0x101100, "tc_c"), (0x10c28c, "write_ret")]


class ParseTest(unittest.TestCase):
    def test_records_and_kinds(self) -> None:
        recs = bt.parse_log(io.StringIO(LOG))
        self.assertEqual(len(recs), 5)
        self.assertEqual(recs[0], bt.Record("bts.jmp", 0, 0x10c28c, 0x1010f1, 0))
        self.assertEqual([r.kind for r in recs],
                         ["branch", "branch", "arrive", "depart", "bad-timestamp"])

    def test_ignores_other_lines(self) -> None:
        self.assertEqual(bt.parse_log(io.StringIO("ok 1 x\n# 3 passed\nbts-record\n")), [])


class SymbolsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.syms = bt.Symbols(SYMS, end=0x200000)

    def test_names_and_offsets(self) -> None:
        self.assertEqual(self.syms.name(0x101000), "tc_jmp")
        self.assertEqual(self.syms.name(0x1010f1), "tc_b+0x1")
        self.assertEqual(self.syms.name(0x101100), "tc_c")

    def test_end_labels_lose_to_real_names(self) -> None:
        # tc_chain_end and tc_b_end share addresses with tc_jmp and tc_b.
        self.assertEqual(self.syms.name(0x1010f0), "tc_b")

    def test_outside_the_kernel(self) -> None:
        self.assertEqual(self.syms.name(0x1000), "0x1000")
        self.assertEqual(self.syms.name(0x200000), "0x200000")

    def test_from_elf_parses_nm(self) -> None:
        out = ("0000000000101000 T tc_jmp\n0000000000101100 t tc_c\n"
               "0000000000000100 a vec\n0000000000200000 R _kernel_end\n")
        done = mock.Mock(stdout=out)
        with mock.patch.object(subprocess, "run", return_value=done):
            syms = bt.Symbols.from_elf(Path("k.elf"))
        self.assertEqual(syms.name(0x101104), "tc_c+0x4")
        self.assertEqual(syms.end, 0x200000)
        self.assertEqual(syms.name(0x100), "0x100")     # absolute symbols are not kept


class ProfileTest(unittest.TestCase):
    def test_counts_and_order(self) -> None:
        syms = bt.Symbols(SYMS)
        recs = [bt.Record("t", i, 0x101000, 0x101100, 0) for i in range(3)]
        recs += [bt.Record("t", 3, 0x1010f0, 0x101000, 0)]
        recs += [bt.Record("t", 4, bt.ESCAPE, 99, 1)]
        self.assertEqual(bt.profile(recs, syms, 10),
                         [(3, "tc_jmp", "tc_c"), (1, "tc_b", "tc_jmp")])

    def test_svg_is_well_formed(self) -> None:
        svg = bt.svg_plot([(3, "a<b", "c&d"), (1, "e", "f")], "t")
        root = ET.fromstring(svg)
        self.assertEqual(len(root.findall("{http://www.w3.org/2000/svg}rect")), 2)


class MainTest(unittest.TestCase):
    def run_main(self, *args: str) -> tuple[int, str]:
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write(LOG)
        out = io.StringIO()
        try:
            with mock.patch.object(bt.Symbols, "from_elf", return_value=bt.Symbols(SYMS)), \
                    contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                rc = bt.main([f.name] + list(args))
        finally:
            os.unlink(f.name)
        return rc, out.getvalue()

    def test_listing(self) -> None:
        rc, out = self.run_main("--test", "bts.jmp")
        self.assertEqual(rc, 0)
        self.assertIn("write_ret -> tc_b+0x1", out)
        self.assertNotIn("arrive", out)

    def test_timestamps(self) -> None:
        rc, out = self.run_main("--test", "bts.task.*")
        self.assertEqual(rc, 0)
        self.assertIn("arrive at TSC 4660", out)

    def test_no_records_is_an_error(self) -> None:
        rc, _ = self.run_main("--test", "no.such")
        self.assertEqual(rc, 1)


if __name__ == "__main__":
    unittest.main()
