"""btsx-mutate: make the kernel suites kill mutants (`make mutate`).

Reads the catalogue of deliberate faults (tools/mutants.txt: its header says the format),
refuses it whole if an entry's original text does not occur exactly once in its file, then:
a baseline (the unmutated kernel must pass the suites under both profiles), and for each fault
a private copy of the tree under BUILD/mutate/ID with the already-built objects (their
timestamps kept, so only the mutated file and the link are rebuilt), the fault applied, the
kernel for the `direct` configuration rebuilt, and the suites run through tools/btsx-run under
model=exact and under model=hw with a seed fixed per fault. Three tests take nine tenths of the
suites' time (SLOW), so each profile runs in two stages: first every test of the suites with
volume=quick (the three at a tenth of their volume), then, only if that caught nothing, the
slow three at full volume. A fault is caught under a profile when the runner reports a
failed test, a timeout or a crash; one whose kernel does not boot far enough to run a test is
"caught at boot". The table goes to stdout and BUILD/mutate.md (and
BUILD/mutate.csv); the exit status is 1 if a fault survives under a profile for which the
catalogue does not mark it equivalent, or if an entry does not apply or build.
"""

import argparse
import concurrent.futures
import csv
import dataclasses
import os
import shutil
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path
from typing import Sequence

from btsx.logs import ACCEL_LINE

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "tools" / "mutants.txt"
SUITES = "bts.*,ds.*,bts.task.*,char.*"
# The long runs of the suites (each declared with a timeout of its own in tests/): ~17 of the
# suites' ~19 s under TCG.
SLOW = ("ds.stream", "bts.task.stress", "bts.task.stream")
# The kernel echoes its command line as '# cmdline: ...' in one KTAP line of at most this many
# characters (tests/ktap.h KTAP_LINE_MAX, less its newline and NUL); the runner requires the
# echo to be the options it gave, so a longer line would fail every boot for a reason no test
# gave, and every fault would look caught.
HEADER_LINE_MAX = 254
SEED_MAX = 100000   # Mutant.seed() is below this
PROFILES = ("exact", "hw")
# s per boot: a hanging mutant costs this much. The quick stage's boot takes 10-20 s under TCG
# (twice that with two mutants at once on a loaded machine), the slow stage's about as long.
TIMEOUT = 90.0
RUNNER_ERROR = "runner error"
CELL = 60           # characters of test names a table cell shows


class CatalogueError(Exception):
    """The catalogue is malformed or does not fit the tree; the message says where."""


@dataclasses.dataclass(frozen=True)
class Mutant:
    id: str
    file: str
    desc: str
    original: str
    replacement: str
    equivalent: dict[str, str]  # profile -> why no test can tell
    line: int                   # where the entry starts in the catalogue

    def seed(self) -> int:
        """The model=hw seed for this fault: fixed by its id, so a result reproduces."""
        return zlib.crc32(self.id.encode()) % 100000 + 1


def parse_catalogue(text: str, name: str = "catalogue") -> list[Mutant]:
    """The entries of a catalogue (format: the header of tools/mutants.txt)."""
    mutants: list[Mutant] = []
    seen: set[str] = set()
    blocks: list[tuple[int, list[str]]] = []
    cur: list[str] = []
    start = 0
    for no, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            continue
        if not line.strip():
            if cur:
                blocks.append((start, cur))
            cur = []
            continue
        if not cur:
            start = no
        cur.append(line)
    if cur:
        blocks.append((start, cur))
    for start, lines in blocks:
        where = f"{name}:{start}"
        fields: dict[str, str] = {}
        equivalent: dict[str, str] = {}
        orig: list[str] = []
        repl: list[str] = []
        for line in lines:
            if line == "-" or line.startswith("- "):
                orig.append(line[2:])
            elif line == "+" or line.startswith("+ "):
                repl.append(line[2:])
            elif line.startswith("equivalent:"):
                profile, _, why = line[len("equivalent:"):].strip().partition(":")
                if profile.strip() not in PROFILES or not why.strip():
                    raise CatalogueError(f"{where}: 'equivalent: PROFILE: reason', PROFILE one of "
                                         f"{', '.join(PROFILES)}: {line!r}")
                equivalent[profile.strip()] = why.strip()
            elif ":" in line and line.split(":", 1)[0] in ("id", "file", "desc"):
                key, _, value = line.partition(":")
                if key in fields:
                    raise CatalogueError(f"{where}: '{key}:' twice")
                fields[key] = value.strip()
            else:
                raise CatalogueError(f"{where}: cannot read {line!r}")
        for key in ("id", "file", "desc"):
            if not fields.get(key):
                raise CatalogueError(f"{where}: no '{key}:'")
        if not orig:
            raise CatalogueError(f"{where}: {fields['id']}: no original text ('- ' lines)")
        if fields["id"] in seen:
            raise CatalogueError(f"{where}: id {fields['id']} used twice")
        if len(equivalent) == len(PROFILES):
            raise CatalogueError(f"{where}: {fields['id']}: equivalent under every profile: "
                                 "no suite could ever catch it; leave it out")
        seen.add(fields["id"])
        original, replacement = "\n".join(orig), "\n".join(repl)
        if original == replacement:
            raise CatalogueError(f"{where}: {fields['id']}: the replacement changes nothing")
        mutants.append(Mutant(fields["id"], fields["file"], fields["desc"], original, replacement,
                              equivalent, start))
    return mutants


def apply(m: Mutant, source: str) -> str:
    """source with the fault applied; refuses an original that is not there exactly once."""
    n = source.count(m.original)
    if n != 1:
        raise CatalogueError(f"{m.id}: the original text occurs {n} times in {m.file}, not once: "
                             f"{m.original.splitlines()[0]!r}")
    return source.replace(m.original, m.replacement, 1)


def check_anchors(mutants: Sequence[Mutant], root: Path) -> list[str]:
    """Every entry that does not apply to the tree at root, with why."""
    problems = []
    for m in mutants:
        path = root / m.file
        if not path.is_file():
            problems.append(f"{m.id}: no file {m.file}")
            continue
        try:
            apply(m, path.read_text())
        except CatalogueError as e:
            problems.append(str(e))
    return problems


# ------------------------------------------------------------------ running

@dataclasses.dataclass
class Verdict:
    """One profile's run of one kernel."""
    caught: bool
    how: str            # "", "at boot", "timeout", "crash" ...: what the runner said of the run
    tests: list[str]    # the tests that failed
    detail: str = ""    # the runner's reason when no test names it

    def cell(self) -> str:
        if self.how == RUNNER_ERROR:
            return f"ERROR: {self.how}: {self.detail}"
        if not self.caught:
            return "no"
        what = ", ".join(self.tests) if self.tests else self.detail
        if self.how:
            what = f"{self.how}{': ' if what else ''}{what}"
        return "yes: " + (what if len(what) <= CELL else what[:CELL - 1] + "…")


def read_junit(path: Path, rc: int) -> Verdict:
    """The verdict from the runner's JUnit file and exit status (0: every test passed)."""
    if not path.is_file():
        # Not the kernel's doing (the runner could not start it): no verdict either way.
        return Verdict(False, RUNNER_ERROR, [], f"exit {rc}, no JUnit file")
    root = ET.parse(path).getroot()
    failed: list[str] = []
    run_problem = ""
    ran = 0
    for case in root.iter("testcase"):
        name = case.get("name", "?")
        failure = case.find("failure")
        if name == "(run)":
            if failure is not None:
                run_problem = failure.get("message", "run failed")
            continue
        ran += 1
        if failure is not None:
            failed.append(name)
    how = ""
    if run_problem and "'# cmdline: " in run_problem:
        raise CatalogueError(f"the kernel did not echo the command line it was given: {run_problem}")
    if run_problem:
        how = ("at boot" if ran == 0 else "timeout" if "timeout" in run_problem
               else "crash" if "no proper exit" in run_problem else "run")
    caught = rc != 0 or bool(failed) or bool(run_problem)
    return Verdict(caught, how, failed, run_problem[:CELL] if run_problem and not failed else "")


def append_for(profile: str, seed: int, tests: str, quick: bool = False) -> str:
    volume = " volume=quick" if quick else ""
    return f"model=exact tests={tests}{volume}" if profile == "exact" else \
        f"model=hw seed={seed} tests={tests}{volume}"


def run_suites(build: Path, profile: str, seed: int, tests: str, accel: str, timeout: float,
               tag: str, quick: bool = False) -> tuple[Verdict, list[str]]:
    """The verdict of one boot with tests=tests, and the names of the tests that ran."""
    junit = build / f"{tag}-{profile}.xml"
    junit.unlink(missing_ok=True)
    cmd = [sys.executable, str(ROOT / "tools" / "btsx-run"), "--build", str(build),
           "--config", "direct", "--accel", accel, "--timeout", str(timeout),
           "--tag", f"{tag}-{profile}", "--append", append_for(profile, seed, tests, quick),
           "--junit", str(junit)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    (build / f"{tag}-{profile}.out").write_text(proc.stdout)
    ran = [c.get("name", "?") for c in ET.parse(junit).getroot().iter("testcase")
           if c.get("name") != "(run)"] if junit.is_file() else []
    return read_junit(junit, proc.returncode), ran


def run_staged(build: Path, profile: str, seed: int, opts: argparse.Namespace) -> Verdict:
    """The suites at volume=quick; the slow tests at full volume too only if that caught
    nothing."""
    v, _ = run_suites(build, profile, seed, SUITES, opts.accel, opts.timeout, "quick", quick=True)
    if v.caught:
        return v
    v, _ = run_suites(build, profile, seed, ",".join(SLOW), opts.accel, opts.timeout, "slow")
    return v


def copy_tree(src: Path, dst: Path, build: Path) -> None:
    """The sources and the built kernel objects of src into dst, timestamps kept, so that make
    in dst rebuilds only what changes there."""
    if dst.exists():
        shutil.rmtree(dst)
    skip = {".git", build.name}
    shutil.copytree(src, dst, ignore=lambda d, names: [n for n in names if Path(d) == src and n in skip])
    db = dst / build.name
    shutil.copytree(build / "k", db / "k")
    for name in ("btsx.elf", "btsx32.elf", "btsx.pass1.elf", "font.psf", "syms.S", "syms.o"):
        if (build / name).exists():
            shutil.copy2(build / name, db / name)


@dataclasses.dataclass
class Result:
    mutant: Mutant
    verdicts: dict[str, Verdict]
    seconds: float
    error: str = ""     # did not apply or build: the catalogue is at fault, not the suites

    def survives(self, profile: str) -> bool:
        v = self.verdicts.get(profile)
        return v is not None and not v.caught and profile not in self.mutant.equivalent

    def failed(self) -> bool:
        return bool(self.error) or any(self.survives(p) or v.how == RUNNER_ERROR
                                       for p, v in self.verdicts.items())


def run_mutant(m: Mutant, opts: argparse.Namespace) -> Result:
    start = time.monotonic()
    work = opts.build / "mutate" / m.id
    copy_tree(ROOT, work, opts.build)
    path = work / m.file
    path.write_text(apply(m, path.read_text()))
    b = opts.build.name     # the copy's build folder has the same name, inside the copy
    make = subprocess.run([opts.make, "-C", str(work), "--no-print-directory", f"B={b}",
                           f"{b}/btsx32.elf"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    if make.returncode != 0:
        (work / "build.log").write_text(make.stdout)
        return Result(m, {}, time.monotonic() - start,
                      f"does not build (see {work / 'build.log'})")
    verdicts = {p: run_staged(work / b, p, m.seed(), opts) for p in PROFILES}
    if not opts.keep:
        shutil.rmtree(work / b / "k", ignore_errors=True)
    return Result(m, verdicts, time.monotonic() - start)


def cell(r: Result, profile: str) -> str:
    if r.error:
        return "ERROR: " + r.error
    v = r.verdicts[profile]
    if not v.caught and profile in r.mutant.equivalent and v.how != RUNNER_ERROR:
        return "equivalent: " + r.mutant.equivalent[profile]
    return v.cell() if v.caught or v.how == RUNNER_ERROR else "**NO: survives**"


def table(results: Sequence[Result], seconds: float) -> str:
    lines = ["| fault | description | seed | caught under exact | caught under hw | s |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in results:
        lines.append(f"| {r.mutant.id} | {r.mutant.desc} | {r.mutant.seed()} | {cell(r, 'exact')} | "
                     f"{cell(r, 'hw')} | {r.seconds:.0f} |")
    bad = [r.mutant.id for r in results if r.failed()]
    lines.append("")
    lines.append(f"{len(results)} faults, {len(results) - len(bad)} caught (or equivalent) under both "
                 f"profiles, {len(bad)} not{': ' + ', '.join(bad) if bad else ''}; {seconds:.0f} s")
    return "\n".join(lines) + "\n"


def write_csv(path: Path, results: Sequence[Result]) -> None:
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["fault", "file", "description", "seed", "exact", "hw", "seconds"])
        for r in results:
            w.writerow([r.mutant.id, r.mutant.file, r.mutant.desc, r.mutant.seed(),
                        cell(r, "exact"), cell(r, "hw"), f"{r.seconds:.1f}"])


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="btsx-mutate", description=__doc__.split("\n\n")[0])
    p.add_argument("--build", type=Path, default=ROOT / "build", help="the built tree (default build)")
    p.add_argument("--catalogue", type=Path, default=CATALOGUE)
    p.add_argument("--accel", default=os.environ.get("ACCEL", "tcg"), choices=("auto", "tcg", "kvm"),
                   help="passed to btsx-run (default $ACCEL, else tcg)")
    p.add_argument("-j", "--jobs", type=int, default=2, help="faults at a time (default 2)")
    p.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds per boot")
    p.add_argument("--only", help="comma list of fault ids to run (default all)")
    p.add_argument("--check", action="store_true",
                   help="only check that every entry applies to the tree")
    p.add_argument("--keep", action="store_true", help="keep each mutant's objects")
    p.add_argument("--make", default=os.environ.get("MAKE", "make"))
    ns = p.parse_args(argv)
    ns.build = ns.build.resolve()
    if ns.jobs < 1:
        p.error("-j must be positive")
    return ns


def say(*lines: str) -> None:
    with _print_lock:
        print(*lines, sep="\n", flush=True)


_print_lock = threading.Lock()


def main(argv: Sequence[str] | None = None) -> int:
    opts = parse_args(argv)
    try:
        mutants = parse_catalogue(opts.catalogue.read_text(), str(opts.catalogue))
    except (OSError, CatalogueError) as e:
        print(f"btsx-mutate: {e}", file=sys.stderr)
        return 2
    problems = check_anchors(mutants, ROOT)
    if problems:
        print("btsx-mutate: the catalogue does not fit the tree:", *problems, sep="\n  ",
              file=sys.stderr)
        return 2
    if opts.only:
        want = opts.only.split(",")
        unknown = sorted(set(want) - {m.id for m in mutants})
        if unknown:
            print(f"btsx-mutate: no such fault: {', '.join(unknown)}", file=sys.stderr)
            return 2
        mutants = [m for m in mutants if m.id in want]
    if opts.check:
        print(f"btsx-mutate: {len(mutants)} faults, each applies once")
        return 0
    if not (opts.build / "btsx32.elf").is_file():
        print(f"btsx-mutate: no {opts.build / 'btsx32.elf'}: run make first", file=sys.stderr)
        return 2
    start = time.monotonic()
    seed = mutants[0].seed() if mutants else 1     # the baseline's hw seed: the first fault's
    with concurrent.futures.ThreadPoolExecutor(min(opts.jobs, len(PROFILES))) as pool:
        base = list(pool.map(lambda p: run_suites(opts.build, p, seed, SUITES, opts.accel,
                                                  opts.timeout, "mutate-baseline"), PROFILES))
    names = base[0][1]
    if opts.accel == "auto":    # decided once: the runner's KVM probe costs seconds a boot
        said = ACCEL_LINE.search((opts.build / "mutate-baseline-exact.out").read_text())
        opts.accel = said.group(1) if said else "tcg"
    for profile, (v, _) in zip(PROFILES, base):
        if v.caught:
            say(f"btsx-mutate: the unmutated kernel fails under model={profile}: {v.cell()[5:]}",
                f"  (see {opts.build / f'mutate-baseline-{profile}.out'}); no fault can be judged")
            return 1
    missing = [s for s in SLOW if s not in names]
    if missing:
        say(f"btsx-mutate: the suites do not fit the tool: slow tests missing {missing}: "
            f"update SLOW in {__file__}")
        return 2
    longest = max(len(f"# cmdline: {append_for(p, SEED_MAX, t, True)}") for p in PROFILES
                  for t in (SUITES, ",".join(SLOW)))
    if longest > HEADER_LINE_MAX:
        say(f"btsx-mutate: a command line of {longest} characters does not fit the kernel's "
            f"{HEADER_LINE_MAX}-character '# cmdline:' line: shorten SUITES or SLOW in {__file__}")
        return 2
    say(f"baseline: the unmutated kernel passes under both profiles "
        f"({time.monotonic() - start:.0f} s); each fault: {SUITES} with volume=quick, then "
        f"{','.join(SLOW)} if nothing was caught")
    results: list[Result] = []
    with concurrent.futures.ThreadPoolExecutor(opts.jobs) as pool:
        futures = {pool.submit(run_mutant, m, opts): m for m in mutants}
        for fut in concurrent.futures.as_completed(futures):
            m = futures[fut]
            try:
                r = fut.result()
            except CatalogueError as e:
                r = Result(m, {}, 0.0, str(e))
            results.append(r)
            say(f"{m.id} (seed {m.seed()}): exact {cell(r, 'exact') if not r.error else r.error}; "
                f"hw {cell(r, 'hw') if not r.error else '-'}; {r.seconds:.0f} s")
    order = {m.id: i for i, m in enumerate(mutants)}
    results.sort(key=lambda r: order[r.mutant.id])
    text = table(results, time.monotonic() - start)
    (opts.build / "mutate.md").write_text(text)
    write_csv(opts.build / "mutate.csv", results)
    say("", text.rstrip(), f"(also {opts.build / 'mutate.md'} and {opts.build / 'mutate.csv'})")
    return 1 if any(r.failed() for r in results) else 0
