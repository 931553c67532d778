"""btsx-run: boot btsx in QEMU/Bochs configurations, validate its KTAP, summarise.

Each configuration boots the kernel once, keeps the serial log, and is judged
strictly (tools/btsx/ktap.py): a configuration is good only if the KTAP is well
formed, the kernel's exit code agrees with its results, and the results are
all passes/skips (or exactly what --expect declares).  The last line printed
is 'N passed, N failed, N skipped'; the exit status is 0 only if every
configuration is good, 1 otherwise, 2 for usage errors or missing files.
"""

import argparse
import concurrent.futures
import dataclasses
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from btsx import bochs, ktap, screen
from btsx import report as btsx_report
from btsx.expect import (acceptable, expected_outcome, glob_matches, is_glob, parse_expect,
                         parse_expect_header)
from btsx.logs import RunFiles, accel_line, default_logdir, read_text

CONFIGS = {
    "direct": "QEMU q35, -kernel btsx32.elf (multiboot1), arguments by -append",
    "bios": "QEMU q35, SeaBIOS, GRUB ISO, arguments by fw_cfg opt/btsx/cmdline",
    "uefi": "QEMU q35, OVMF, GRUB ISO, arguments by fw_cfg opt/btsx/cmdline",
    "bochs": "Bochs 2.7 core2_penryn_t9600 (xAPIC, no SMAP), BIOS, GRUB ISO, "
             "arguments in a per-run ISO's grub.cfg",
    "bochs-skylake": "Bochs 2.7 corei7_skylake_x (x2APIC, SMEP/SMAP), BIOS, GRUB ISO, "
                     "arguments in a per-run ISO's grub.cfg",
    "bochs-icelake": "Bochs 2.7 corei7_icelake_u (CPUID.15H disagrees with the PIT), BIOS, "
                     "GRUB ISO, arguments in a per-run ISO's grub.cfg",
    "bochs-p4": "Bochs 2.7 p4_prescott_celeron_336 (NetBurst: family 0FH, MSR_DEBUGCTLA), "
                "BIOS, GRUB ISO, arguments in a per-run ISO's grub.cfg",
}
DEFAULT_CONFIGS = "direct,bios,uefi"
BOOT_HEADER = {"direct": "direct", "bios": "bios", "uefi": "uefi",
               **{config: "bios" for config in bochs.CPU}}
OVMF_CODE = Path("/usr/share/OVMF/OVMF_CODE_4M.fd")
OVMF_VARS = Path("/usr/share/OVMF/OVMF_VARS_4M.fd")
SMP_MAX = 16            # boot/layout.h SMP_MAX_CPUS
# s per configuration by default: every suite with several CPUs (bts.smp's streams) takes about
# a minute under TCG, and several on a loaded machine; a hung test ends long before, by the
# kernel's own watchdogs, so this is for a kernel that stops answering altogether.
QEMU_TIMEOUT = 300
QEMU_EXIT_GRACE = 10    # s a QEMU guest may take to exit after its summary
MAX_LOG = 64 << 20      # a kernel printing in a loop must not fill the disk
KVM_GET_API_VERSION = 0xAE00
KVM_PROBE_APPEND = "tests=boot.memmap"  # the shortest run that still reaches a verdict
KVM_PROBE_SECS = 5      # s; a working KVM finishes it in well under one
STOPS = {"timeout": "timeout",
         "late": f"kernel printed its summary but did not exit within {QEMU_EXIT_GRACE} s",
         "runaway": f"serial log over {MAX_LOG >> 20} MiB (runaway output)"}

_print_lock = threading.Lock()
_live: set["subprocess.Popen[bytes]"] = set()   # running emulators, killed on Ctrl-C


def say(*lines: str) -> None:
    with _print_lock:
        try:
            print(*lines, sep="\n", flush=True)
        except BrokenPipeError:     # piped into head: finish the run (and kill emulators) quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


@dataclass
class Run:
    config: str
    accel: str = "-"
    log: Path = Path()
    status: int | None = None   # emulator exit status, None if we killed it
    stop: str | None = None     # why we killed it: a key of STOPS
    seconds: float = 0.0
    report: ktap.Report = field(default_factory=ktap.Report)
    extra: list[str] = field(default_factory=list)      # launch/prove problems
    reasons: list[str] = field(default_factory=list)
    run_problem: bool = False
    kernel_code: int | None = None
    result_at: list[float] = field(default_factory=list)   # seconds from start to each result line


# ------------------------------------------------------------------ options

@dataclass(frozen=True)
class Options:
    """The command line, checked and parsed."""
    configs: tuple[str, ...]
    list_configs: bool
    build: Path
    logdir: Path
    tag: str
    append: str
    config_append: Mapping[str, str]
    accel: str
    smp: int
    smp_config: Mapping[str, int]
    timeout: float | None
    jobs: int
    junit: Path | None
    expect: Mapping[str, str]
    expect_exit: int | None
    expect_header: tuple[tuple[str, str], ...]
    no_prove: bool
    expect_screen: bool
    verbose: bool
    qemu: str

    def files(self, config: str) -> RunFiles:
        return RunFiles.of(self.build, self.logdir, self.tag, config)

    def smp_for(self, config: str) -> int:
        """The CPUs of one configuration's machine: its --smp CONFIG=N, else --smp N."""
        return self.smp_config.get(config, self.smp)

    def append_for(self, config: str) -> str:
        """The kernel command line for one configuration: --append, then its --config-append,
        then exit=halt for --expect-screen (the screen is read while the machine stays)."""
        halt = "exit=halt" if self.expect_screen else ""
        return " ".join(a for a in (self.append, self.config_append.get(config, ""), halt) if a)


def parse_args(argv: Sequence[str] | None) -> Options:
    p = argparse.ArgumentParser(
        prog="btsx-run", description=(__doc__ or "").split("\n\n")[0],
        epilog="Bochs runs start one at a time, holding the lock file %s until Bochs names "
        "its rfb port: Bochs 2.7's rfb display takes no port option, and two Bochs starting "
        "at once can pick the same one. The runs themselves still overlap." % bochs.RFB_LOCK)
    p.add_argument("--config", default=DEFAULT_CONFIGS, help="comma list of %s (default %s)"
                   % (",".join(CONFIGS), DEFAULT_CONFIGS))
    p.add_argument("--list-configs", action="store_true", help="print the configurations")
    p.add_argument("--build", default="build", help="build directory (default build)")
    p.add_argument("--logdir", help="serial logs go here (default BUILD/logs)")
    p.add_argument("--tag", default="", help="prefix log file names with TAG-")
    p.add_argument("--append", default="", help="kernel command line, e.g. 'tests=boot.* verbose'")
    p.add_argument("--config-append", action="append", default=[], metavar="CONFIG=ARGS",
                   help="more kernel options for one configuration, after --append's "
                   "(e.g. 'bochs=volume=quick'); repeatable")
    p.add_argument("--accel", choices=("auto", "tcg", "kvm"), default="auto")
    p.add_argument("--smp", action="append", default=[], metavar="[CONFIG=]N",
                   help="CPUs of the machine (QEMU -smp N, Bochs cpu: count=N; default 1); "
                   "CONFIG=N for one configuration only (repeatable, e.g. --smp direct=2 "
                   "--smp uefi=4)")
    p.add_argument("--timeout", type=float, help="seconds per configuration (default "
                   f"{QEMU_TIMEOUT} under QEMU, {bochs.TIMEOUT} under Bochs)")
    p.add_argument("-j", dest="jobs", type=int, default=1, help="configurations in parallel")
    p.add_argument("--junit", help="write JUnit XML here")
    p.add_argument("--expect", action="append", metavar="NAME=OUTCOME[,...]",
                   help="required outcome (pass|fail|skip|timeout) of the tests NAME names: "
                   "an exact name, or a glob as in tests= ('*' any run, '?' one character) "
                   "that must match at least one test; an exact name wins, otherwise the "
                   "first matching glob in the order given; all other tests must pass or skip")
    p.add_argument("--expect-exit", type=int, choices=(0, 1, 2),
                   help="required kernel exit code (e.g. 2 for a bad command line)")
    p.add_argument("--expect-header", action="append", default=[], metavar="KEY=GLOB",
                   help="the kernel's '# KEY: value' header line must exist and match GLOB "
                   "('*' any run, '?' one character); repeatable, one line per option")
    p.add_argument("--no-prove", action="store_true", help="skip the prove cross-check")
    p.add_argument("--expect-screen", action="store_true",
                   help="QEMU configurations only: run with exit=halt, read the screen through "
                   "QEMU's monitor once the kernel halts, and require the summary screen: on VGA "
                   "text (bios, direct) the verdict, the CPU line, the backend and every failed "
                   "test (or an 'N more' line that covers it), on the framebuffer (uefi) the "
                   "verdict's colour band; on both, from a screendump, the report's QR code "
                   "(zbarimg must decode it to the serial log's report, module for module "
                   "qrencode's symbol of it)")
    p.add_argument("-v", "--verbose", action="store_true", help="stream serial output live")
    ns = p.parse_args(argv)
    configs = tuple(c for c in ns.config.split(",") if c)
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown or not configs:
        p.error(f"unknown configuration(s) {unknown}; known: {', '.join(CONFIGS)}")
    if ns.expect_screen and any(c in bochs.CPU for c in configs):
        p.error("--expect-screen reads the screen through QEMU's monitor: QEMU configurations only")
    try:
        expect = parse_expect(ns.expect or [])
        expect_header = parse_expect_header(ns.expect_header)
    except ValueError as e:
        p.error(str(e))
    config_append: dict[str, str] = {}
    for item in ns.config_append:
        name, sep, args = item.partition("=")
        if not sep or name not in CONFIGS or name in config_append:
            p.error(f"--config-append {item!r}: expected CONFIG=ARGS, once per configuration, "
                    f"CONFIG one of {', '.join(CONFIGS)}")
        config_append[name] = args
    smp, smp_config = 1, {}
    for item in ns.smp:
        name, sep, count = item.rpartition("=")
        if sep and (name not in CONFIGS or name in smp_config):
            p.error(f"--smp {item!r}: expected N or CONFIG=N, once per configuration, "
                    f"CONFIG one of {', '.join(CONFIGS)}")
        if not count.isdigit() or not 1 <= int(count) <= SMP_MAX:
            p.error(f"--smp {item!r}: N must be 1..{SMP_MAX} (the kernel's SMP_MAX_CPUS)")
        if sep:
            smp_config[name] = int(count)
        else:
            smp = int(count)
    if ns.jobs < 1 or (ns.timeout is not None and ns.timeout <= 0):
        p.error("-j and --timeout must be positive")
    build = Path(ns.build)
    logdir = Path(ns.logdir) if ns.logdir else default_logdir(build)
    if any("," in os.path.abspath(d) for d in (logdir, build)):
        p.error("the build and log directories must not contain ',' (QEMU option syntax)")
    return Options(configs=configs, list_configs=ns.list_configs, build=build, logdir=logdir,
                   tag=ns.tag, append=ns.append, config_append=config_append, accel=ns.accel,
                   smp=smp, smp_config=smp_config,
                   timeout=ns.timeout,
                   jobs=ns.jobs, junit=Path(ns.junit) if ns.junit else None, expect=expect,
                   expect_exit=ns.expect_exit, expect_header=expect_header,
                   no_prove=ns.no_prove, expect_screen=ns.expect_screen, verbose=ns.verbose,
                   qemu=os.environ.get("QEMU", "qemu-system-x86_64"))


# ------------------------------------------------------------- environment

def probe_kvm(dev: str = "/dev/kvm") -> tuple[bool, str]:
    """(usable, why): the device must open read/write and answer with API version 12."""
    if not os.path.exists(dev):
        return False, f"{dev} absent"
    try:
        fd = os.open(dev, os.O_RDWR | os.O_CLOEXEC)
        try:
            version = fcntl.ioctl(fd, KVM_GET_API_VERSION)
        finally:
            os.close(fd)
    except OSError as e:
        return False, f"{dev} unusable: {e.strerror}"
    if version != 12:
        return False, f"{dev} answers with KVM API version {version}, not 12"
    return True, f"{dev} answers with KVM API version {version}"


def emulator_error(out_path: Path) -> str | None:
    """The emulator's first error line (else its first line) from its own output, or None."""
    lines = [line.strip() for line in read_text(out_path).splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return next(iter(errors or lines), None)


def probe_kvm_boot(opts: Options) -> tuple[bool, str]:
    """(works, why): a device that answers may still be unable to run a guest (a host
    whose KVM refuses an MSR QEMU sets at vCPU reset aborts QEMU; a vCPU may spin
    without output).  Only a short real boot with the runs' own QEMU options proves it."""
    p = opts.files("kvm-probe")
    if not p.elf.exists():
        return False, f"cannot prove it by a test boot: missing {p.elf}"
    p.log.unlink(missing_ok=True)
    cmd = qemu_command("direct", p, KVM_PROBE_APPEND, "kvm", opts.qemu)
    start = time.monotonic()
    try:
        status, stop = supervise(cmd, p.log, p.out, KVM_PROBE_SECS, grace=KVM_PROBE_SECS)
    except OSError as e:
        return False, f"a test boot could not start {cmd[0]}: {e}"
    secs = time.monotonic() - start
    rep = ktap.parse(read_text(p.log))
    code, _ = kernel_exit(status)
    if rep.summary is not None and code is not None:
        return True, f"a test boot ({KVM_PROBE_APPEND}) reached its verdict in {secs:.1f} s"
    if stop == "timeout":
        if not read_text(p.log).strip():
            return False, f"a test boot gave no output in {KVM_PROBE_SECS:g} s"
        return False, f"a test boot reached no verdict in {KVM_PROBE_SECS:g} s [log: {p.log}]"
    if stop:
        return False, f"a test boot was stopped: {STOPS[stop]} [log: {p.log}]"
    said = emulator_error(p.out)
    how = f"status {status}" if status is None or status >= 0 else signal.Signals(-status).name
    return False, f"a test boot ended ({how}) before its verdict" + (f': "{said[:160]}"' if said else "")


Probe = Callable[[], tuple[bool, str]]


def choose_accel(mode: str, probe: Probe, boot_probe: Probe) -> tuple[str, str]:
    """('kvm'|'tcg', why); ValueError when kvm is demanded but unusable.
    probe() and boot_probe() give (ok, why); the test boot runs only if the device answers."""
    if mode == "tcg":
        return "tcg", "requested with --accel tcg"
    usable, why = probe()
    if usable:
        works, boot_why = boot_probe()
        why = f"{why}; {boot_why}" if works else f"{why}, but {boot_why}"
        usable = works
    if usable:
        return "kvm", why
    if mode == "kvm":
        raise ValueError(f"--accel kvm but KVM is unusable: {why}")
    return "tcg", f"KVM unusable: {why}"


def missing_prerequisites(opts: Options) -> list[str]:
    """Human-readable problems that stop the run before anything boots."""
    problems = []
    for config in opts.configs:
        p = opts.files(config)
        need = [p.elf] if config == "direct" else [p.iso]   # built by make
        if config == "uefi":
            need += [OVMF_CODE, OVMF_VARS]
        if config in bochs.CPU and opts.append_for(config):     # a per-run ISO carries the options
            need = [p.kelf, bochs.GRUB_CFG]
            if not shutil.which("grub-mkrescue"):
                problems.append(f"{config}: 'grub-mkrescue' not on PATH (apt-get install grub-common)")
        if config in bochs.CPU:
            need += [bochs.BIOS, bochs.VGA]
            if not shutil.which("bochs"):
                problems.append("bochs: 'bochs' not on PATH (apt-get install bochs bochsbios seabios)")
        elif not shutil.which(opts.qemu):
            problems.append(f"{config}: '{opts.qemu}' not on PATH (apt-get install qemu-system-x86)")
        problems += [f"{config}: missing {f}" for f in need if not f.exists()]
    return sorted(set(problems))


def qemu_escape(value: str) -> str:
    return value.replace(",", ",,")     # QEMU's option syntax doubles commas


def qemu_command(config: str, p: RunFiles, append: str, accel: str,
                 qemu: str = "qemu-system-x86_64", monitor: bool = False, smp: int = 1) -> list[str]:
    mon = f"unix:{qemu_escape(str(p.monitor))},server=on,wait=off" if monitor else "none"
    cmd = [qemu, "-M", "q35", "-m", "256M", "-smp", str(smp), "-display", "none", "-vga", "std",
           "-no-reboot", "-nodefaults", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
           "-serial", f"file:{p.log}", "-monitor", mon]
    cmd += ["-accel", "kvm", "-cpu", "host,pmu=on"] if accel == "kvm" else ["-accel", "tcg", "-cpu", "max"]
    if config == "direct":
        # -append only: the fw_cfg file as well would duplicate the arguments.
        return cmd + ["-kernel", str(p.elf)] + (["-append", append] if append else [])
    if config == "uefi":
        cmd += ["-drive", f"if=pflash,format=raw,unit=0,readonly=on,file={qemu_escape(str(OVMF_CODE))}",
                "-drive", f"if=pflash,format=raw,unit=1,file={qemu_escape(str(p.vars))}"]
    cmd += ["-cdrom", str(p.iso)]
    if append:  # ISO boots read it from fw_cfg so grub.cfg never needs editing
        cmd += ["-fw_cfg", "name=opt/btsx/cmdline,string=" + qemu_escape(append)]
    return cmd


# ------------------------------------------------------------------ running

def kill_group(proc: "subprocess.Popen[bytes]") -> None:
    """SIGKILL the emulator's process group (Bochs ignores SIGTERM)."""
    if proc.poll() is None:     # not reaped yet, so the group id is still ours
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


def supervise(cmd: Sequence[str], log: Path, out: Path, timeout: float, grace: float,
              stream: str | None = None, env: Mapping[str, str] | None = None,
              on_poll: Callable[[bool], None] | None = None,
              result_at: list[float] | None = None,
              grab: "ScreenGrab | None" = None) -> tuple[int | None, str | None]:
    """Run cmd; stop it at timeout, or grace s after the summary line.

    Returns (exit status, None) or (None, key of STOPS).  With stream set,
    complete serial lines are printed as they arrive (escapes removed).
    on_poll(exited), if given, is called at every poll.  result_at, if given,
    gets the time since the start at which each result line arrived (to 0.1 s,
    the poll interval): the JUnit report's per-test times.  grab, if given, sees every
    line and reads the screen once the run has ended: then the emulator is stopped and the
    result is (None, None), the machine having been asked to halt, not to exit.
    """
    with open(out, "wb") as out_file:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out_file,
                                stderr=subprocess.STDOUT, start_new_session=True, env=env)
    _live.add(proc)
    start, pos, pending = time.monotonic(), 0, b""
    summary_at: float | None = None
    f = None
    try:
        while True:
            exited = proc.poll() is not None
            if f is None and log.exists():     # the emulator creates it
                f = open(log, "rb")
            data = f.read() if f else b""
            pos += len(data)
            *lines, pending = (pending + data).split(b"\n")
            if exited and pending:
                lines.append(pending)
            if on_poll:
                on_poll(exited)
            for line in (ktap.clean(raw.decode("utf-8", "replace")) for raw in lines):
                if stream is not None and line:     # no GRUB screen clears on a terminal
                    say(stream + line)
                if result_at is not None and ktap.is_result(line):
                    result_at.append(time.monotonic() - start)
                if summary_at is None and ktap.is_summary(line):
                    summary_at = time.monotonic()
                if grab:
                    grab.see(line)
            if grab and not exited and grab.poll():
                return None, None
            if exited:
                return proc.returncode, None
            now = time.monotonic()
            if now - start > timeout:
                return None, "timeout"
            if summary_at is not None and now - summary_at > grace:
                return None, "late"
            if pos > MAX_LOG:
                return None, "runaway"
            time.sleep(0.1)
    finally:
        kill_group(proc)
        _live.discard(proc)
        if f:
            f.close()


class ScreenGrab:
    """--expect-screen: once the verdict line has come and the CPU has halted, the screen as
    the run left it: VGA text cells or a framebuffer screendump (see btsx.screen)."""

    HALT_WAIT = 20.0    # s from the verdict line to the halt: the summary is drawn between

    def __init__(self, p: RunFiles) -> None:
        self.p = p
        self.geometry: tuple[str, int, int] | None = None
        self.verdict_at: float | None = None
        self.text: screen.TextScreen | None = None
        self.ppm: tuple[int, int, bytes] | None = None
        self.problem: str | None = None

    def see(self, line: str) -> None:
        if line.startswith("# screen: "):
            self.geometry = screen.screen_geometry(line[len("# screen: "):])
        elif line.startswith("# verdict: ") and self.verdict_at is None:
            self.verdict_at = time.monotonic()

    def poll(self) -> bool:
        """True once the screen is read (or cannot be): time to stop the emulator."""
        if self.verdict_at is None:
            return False
        try:
            mon = screen.connect(self.p.monitor)
            try:
                while not screen.halted(mon):
                    if time.monotonic() - self.verdict_at > self.HALT_WAIT:
                        self.problem = f"the CPU did not halt within {self.HALT_WAIT:.0f} s " \
                                       "of the verdict line"
                        return True
                    time.sleep(0.2)
                if self.geometry is None:
                    self.problem = "the kernel named no screen ('# screen:' header)"
                else:
                    if self.geometry[0] == "vga":
                        self.text = screen.read_text(mon, self.geometry[1], self.geometry[2])
                        self.p.screen.write_text("\n".join(self.text.text()) + "\n")
                    # Both screens as a picture too: the QR code is read from it.
                    self.p.ppm.unlink(missing_ok=True)
                    mon.command(f"screendump {self.p.ppm}")
                    self.ppm = screen.parse_ppm(self.p.ppm.read_bytes())
            finally:
                mon.close()
        except (OSError, ValueError) as e:
            self.problem = f"cannot read the screen through QEMU's monitor: {e}"
        return True

    def problems(self, rep: ktap.Report) -> list[str]:
        if self.problem:
            return [self.problem]
        problems = []
        if self.text:
            problems += screen.check_text(self.text, rep)
        elif self.ppm:
            problems += screen.check_pixels(*self.ppm, rep.verdict or "")
        if self.ppm and self.geometry:
            decoded, why = screen.zbarimg(self.p.ppm)
            problems += [why] if why else []
            problems += screen.check_qr(btsx_report.extract(rep.body), rep.body, self.geometry,
                                        self.ppm, decoded)
        if self.text or self.ppm:
            return problems
        if rep.summary is not None:
            return ["the screen was not read (no verdict line?)"]
        return []


def report_problems(rep: ktap.Report) -> list[str]:
    """The btsx-report/1 block against the KTAP results of the same log: every log that
    reached its summary must carry one."""
    if rep.summary is None:
        return []
    text = btsx_report.extract(rep.body)
    if text is None:
        return [f"no {btsx_report.VERSION} block after the summary"]
    return [f"{btsx_report.VERSION}: {why}" for why in btsx_report.check(btsx_report.parse(text), rep)]


def kernel_exit(status: int | None) -> tuple[int | None, str | None]:
    """QEMU status -> (kernel code, None) or (None, why it is no proper exit)."""
    if status is not None and status > 0 and status % 2 == 1:
        return status >> 1, None
    if status == 0:
        return None, "no proper exit: QEMU status 0 (triple fault, reset or crash?)"
    return None, f"no proper exit: QEMU status {status}"


def run_prove(report: ktap.Report, tap_path: Path) -> str | None:
    """Cross-check with Test::Harness: None if prove is absent, else a problem or ''."""
    prove = shutil.which("prove")
    if not prove or not report.found:
        return None
    tap_path.write_text(report.tap_text())
    try:
        proc = subprocess.run([prove, "--exec", "cat", str(tap_path)], capture_output=True,
                              text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "prove timed out"
    prove_ok = proc.returncode == 0
    # prove passes 'not ok # TODO'; btsx counts it failed, so leave it out here.
    hard_fail = any(not r.ok and r.directive != "TODO" for r in report.results)
    ours = report.tap_ok and not hard_fail
    if prove_ok == ours:
        return ""
    detail = "; ".join(line.strip() for line in proc.stdout.splitlines()
                       if "Parse errors" in line or "Failed" in line or "Bad plan" in line)
    return f"prove disagrees: prove says {'pass' if prove_ok else 'fail'}, " \
           f"btsx-run says {'pass' if ours else 'fail'} ({detail or f'see {tap_path}'})"


def kernel_options(cmdline: str) -> list[str]:
    """The options in a '# cmdline:' header: a first word starting with '/' is the image
    path some loaders put first, and the kernel ignores it too."""
    words = cmdline.split()
    return words[1:] if words and words[0].startswith("/") else words


def judge(run: Run, config: str, expect: Mapping[str, str], expect_exit: int | None,
          append: str | None = None, expect_header: Sequence[tuple[str, str]] = ()) -> Run:
    """The run with its reasons (empty = good), run_problem and kernel_code filled in
    from what was observed."""
    rep = run.report
    reasons = ([STOPS[run.stop]] if run.stop else []) + run.extra + rep.errors
    for key, pattern in expect_header:
        value = rep.header.get(key)
        if value is None:
            reasons.append(f"no '# {key}:' header line (--expect-header {key}={pattern})")
        elif not glob_matches(pattern, value):
            reasons.append(f"kernel says '# {key}: {value}', which does not match '{pattern}'")
    boot = rep.header.get("boot")
    if boot is not None and boot != BOOT_HEADER[config]:
        reasons.append(f"kernel says '# boot: {boot}', expected {BOOT_HEADER[config]}")
    cmdline = rep.header.get("cmdline")
    if append is not None and cmdline is not None and kernel_options(cmdline) != append.split():
        reasons.append(f"kernel says '# cmdline: {cmdline}', but the options given were '{append}'")
    derived = rep.exit_code()
    code = derived
    kernel_code = run.kernel_code
    if config not in bochs.CPU and run.status is not None:  # Bochs has no exit code
        code, why = kernel_exit(run.status)
        if why:
            reasons.append(why)
        elif derived is not None and code != derived:
            reasons.append(f"kernel exit code {code} but its results call for {derived}")
        kernel_code = code if rep.found else None    # not QEMU's own error status
    for name in expect:
        if is_glob(name) and not any(glob_matches(name, r.name) for r in rep.results):
            reasons.append(f"no test matching --expect {name} ran")
        elif not is_glob(name) and not any(r.name == name for r in rep.results):
            reasons.append(f"expected test {name} did not run")
    if expect_exit is not None and code is not None and code != expect_exit:
        reasons.append(f"exit code {code}, expected {expect_exit}")
    elif expect_exit is None and code == 2:
        reasons.append("no test ran (plan 1..0)" + "".join(f"; {e}" for e in rep.kernel_errors))
    run_problem = bool(reasons)
    bad = [r for r in rep.results if not acceptable(r, expect)]
    if bad and (expect or expect_exit is None):     # --expect-exit alone judges the code only
        reasons.append(f"{len(bad)} test(s) " + ("not as expected" if expect else "failed"))
    return dataclasses.replace(run, reasons=reasons, run_problem=run_problem,
                               kernel_code=kernel_code)


def qemu_one_at_a_time(opts: Options) -> bool:
    """Whether QEMU configurations must run one at a time: with -j above 1 and a QEMU machine of
    several CPUs. Its vCPU threads beside another QEMU's outnumber a small host's cores, and
    under TCG the kernel's boot-time TSC and LAPIC timer calibration then came out up to a
    fifth too fast (APs refused for a timer 'early', the NMI watchdog 'early'). Bochs runs,
    whose clocks are simulated, still go beside them."""
    return opts.jobs > 1 and any(c not in bochs.CPU and opts.smp_for(c) > 1 for c in opts.configs)


def runs_alone(config: str, opts: Options) -> bool:
    """Whether a configuration runs with nothing beside it (with -j above 1): a QEMU machine with
    more CPUs than the host has cores. Its vCPU threads alone outnumber the cores, and with a
    Bochs run beside it the kernel's boot-time clocks disagreed under TCG in one boot of four
    (the LAPIC timer at 39 % of its rate against the PIT in one, the TSC and timer a fifth fast
    in another: the APs refused as 'early', apic.timer_rate failed)."""
    return opts.jobs > 1 and config not in bochs.CPU and opts.smp_for(config) > (os.cpu_count() or 1)


def interleave_bochs(configs: Sequence[str]) -> list[str]:
    """The order to start configurations in when QEMU ones run one at a time: QEMU and Bochs
    alternately, so that a free slot finds a Bochs run to start rather than wait."""
    qemu = [c for c in configs if c not in bochs.CPU]
    other = [c for c in configs if c in bochs.CPU]
    out: list[str] = []
    while qemu or other:
        out += [q.pop(0) for q in (qemu, other) if q]
    return out


def run_config(config: str, opts: Options, accel: str) -> Run:
    p = opts.files(config)
    is_bochs = config in bochs.CPU
    run = Run(config, accel="bochs" if is_bochs else accel, log=p.log)
    for stale in (p.log, p.bochslog):     # a stale log must not pass for this run's
        stale.unlink(missing_ok=True)
    stream = (f"[{config}] " if len(opts.configs) > 1 else "") if opts.verbose else None
    env: dict[str, str] | None = None
    gate: bochs.RfbGate | None = None
    grab: ScreenGrab | None = None
    problem: str | None = None
    if is_bochs:
        iso = p.iso
        if opts.append_for(config):
            problem, iso = bochs.build_run_iso(p, opts.append_for(config)), p.runiso
        p.bochsrc.write_text(bochs.bochsrc_text(p, bochs.display(), bochs.CPU[config], iso,
                                                opts.smp_for(config)))
        p.rc.write_text("c\n")  # Debian's debugger build stops before the first instruction
        cmd, grace = ["bochs", "-q", "-f", str(p.bochsrc), "-rc", str(p.rc)], float(bochs.GRACE)
        env = dict(os.environ, TERM="vt100")    # the term display needs a terminal type
    else:
        if config == "uefi":
            shutil.copyfile(OVMF_VARS, p.vars)   # fresh NVRAM every run
        cmd = qemu_command(config, p, opts.append_for(config), accel, opts.qemu,
                           monitor=opts.expect_screen, smp=opts.smp_for(config))
        grace = float(QEMU_EXIT_GRACE)
        if opts.expect_screen:
            p.monitor.unlink(missing_ok=True)
            grab = ScreenGrab(p)
    start = time.monotonic()
    try:
        if problem:
            run.extra.append(problem)
        else:
            if is_bochs and "rfb" in bochs.display():
                gate = bochs.RfbGate(p.bochslog)
            timeout = opts.timeout or (bochs.TIMEOUT if is_bochs else QEMU_TIMEOUT)
            run.status, run.stop = supervise(cmd, p.log, p.out, timeout, grace, stream,
                                             env, gate.poll if gate else None, run.result_at,
                                             grab)
    except OSError as e:
        run.extra.append(f"cannot start {cmd[0]}: {e}")
    finally:
        if gate:
            gate.release()
    run.seconds = time.monotonic() - start
    if is_bochs:
        run.stop = None if run.stop == "late" else run.stop  # killing it after the summary is the plan
        run.extra += bochs.panics(p.bochslog)     # no exit code, but a crash still shows here
    run.report = ktap.parse(read_text(p.log))
    if not run.report.found and run.status is not None:     # say why the emulator gave up
        run.extra += [f"emulator said: {t[:160]}" for t in read_text(p.out).strip().splitlines()[-1:]]
    problem = None if opts.no_prove else run_prove(run.report, p.tap)
    run.extra += [problem] if problem else []
    run.extra += report_problems(run.report)
    if grab:
        run.extra += grab.problems(run.report)
    return judge(run, config, opts.expect, opts.expect_exit, opts.append_for(config),
                 opts.expect_header)


# ------------------------------------------------------------------ output

def tally(run: Run, expect: Mapping[str, str]) -> tuple[int, int, int]:
    """(passed, failed, skipped) for the totals line: results judged against
    --expect (an expected failure counts as passed), plus 1 failed for a
    configuration-level problem so a crash never leaves the totals clean."""
    good = [r for r in run.report.results if acceptable(r, expect)]
    skipped = sum(r.outcome == "skip" for r in good)
    failed = len(run.report.results) - len(good) + (1 if run.run_problem else 0)
    return len(good) - skipped, failed, skipped


def write_junit(path: Path, runs: Sequence[Run], expect: Mapping[str, str]) -> None:
    root = ET.Element("testsuites", name="btsx")
    for run in runs:
        _, f, s = tally(run, expect)
        suite = ET.SubElement(root, "testsuite", name=run.config, tests=str(len(run.report.results) + 1),
                              failures=str(f), skipped=str(s), time="%.1f" % run.seconds)
        # A test's time: from the previous result line (or the start of the run) to its own.
        ends = run.result_at if len(run.result_at) == len(run.report.results) else []
        for i, r in enumerate(run.report.results):
            case = ET.SubElement(suite, "testcase", classname=f"btsx.{run.config}", name=r.name)
            if ends:
                case.set("time", "%.1f" % (ends[i] - (ends[i - 1] if i else 0.0)))
            text = "\n".join(r.diag)
            if not acceptable(r, expect):
                want = expected_outcome(r.name, expect) or "pass or skip"
                ET.SubElement(case, "failure", message=f"{r.outcome} (expected {want}) "
                              f"{r.directive} {r.reason}".strip()).text = text
            elif r.outcome == "skip":
                ET.SubElement(case, "skipped", message=r.reason)
            elif r.outcome != "pass":
                ET.SubElement(case, "system-out").text = f"expected outcome {r.outcome}\n{text}"
        case = ET.SubElement(suite, "testcase", classname=f"btsx.{run.config}", name="(run)",
                             time="%.1f" % run.seconds)
        if run.run_problem:
            ET.SubElement(case, "failure", message=run.reasons[0]).text = \
                "\n".join(run.reasons) + f"\nserial log: {run.log}"
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def report(runs: Sequence[Run], expect: Mapping[str, str]) -> int:
    """Print the table, the non-passing tests and the totals; return the exit status."""
    rows = [("config", "accel", "passed", "failed", "skipped", "exit", "secs", "verdict")]
    for run in runs:
        p, f, s = run.report.counts()
        code = "-" if run.kernel_code is None else str(run.kernel_code)
        rows.append((run.config, run.accel, str(p), str(f), str(s), code,
                     "%.1f" % run.seconds, "FAIL" if run.reasons else "ok"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    say(*("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows))
    for run in runs:
        for r in run.report.results:
            if r.outcome != "pass":
                named = expected_outcome(r.name, expect) is not None
                note = "  (as expected)" if named else ""
                if not acceptable(r, expect):
                    note = "  <-- " + ("not as expected" if named else "FAILED")
                say(f"  {run.config}: {r.name}: {r.outcome}"
                    f"{' (' + r.reason + ')' if r.reason else ''}{note}")
        for reason in run.reasons:
            say(f"  {run.config}: FAIL: {reason}  [log: {run.log}]")
    passed, failed, skipped = (sum(t) for t in zip(*(tally(run, expect) for run in runs)))
    say(f"{passed} passed, {failed} failed, {skipped} skipped")
    return 1 if any(run.reasons for run in runs) else 0


def main(argv: Sequence[str] | None = None) -> int:
    opts = parse_args(argv)
    if opts.list_configs:
        for name, what in CONFIGS.items():
            print(f"{name:13} {what}")
        return 0
    problems = missing_prerequisites(opts)
    if problems:
        print("btsx-run: cannot run:", *problems, sep="\n  ", file=sys.stderr)
        return 2
    opts.logdir.mkdir(parents=True, exist_ok=True)
    accel = "tcg"
    if any(c not in bochs.CPU for c in opts.configs):   # once per invocation, nothing cached
        try:
            accel, why = choose_accel(opts.accel, probe_kvm, lambda: probe_kvm_boot(opts))
        except ValueError as e:
            print(f"btsx-run: {e}", file=sys.stderr)
            return 2
        say(accel_line(accel, why))
    qemu_lock = threading.Lock() if qemu_one_at_a_time(opts) else None
    # Every run holds a slot; one that runs alone holds them all, taken together under
    # `gather` so that two such runs never hold some each.
    slots, gather = threading.BoundedSemaphore(opts.jobs), threading.Lock()

    def run_in_slots(config: str) -> Run:
        need = opts.jobs if runs_alone(config, opts) else 1
        with gather:
            for _ in range(need):
                slots.acquire()
        try:
            return run_config(config, opts, accel)
        finally:
            for _ in range(need):
                slots.release()

    def run_one(config: str) -> Run:
        # A QEMU run waits for its turn before it takes a slot, so that a Bochs run can use it.
        if qemu_lock is not None and config not in bochs.CPU:
            with qemu_lock:
                return run_in_slots(config)
        return run_in_slots(config)

    pool = concurrent.futures.ThreadPoolExecutor(len(opts.configs))   # the slots limit them
    try:
        order = interleave_bochs(opts.configs) if qemu_lock else list(opts.configs)
        futures = {c: pool.submit(run_one, c) for c in order}
        runs = [futures[c].result() for c in opts.configs]
    except KeyboardInterrupt:
        for proc in list(_live):    # their threads then see the exit and return
            kill_group(proc)
        pool.shutdown(cancel_futures=True)
        return 130
    pool.shutdown()
    if opts.junit:
        write_junit(opts.junit, runs, opts.expect)
    return report(runs, opts.expect)
