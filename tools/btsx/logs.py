"""The files of a run and how the tools read them, shared by the runner, btsx-trace and bench.

A run of one configuration keeps everything it writes in the log directory (BUILD/logs by
default) under names made of an optional tag and the configuration's name; the runner's
first output line says which accelerator it chose, and bench reads that line back.
"""

import os
import re
from dataclasses import dataclass
from pathlib import Path

ACCEL_LINE = re.compile(r"^accel: (kvm|tcg) .*$", re.M)


def accel_line(accel: str, why: str) -> str:
    """The runner's first output line: the accelerator it chose and why (ACCEL_LINE)."""
    return f"accel: {accel} ({why})"


def default_logdir(build: Path) -> Path:
    """Where the runner keeps its logs when --logdir does not say."""
    return build / "logs"


@dataclass(frozen=True)
class RunFiles:
    """Every file one configuration reads or writes, as absolute paths."""
    elf: Path           # btsx32.elf, for qemu -kernel
    kelf: Path          # btsx.elf, for the per-run ISO
    iso: Path
    log: Path           # the serial output
    out: Path           # the emulator's own stdout/stderr
    tap: Path           # the KTAP body as TAP 13, for prove
    vars: Path          # the UEFI variable store
    bochsrc: Path
    rc: Path            # Bochs's debugger script
    bochslog: Path
    runiso: Path        # the per-run ISO that carries --append to Bochs
    isodir: Path        # where that ISO is put together
    monitor: Path       # QEMU's monitor socket, for --expect-screen
    screen: Path        # the screen as read at the end: text (.screen.txt) or a PPM (.ppm)
    ppm: Path

    @classmethod
    def of(cls, build: Path, logdir: Path, tag: str, config: str) -> "RunFiles":
        # os.path.abspath, not Path.absolute: '..' is folded as the runner always did.
        build = Path(os.path.abspath(build))
        prefix = os.path.join(os.path.abspath(logdir), (tag + "-") if tag else "") + config

        def logged(suffix: str) -> Path:
            return Path(prefix + suffix)

        return cls(elf=build / "btsx32.elf", kelf=build / "btsx.elf", iso=build / "btsx.iso",
                   log=logged(".log"), out=logged(".emu.txt"), tap=logged(".tap"),
                   vars=logged(".vars.fd"), bochsrc=logged(".bochsrc"), rc=logged(".rc"),
                   bochslog=logged(".bochs.txt"), runiso=logged(".iso"),
                   isodir=logged(".isodir"), monitor=logged(".mon"),
                   screen=logged(".screen.txt"), ppm=logged(".ppm"))


def read_log(path: Path) -> str:
    """A whole log as text; bytes that are not UTF-8 (firmware noise) become U+FFFD.
    OSError if it cannot be read."""
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def read_text(path: Path) -> str:
    """read_log, or '' for a log the emulator never created."""
    try:
        return read_log(path)
    except FileNotFoundError:
        return ""
