"""Citations of the project's documents resolve, and none points outside the repository.

Code comments cite the hardware reference as `docs/hardware.md §N` (open questions as `ON`).
Its section numbers are promised to stay put, so a citation of a section that does not exist
means someone renumbered the reference or cited a number from somewhere else: either way the
comment now points at the wrong rule. The earlier hardware notes lived outside the repository;
their name must not come back.
"""
import os
import re
import unittest
from collections.abc import Iterable, Iterator, Mapping

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP_DIRS = {".git", "build"}
# A citation: docs/NAME.md, maybe in backquotes, then a run of §N / ON joined by , and - or "and".
CITE = re.compile(r"docs/([\w-]+\.md)`?((?:\s*(?:,|-|and)?\s*(?:§\d+|O\d+)\b)+)")
SECTION = re.compile(r"^## §(\d+) ", re.M)
OPEN_ROW = re.compile(r"^\| (O\d+) \|", re.M)
# Names of documents that are not in the repository (in two parts, so that a grep for them
# does not find this file).
FORBIDDEN = ("bts-" + "reference", "shared/" + "docs")


def repo_texts() -> Iterator[tuple[str, str]]:
    """(relative path, text) of every text file in the work tree outside build/ and .git/,
    except this file, whose examples cite a made-up document."""
    for top, dirs, files in os.walk(ROOT):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            path = os.path.join(top, name)
            if os.path.samefile(path, __file__):
                continue
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue
            yield os.path.relpath(path, ROOT), text


def anchors(doc_text: str) -> set[str]:
    """The section numbers (as "§N") and open-question ids (as "ON") a document defines."""
    return {"§" + n for n in SECTION.findall(doc_text)} | set(OPEN_ROW.findall(doc_text))


def bad_citations(texts: Iterable[tuple[str, str]],
                  docs: Mapping[str, str]) -> list[tuple[str, int, str]]:
    """(path, line, citation) for each §N/ON cited in a document of `docs` that it lacks;
    `docs` maps a file name under docs/ to its text, missing files are absent."""
    bad = []
    for path, text in texts:
        for m in CITE.finditer(text):
            doc = docs.get(m.group(1))
            have = anchors(doc) if doc is not None else set()
            for ref in re.findall(r"§\d+|O\d+", m.group(2)):
                if ref not in have:
                    line = text.count("\n", 0, m.start()) + 1
                    bad.append((path, line, "docs/%s %s" % (m.group(1), ref)))
    return bad


def forbidden_mentions(texts: Iterable[tuple[str, str]]) -> list[tuple[str, int, str]]:
    return [(path, text.count("\n", 0, text.index(word)) + 1, word)
            for path, text in texts for word in FORBIDDEN if word in text]


def load_docs() -> dict[str, str]:
    docs = {}
    for name in os.listdir(os.path.join(ROOT, "docs")):
        with open(os.path.join(ROOT, "docs", name), encoding="utf-8") as f:
            docs[name] = f.read()
    return docs


class CitationParsing(unittest.TestCase):
    DOC = "## §1 One\n\n## §2 Two\n\n| # | q |\n|---|---|\n| O1 | a question |\n"

    def check(self, text: str) -> list[str]:
        return [c for _, _, c in bad_citations([("f.c", text)], {"hw.md": self.DOC})]

    def test_existing_sections_and_questions_pass(self) -> None:
        self.assertEqual(self.check("/* docs/hw.md §1, §2 and O1; `docs/hw.md` §2-§1 */"), [])

    def test_missing_section_is_reported_with_its_number(self) -> None:
        self.assertEqual(self.check("/* docs/hw.md §1, §3 */"), ["docs/hw.md §3"])

    def test_missing_open_question_is_reported(self) -> None:
        self.assertEqual(self.check("(docs/hw.md §2, O4)"), ["docs/hw.md O4"])

    def test_citation_of_a_missing_document_is_reported(self) -> None:
        self.assertEqual(self.check("docs/gone.md §1"), ["docs/gone.md §1"])

    def test_a_mention_without_a_section_is_not_a_citation(self) -> None:
        self.assertEqual(self.check("see docs/gone.md and docs/hw.md §N"), [])

    def test_forbidden_names_are_found(self) -> None:
        word = FORBIDDEN[0]
        self.assertEqual(forbidden_mentions([("a.c", "x\n(" + word + ".md §3)")]),
                         [("a.c", 2, word)])


class RepositoryCitations(unittest.TestCase):
    def test_hardware_reference_sections_are_numbered_in_order(self) -> None:
        numbers = [int(n) for n in SECTION.findall(load_docs()["hardware.md"])]
        self.assertEqual(numbers, list(range(1, len(numbers) + 1)))

    def test_every_cited_section_exists(self) -> None:
        self.assertEqual(bad_citations(repo_texts(), load_docs()), [])

    def test_no_citation_of_documents_outside_the_repository(self) -> None:
        self.assertEqual(forbidden_mentions(repo_texts()), [])


if __name__ == "__main__":
    unittest.main()
