"""btsx-lava: render LAVA jobs for btsx (lava/jobs/) and judge lava-run's results.

`render` fills a job template: every ${name} in it is replaced by one YAML value (a JSON
scalar or list, which YAML reads as written). `results` reads the logs lava-run wrote, takes
the kernel's KTAP from the serial output they carry and LAVA's test cases from their
'lvl: results' lines, requires that the two agree case for case, and prints the same table,
totals line and JUnit XML as btsx-run, with its exit codes (0 good, 1 not, 2 usage).
"""

import argparse
import difflib
import json
import re
import string
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from btsx import ktap, runner
from btsx.expect import parse_expect

# The test action's monitor. pexpect matches while a line is still arriving, so the pattern
# only matches a whole line: it starts after a newline and its lookahead needs the line's end
# (\r*\n); without that, 'ok 3 bts.ta' half-received would be a case named 'bts.ta', and an
# 'ok N name # SKIP ...' line a pass before its SKIP arrived. The match ends before the
# newline, so the next line still starts after one. LAVA takes one 'result' group: a skip's is
# the word SKIP (the optional group in front steps over 'ok N name # ' only when SKIP
# follows); other lines give 'ok' or 'not ok' (a TIMEOUT is a 'not ok': LAVA has no timeout
# outcome). A TODO or XFAIL on an 'ok' line is a pass, as btsx counts it (tools/btsx/ktap.py).
NAME = r"[^\s#]+"
PATTERN = (r"(?<=\n)(?=(?:not )?ok [1-9][0-9]* (?P<test_case_id>" + NAME + r")(?: # [^\r\n]*)?\r*\n)"
           r"(?:ok [0-9]+ " + NAME + r" # (?=SKIP[ \r\n]))?(?P<result>not ok|ok|SKIP)[^\r\n]*")
FIXUP = {"ok": "pass", "not ok": "fail", "SKIP": "skip"}
# The end: every verdict the kernel prints, NO TESTS RUN included (a bad command line still
# ends the document; without it the monitor would wait for its timeout).
END = r"# verdict: (?:PASS|FAIL|NO TESTS RUN)"
MONITOR: dict[str, object] = {"name": "btsx", "start": ktap.HEADER, "end": END,
                              "pattern": PATTERN, "fixupdict": FIXUP}
LAVA_OUTCOME = {"pass": "pass", "skip": "skip", "fail": "fail", "timeout": "fail"}

# Seconds the test action allows a suite under QEMU TCG (a real machine takes a fraction):
# each about three times what it takes there, the long streaming tests included.
SUITE_SECONDS = {"boot": 20, "cmdline": 20, "msr": 20, "paging": 20, "apic": 40, "bench": 60,
                 "bts": 60, "char": 60, "db": 30, "ds": 90, "nmi": 30, "sched": 30,
                 "bts.task": 120, "selftest": 30}
BOOT_SECONDS = 90       # firmware, GRUB and the kernel's set-up, before the first result
DEPLOY_SECONDS = 120    # the deploy action's own limit, part of the job's

# The kernel reads these itself; a job must not carry characters that the QEMU option string
# (fw_cfg doubles commas), lava-run's command split (quotes, backslashes) or its image
# substitution ({label}) would change.
BAD_CMDLINE = set("\"'\\{}\n\r")


def selected_suites(cmdline: str) -> list[str]:
    """The suites a command line's tests= globs can reach (all without tests=; selftest only
    with selftest=1, as the kernel registers it)."""
    opts = dict(w.partition("=")[::2] for w in cmdline.split())
    suites = [s for s in SUITE_SECONDS if s != "selftest" or opts.get("selftest") == "1"]
    if "tests" not in opts:
        return suites
    chosen: set[str] = set()
    for glob in filter(None, opts["tests"].split(",")):
        prefix = re.split(r"[*?]", glob)[0]
        # A prefix inside a suite's names picks that suite (the longest: bts.task.* is not
        # bts), and every suite whose names all start with it (bts.* picks bts.task too).
        inside = [s for s in suites if prefix.startswith(s + ".")]
        chosen.update([max(inside, key=len)] if inside else [])
        chosen.update(s for s in suites if (s + ".").startswith(prefix))
    return [s for s in suites if s in chosen]


def test_seconds(cmdline: str) -> int:
    return BOOT_SECONDS + sum(SUITE_SECONDS[s] for s in selected_suites(cmdline))


def qemu_escape(value: str) -> str:
    return value.replace(",", ",,")


def values(template: str, cmdline: str, urls: Mapping[str, str], job_name: str) -> dict[str, object]:
    """Every value a template may use, for this command line and these image URLs."""
    bad = sorted(BAD_CMDLINE & set(cmdline))
    if bad:
        raise ValueError(f"the command line holds {bad!r}, which the job's QEMU and boot "
                         "commands cannot carry unchanged")
    secs = test_seconds(cmdline)
    append = f' -append "{cmdline}"' if cmdline else ""
    fwcfg = f' -fw_cfg "name=opt/btsx/cmdline,string={qemu_escape(cmdline)}"' if cmdline else ""
    vals: dict[str, object] = {
        "job_name": job_name or f"btsx {Path(template).stem} {cmdline}".strip(),
        "test_seconds": secs, "job_seconds": DEPLOY_SECONDS + secs,
        "monitors": [MONITOR],
        "kernel_arg": "-kernel {kernel}" + append,
        "iso_arg": "-cdrom {iso}" + fwcfg,
    }
    # GRUB boots the kernel or the ISO's kernel, whichever image was given. {SERVER_IP} and
    # {KERNEL} are LAVA's: the TFTP server and the deployed file's path on it. GRUB passes the
    # image's path as the command line's first word, which the kernel skips only when it
    # starts with '/' (kernel/cmdline.c): so the root is set first and the path is absolute.
    # BIOS keeps VGA text mode, as grub.cfg's entries do (the kernel writes 0xB8000).
    if ("kernel" in urls) != ("iso" in urls):
        text_mode = 'if [ "$grub_platform" = "pc" ]; then set gfxpayload=text; fi'
        multiboot = f"multiboot2 {{path}} {cmdline}".rstrip()
        if "iso" in urls:
            vals["grub_image_url"] = urls["iso"]
            vals["grub_commands"] = ["net_bootp", "loopback iso (tftp,{SERVER_IP})/{KERNEL}",
                                     "set root=(iso)", text_mode,
                                     multiboot.format(path="/boot/btsx.elf"), "boot"]
        else:
            vals["grub_image_url"] = urls["kernel"]
            vals["grub_commands"] = ["net_bootp", "set root=(tftp,{SERVER_IP})", text_mode,
                                     multiboot.format(path="/{KERNEL}"), "boot"]
    vals.update({f"{k}_url": v for k, v in urls.items()})
    return vals


def render(text: str, vals: Mapping[str, object]) -> str:
    """The template with each ${name} replaced by json.dumps(value); every name must be known."""
    tpl = string.Template(text)
    names = {m.group("named") or m.group("braced") for m in tpl.pattern.finditer(text)
             if m.group("named") or m.group("braced")}
    missing = sorted(names - set(vals))
    if missing:
        raise ValueError("no value for " + ", ".join("${%s}" % n for n in missing)
                         + " (give the image URLs the template uses)")
    return tpl.substitute({k: json.dumps(v) for k, v in vals.items()})


# ------------------------------------------------------------------ results

@dataclass
class LavaLog:
    """What one lava-run log holds: the serial output, the monitor's cases and the job's end."""
    serial: str
    cases: list[dict[str, object]]
    job_result: str | None
    job_error: str | None
    seconds: float = 0.0        # from the first serial line to the last
    result_at: list[float] = field(default_factory=list)   # each result line, from the first


def _entry(line: str) -> dict[str, object] | None:
    """One line of lava-run's log as a mapping, None for other text. The lines are JSON,
    except that some of LAVA's own action results tag a value ('"size": ! "123"'), which is
    YAML: those are read with PyYAML (lava-dispatcher's own dependency)."""
    if not line.startswith("{"):
        return None
    try:
        entry = json.loads(line)
    except ValueError:
        import yaml     # only for LAVA's tagged lines; rendering and most logs need none
        entry = yaml.safe_load(line)
    return entry if isinstance(entry, dict) else None


def parse_log(text: str) -> LavaLog:
    """lava-run's log (its standard output), one mapping a line: {"dt", "lvl", "msg"}.
    Target output has lvl 'target' and the line as msg; results have lvl 'results' and a
    mapping as msg: definition 'lava' for the dispatcher's own (case 'job' ends the run),
    the monitor's name for the test cases. The serial output ends at LAVA's first input
    (lvl 'input'): the monitor sends none, and what follows (finalize's 'poweroff', echoed
    back by the terminal) is not the kernel's."""
    serial: list[str] = []
    times: list[float] = []
    result_at: list[float] = []
    cases: list[dict[str, object]] = []
    job_result = job_error = None
    typing = False
    for line in text.splitlines():
        entry = _entry(line)
        if entry is None:
            continue
        msg = entry.get("msg")
        typing = typing or entry.get("lvl") == "input"
        if entry.get("lvl") == "target" and not typing:
            serial.append(msg if isinstance(msg, str) else str(msg))
            times.append(datetime.fromisoformat(str(entry.get("dt"))).timestamp())
            if ktap.is_result(serial[-1]):
                result_at.append(times[-1] - times[0])
        elif entry.get("lvl") == "results" and isinstance(msg, dict):
            if msg.get("definition") != "lava":
                cases.append(msg)
            elif msg.get("case") == "job":
                job_result = str(msg.get("result"))
                job_error = str(msg.get("error_msg"))
    return LavaLog("\n".join(serial) + "\n", cases, job_result, job_error,
                   times[-1] - times[0] if times else 0.0, result_at)


def compare(cases: Sequence[Mapping[str, object]], rep: ktap.Report) -> list[str]:
    """Every way LAVA's test cases differ from the kernel's KTAP: one case per result, in
    order, with the result's exact name (LAVA keeps it in extra.test_case_id) and its outcome
    as LAVA names it; as many cases as the plan. The two name lists are aligned first, so
    that a missing or extra case is named as such rather than shifting every later one."""
    problems = []
    if rep.plan is not None and len(cases) != rep.plan:
        problems.append(f"LAVA recorded {len(cases)} test case(s), the plan is 1..{rep.plan}")
    names = []
    for case in cases:
        extra = case.get("extra")
        names.append(str(extra.get("test_case_id")) if isinstance(extra, dict) else "")
    ours = [r.name for r in rep.results]
    matcher = difflib.SequenceMatcher(a=names, b=ours, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for case, res in zip(cases[i1:i2], rep.results[j1:j2]):
                if case.get("result") != LAVA_OUTCOME[res.outcome]:
                    problems.append(f"LAVA records {res.name} as {case.get('result')}, KTAP as "
                                    f"{res.outcome} (LAVA: {LAVA_OUTCOME[res.outcome]})")
            continue
        paired = min(i2 - i1, j2 - j1)
        for i, j in zip(range(i1, i1 + paired), range(j1, j1 + paired)):
            problems.append(f"LAVA test case {i + 1} is named {names[i]!r}, KTAP result "
                            f"{rep.results[j].number} {ours[j]!r}")
        for i in range(i1 + paired, i2):
            problems.append(f"LAVA test case {i + 1} {names[i]!r} ({cases[i].get('result')}) "
                            "has no KTAP result")
        for j in range(j1 + paired, j2):
            problems.append(f"LAVA has no test case for result {rep.results[j].number} {ours[j]}")
    return problems


def judge_log(config: str, path: Path, expect: Mapping[str, str],
              expect_exit: int | None) -> runner.Run:
    """One lava-run log as a btsx-run Run: the KTAP of its serial output judged as the runner
    judges a log, plus LAVA's own problems (the job's result, cases against the KTAP)."""
    log = parse_log(path.read_text(encoding="utf-8", errors="replace"))
    run = runner.Run(config, accel="lava", log=path, report=ktap.parse(log.serial),
                     seconds=log.seconds, result_at=log.result_at)
    if log.job_result is None:
        run.extra.append("lava-run's log has no job result (did it finish?)")
    elif log.job_result != "pass":
        run.extra.append(f"LAVA job result {log.job_result}: {log.job_error}")
    run.extra += compare(log.cases, run.report)
    run.extra += runner.report_problems(run.report)
    # The serial output's exit code is not in LAVA's log: the results stand for it.
    return runner.judge(run, config, expect, expect_exit)


# ------------------------------------------------------------------ validation

# Images for the templates' validation: the schemas check a URL's form, not the file.
SAMPLE_URLS = {"kernel": "http://images.example/btsx32.elf", "iso": "http://images.example/btsx.iso",
               "ovmf_code": "file:///usr/share/OVMF/OVMF_CODE_4M.fd",
               "ovmf_vars": "file:///usr/share/OVMF/OVMF_VARS_4M.fd"}
# Which images each template takes; the GRUB one is checked with either.
TEMPLATE_IMAGES: dict[str, list[tuple[str, ...]]] = {
    "qemu-direct": [("kernel",)], "qemu-bios": [("iso",)],
    "qemu-uefi": [("iso", "ovmf_code", "ovmf_vars")],
    "baremetal-grub": [("kernel",), ("iso",)]}


def validate(lava_dir: Path, cmdline: str, extra_jobs: Sequence[Path]) -> list[str]:
    """Problems of every device dictionary, every template rendered with each image it takes,
    and the given rendered jobs, by lava_common's schemas (jobs strictly). Needs
    lava-dispatcher's Python modules (Debian installs them for /usr/bin/python3)."""
    import yaml
    from lava_common.schemas import device as device_schema, validate as job_schema  # type: ignore[import]

    problems = []
    templates = sorted((lava_dir / "jobs").glob("*.yaml"))
    for stem in sorted(set(TEMPLATE_IMAGES) ^ {t.stem for t in templates}):
        why = "no such template" if stem in TEMPLATE_IMAGES else "a template btsx-lava does not know"
        problems.append(f"{lava_dir}/jobs/{stem}.yaml: {why}")
    jobs: list[tuple[str, str]] = []
    for path in templates:
        for images in TEMPLATE_IMAGES.get(path.stem, []):
            urls = {k: SAMPLE_URLS[k] for k in images}
            try:
                jobs.append((f"{path} ({', '.join(images)})",
                             render(path.read_text(), values(str(path), cmdline, urls, ""))))
            except ValueError as e:
                problems.append(f"{path}: {e}")
    jobs += [(str(p), p.read_text()) for p in extra_jobs]
    for name, text in jobs:
        try:
            job_schema(yaml.safe_load(text), strict=True)
        except Exception as e:      # voluptuous and yaml errors alike
            problems.append(f"{name}: {e}")
    for dev in sorted((lava_dir / "devices").glob("*.yaml")):
        try:
            device_schema.validate(yaml.safe_load(dev.read_text()))
        except Exception as e:
            problems.append(f"{dev}: {e}")
    return problems


# ------------------------------------------------------------------ command line

def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="btsx-lava", description=(__doc__ or "").split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("render", help="fill a job template (lava/jobs/*.yaml)")
    r.add_argument("template", help="the template file")
    r.add_argument("--append", default="", help="kernel command line, e.g. 'tests=bts.* verbose'")
    r.add_argument("--image", action="append", default=[], metavar="NAME=URL",
                   help="an image's URL: kernel, iso, ovmf_code, ovmf_vars; repeatable")
    r.add_argument("--job-name", default="", help="the job's name (default: template and options)")
    r.add_argument("-o", "--output", help="write the job here (default: standard output)")
    s = sub.add_parser("results", help="judge lava-run logs as btsx-run judges serial logs")
    s.add_argument("logs", nargs="+", metavar="CONFIG=LOG",
                   help="a lava-run log (its standard output) and the configuration the job "
                   "booted: " + ", ".join(runner.BOOT_HEADER))
    s.add_argument("--junit", help="write JUnit XML here")
    s.add_argument("--expect", action="append", metavar="NAME=OUTCOME[,...]",
                   help="as btsx-run's --expect")
    s.add_argument("--expect-exit", type=int, choices=(0, 1, 2),
                   help="the exit code the results must call for (2: no test ran)")
    v = sub.add_parser("validate", help="validate lava/'s device dictionaries and templates "
                       "(rendered) and rendered jobs with lava_common's schemas")
    v.add_argument("--lava-dir", default="lava", help="the templates' folder (default lava)")
    v.add_argument("--append", default="tests=bts.* verbose",
                   help="the command line the templates are rendered with")
    v.add_argument("jobs", nargs="*", help="rendered jobs to validate too")
    ns = p.parse_args(argv)
    if ns.cmd == "validate":
        problems = validate(Path(ns.lava_dir), ns.append, [Path(j) for j in ns.jobs])
        for problem in problems:
            print(f"btsx-lava: invalid: {problem}", file=sys.stderr)
        count = len(list(Path(ns.lava_dir).glob("*/*.yaml"))) + len(ns.jobs)
        print(f"lava: {count} file(s) validated" + (f", {len(problems)} problem(s)" if problems else ""))
        return 1 if problems else 0
    if ns.cmd == "render":
        return _render(p, ns.template, ns.append, ns.image, ns.job_name, ns.output)
    return _results(p, ns.logs, ns.junit, ns.expect or [], ns.expect_exit)


def _render(p: argparse.ArgumentParser, template: str, append: str, images: Iterable[str],
            job_name: str, output: str | None) -> int:
    urls = {}
    for item in images:
        name, sep, url = item.partition("=")
        if not sep or not name or not url:
            p.error(f"--image {item!r}: expected NAME=URL")
        urls[name] = url
    try:
        text = render(Path(template).read_text(), values(template, append, urls, job_name))
    except (OSError, ValueError) as e:
        print(f"btsx-lava: {e}", file=sys.stderr)
        return 2
    if output:
        Path(output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def _results(p: argparse.ArgumentParser, logs: Iterable[str], junit: str | None,
             expect_args: list[str], expect_exit: int | None) -> int:
    try:
        expect = parse_expect(expect_args)
    except ValueError as e:
        p.error(str(e))
    pairs = []
    for item in logs:
        config, sep, path = item.partition("=")
        if not sep or config not in runner.BOOT_HEADER:
            p.error(f"{item!r}: expected CONFIG=LOG, CONFIG one of {', '.join(runner.BOOT_HEADER)}")
        if not Path(path).is_file():
            print(f"btsx-lava: missing {path}", file=sys.stderr)
            return 2
        pairs.append((config, Path(path)))
    runs = [judge_log(config, path, expect, expect_exit) for config, path in pairs]
    if junit:
        runner.write_junit(Path(junit), runs, expect)
    return runner.report(runs, expect)
