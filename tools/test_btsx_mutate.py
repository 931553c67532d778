"""Tests of btsx-mutate (btsx.mutate): the catalogue's format, the anchors, the quick tests'
globs and how a run's JUnit file becomes a verdict."""
import tempfile
import unittest
from pathlib import Path

from btsx import mutate as mu

ENTRY = """\
# a comment
id: one
file: a.c
desc: the first fault
- x = 1;
-     y = 2;
+ x = 3;
+     y = 4;

id: two
file: a.c
desc: deletes a line
equivalent: hw: a reason
- z();
"""

SOURCE = "int f(void)\n{\n    x = 1;\n    y = 2;\n    z();\n}\n"


class Catalogue(unittest.TestCase):
    def test_parses_entries(self) -> None:
        one, two = mu.parse_catalogue(ENTRY)
        self.assertEqual((one.id, one.file, one.desc), ("one", "a.c", "the first fault"))
        self.assertEqual(one.original, "x = 1;\n    y = 2;")
        self.assertEqual(one.replacement, "x = 3;\n    y = 4;")
        self.assertEqual(one.equivalent, {})
        self.assertEqual(two.replacement, "")
        self.assertEqual(two.equivalent, {"hw": "a reason"})

    def test_replacement_applied_exactly(self) -> None:
        one, two = mu.parse_catalogue(ENTRY)
        self.assertEqual(mu.apply(one, SOURCE), "int f(void)\n{\n    x = 3;\n    y = 4;\n    z();\n}\n")
        self.assertEqual(mu.apply(two, SOURCE), "int f(void)\n{\n    x = 1;\n    y = 2;\n    \n}\n")

    def test_anchor_twice_refused(self) -> None:
        _, two = mu.parse_catalogue(ENTRY)
        with self.assertRaisesRegex(mu.CatalogueError, "occurs 2 times"):
            mu.apply(two, SOURCE + "z();\n")

    def test_anchor_never_refused(self) -> None:
        one, _ = mu.parse_catalogue(ENTRY)
        with self.assertRaisesRegex(mu.CatalogueError, "occurs 0 times"):
            mu.apply(one, SOURCE.replace("y = 2", "y = 5"))

    def test_anchor_indentation_counts(self) -> None:
        one, _ = mu.parse_catalogue(ENTRY)
        with self.assertRaisesRegex(mu.CatalogueError, "occurs 0 times"):
            mu.apply(one, SOURCE.replace("    y = 2", "  y = 2"))

    def test_check_anchors_names_each_problem(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            Path(d, "a.c").write_text(SOURCE + "z();\n")
            problems = mu.check_anchors(mu.parse_catalogue(ENTRY), Path(d))
            self.assertEqual(len(problems), 1)
            self.assertIn("two", problems[0])
            Path(d, "a.c").unlink()
            self.assertEqual(len(mu.check_anchors(mu.parse_catalogue(ENTRY), Path(d))), 2)

    def test_malformed_entries_refused(self) -> None:
        bad = {
            "no original": "id: a\nfile: a.c\ndesc: d\n+ x\n",
            "no 'desc:'": "id: a\nfile: a.c\n- x\n",
            "used twice": "id: a\nfile: a.c\ndesc: d\n- x\n\nid: a\nfile: a.c\ndesc: d\n- y\n",
            "changes nothing": "id: a\nfile: a.c\ndesc: d\n- x\n+ x\n",
            "cannot read": "id: a\nfile: a.c\ndesc: d\n-x\n",
            "PROFILE": "id: a\nfile: a.c\ndesc: d\nequivalent: fast: r\n- x\n",
            "every profile": "id: a\nfile: a.c\ndesc: d\nequivalent: hw: r\nequivalent: exact: r\n- x\n",
        }
        for why, text in bad.items():
            with self.subTest(why), self.assertRaisesRegex(mu.CatalogueError, why):
                mu.parse_catalogue(text)

    def test_seed_fixed_per_fault(self) -> None:
        one, two = mu.parse_catalogue(ENTRY)
        self.assertEqual(one.seed(), mu.parse_catalogue(ENTRY)[0].seed())
        self.assertNotEqual(one.seed(), two.seed())
        self.assertGreater(one.seed(), 0)

    def test_the_catalogue_fits_the_tree(self) -> None:
        mutants = mu.parse_catalogue(mu.CATALOGUE.read_text())
        self.assertGreaterEqual(len(mutants), 25)
        self.assertEqual(mu.check_anchors(mutants, mu.ROOT), [])


JUNIT = """<?xml version='1.0' encoding='utf-8'?>
<testsuites name="btsx"><testsuite name="direct">{cases}
<testcase classname="btsx.direct" name="(run)">{run}</testcase></testsuite></testsuites>
"""


class Verdicts(unittest.TestCase):
    def verdict(self, cases: str, run: str, rc: int) -> mu.Verdict:
        with tempfile.TemporaryDirectory() as d:
            p = Path(d, "j.xml")
            p.write_text(JUNIT.format(cases=cases, run=run))
            return mu.read_junit(p, rc)

    def test_pass_is_not_caught(self) -> None:
        v = self.verdict('<testcase name="bts.jmp" />', "", 0)
        self.assertFalse(v.caught)
        self.assertEqual(v.cell(), "no")

    def test_failed_tests_named(self) -> None:
        v = self.verdict('<testcase name="bts.jmp"><failure message="fail" /></testcase>'
                         '<testcase name="bts.jcc" />', "", 1)
        self.assertTrue(v.caught)
        self.assertEqual(v.cell(), "yes: bts.jmp")

    def test_timeout_and_boot(self) -> None:
        v = self.verdict('<testcase name="bts.jmp" />', '<failure message="timeout" />', 1)
        self.assertEqual((v.caught, v.how), (True, "timeout"))
        v = self.verdict("", '<failure message="no proper exit: QEMU status 0" />', 1)
        self.assertEqual((v.caught, v.how), (True, "at boot"))

    def test_command_line_not_echoed_is_an_error_not_a_catch(self) -> None:
        run = ('<failure message="kernel says \'# cmdline: model=hw tests=bts.j*,bts.tas\', '
               'but the options given were \'model=hw tests=bts.j*,bts.task.i*\'" />')
        with self.assertRaises(mu.CatalogueError):
            self.verdict('<testcase name="bts.jmp" />', run, 1)

    def test_no_junit_is_a_runner_error(self) -> None:
        v = mu.read_junit(Path("/nonexistent/j.xml"), 2)
        self.assertEqual((v.caught, v.how), (False, "runner error"))
        self.assertTrue(v.cell().startswith("ERROR"))


if __name__ == "__main__":
    unittest.main()
