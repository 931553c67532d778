"""Bochs for the runner: its configuration file, the per-run ISO that carries the kernel
options (Bochs has no fw_cfg), its panics, and the lock that starts one Bochs at a time."""

import fcntl
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import BinaryIO

from btsx.logs import RunFiles, read_text

CPU = {"bochs": "core2_penryn_t9600", "bochs-skylake": "corei7_skylake_x",
       "bochs-icelake": "corei7_icelake_u", "bochs-p4": "p4_prescott_celeron_336"}
TOOLS = Path(__file__).resolve().parent.parent
GRUB_CFG = TOOLS.parent / "grub.cfg"       # the menu make puts on the ISO
MKISO = TOOLS / "mkiso.sh"                 # make's ISO recipe
BIOS = Path("/usr/share/bochs/BIOS-bochs-latest")
VGA = Path("/usr/share/seabios/vgabios-isavga.bin")
TIMEOUT = 900           # s: a whole default run under Bochs takes minutes (about 4 with two at once)
GRACE = 2               # s; Bochs's shutdown port is not relied upon
# Bochs 2.7's rfb display has no port option: it walks TCP ports 5900-5949 and takes the
# first it can bind. Two Bochs starting at the same moment can both bind one port (both set
# SO_REUSEADDR); the loser's listen() fails and it panics. So Bochs starts one at a time on
# this machine (a lock file shared by every runner), until its log names its port.
RFB_LOCK = Path(tempfile.gettempdir()) / "btsx-bochs-rfb.lock"
RFB_START_SECS = 20     # s; the lock is given up after this even if Bochs never said


def display() -> str:
    """Debian's Bochs has no nogui.  rfb (in the bochs package) with no client
    and no wait costs nothing.  term is a last resort: its debugger build draws
    on a fresh pty nobody reads, and Bochs stalls once that fills up."""
    plugins = [*Path("/usr/lib").glob("*/bochs/plugins/libbx_*_gui.so"),
               *Path("/usr/lib/bochs/plugins").glob("libbx_*_gui.so")]
    names = {f.name[len("libbx_"):-len("_gui.so")] for f in plugins}
    if "rfb" in names:
        return 'rfb, options="timeout=0"'
    if "term" in names:
        return "term"
    return "nogui"


def grub_quote(word: str) -> str:
    """One word for grub.cfg: single quotes keep '*', '$' and ';' literal, as in sh."""
    return "'" + word.replace("'", "'\\''") + "'"


def run_grub_cfg(base: str, append: str) -> str:
    """The ISO's grub.cfg plus a first-choice entry that boots with the run's options
    through the menu's own btsx function, at once (no menu wait)."""
    words = " ".join(grub_quote(w) for w in append.split())
    return base.rstrip("\n") + f"""

# Added by tools/btsx-run: this run's kernel options.
menuentry "btsx: the runner's options" --id btsx_run {{
    btsx {words}
}}
set default=btsx_run
set timeout=0
"""


def build_run_iso(p: RunFiles, append: str) -> str | None:
    """A copy of the ISO whose default entry passes `append` (Bochs has no fw_cfg).
    Returns a problem or None."""
    shutil.rmtree(p.isodir, ignore_errors=True)
    (p.isodir / "boot" / "grub").mkdir(parents=True)
    shutil.copyfile(p.kelf, p.isodir / "boot" / "btsx.elf")
    text = run_grub_cfg(GRUB_CFG.read_text(), append)
    (p.isodir / "boot" / "grub" / "grub.cfg").write_text(text)
    proc = subprocess.run(["sh", str(MKISO), str(p.isodir), str(p.runiso)], capture_output=True,
                          text=True)
    shutil.rmtree(p.isodir, ignore_errors=True)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"cannot build the per-run ISO {p.runiso}: {last[:160]}"
    return None


def bochsrc_text(p: RunFiles, display: str, cpu: str, iso: Path, cpus: int = 1) -> str:
    # reset_on_triple_fault=0 is Bochs's -no-reboot; the speaker and sound
    # lines stop Debian's ALSA plugin from aborting on a machine without sound.
    # count=N: Debian's Bochs is built with SMP (its BIOS lists the CPUs in the MADT).
    return f"""\
cpu: model={cpu}, count={cpus}, reset_on_triple_fault=0
memory: guest=256, host=256
romimage: file={BIOS}
vgaromimage: file={VGA}
ata0-master: type=cdrom, path={iso}, status=inserted
boot: cdrom
com1: enabled=1, mode=file, dev={p.log}
display_library: {display}
port_e9_hack: enabled=1
log: {p.bochslog}
mouse: enabled=0
speaker: enabled=0
sound: driver=dummy
panic: action=fatal
"""


def panics(path: Path) -> list[str]:
    """Bochs's log names a crash (e.g. a triple fault) that QEMU reports by its
    status; the kernel's own exit through port 0x8900 is logged as a panic too."""
    found = [line.split(">>PANIC<<", 1)[1].strip() for line in read_text(path).splitlines()
             if ">>PANIC<<" in line]
    return ["Bochs panic: " + m[:160] for m in found if "shutdown requested" not in m][:1]


class RfbGate:
    """Holds RFB_LOCK from Bochs's start until its log says which rfb port it took."""

    def __init__(self, bochslog: Path, lock: Path = RFB_LOCK) -> None:
        self.bochslog = bochslog
        self.port: int | None = None
        # Read-only is enough for flock, and works when another user created the file.
        self.file: BinaryIO | None = os.fdopen(
            os.open(lock, os.O_RDONLY | os.O_CREAT | os.O_CLOEXEC, 0o666), "rb")
        fcntl.flock(self.file, fcntl.LOCK_EX)
        self.since = time.monotonic()

    def poll(self, exited: bool) -> None:
        if self.file is None:
            return
        for line in read_text(self.bochslog).splitlines():
            if "listening for connections on port" in line:
                self.port = int(line.split()[-1])
            if self.port or "RFB could not bind" in line:
                break
        else:
            if not exited and time.monotonic() - self.since < RFB_START_SECS:
                return
        self.release()

    def release(self) -> None:
        if self.file is not None:
            fcntl.flock(self.file, fcntl.LOCK_UN)
            self.file.close()
            self.file = None
