"""A real single-node SLURM cluster on localhost for the cluster tests.

munged, slurmctld and slurmd run as children of the test process (foreground mode), with
their state, spool and logs in a temporary folder. /etc/slurm/slurm.conf must point at our
config (the executor's in-job srun clears SLURM_CONF), so we make that one symlink and remove
it again; an existing real slurm.conf is never touched. Every daemon is stopped by its PID and
waited for, also when the test fails.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

SLURM_CONF = Path("/etc/slurm/slurm.conf")
PACKAGES = ["slurmctld", "slurmd", "slurm-client", "munge"]
BINARIES = ["munged", "slurmctld", "slurmd", "sinfo", "squeue", "sbatch", "scancel"]


class Unavailable(Exception):
    """SLURM cannot run here (not root, a real cluster config exists, install failed)."""


def ensure_installed() -> None:
    if all(shutil.which(b) for b in BINARIES):
        return
    if os.geteuid() != 0:
        raise Unavailable("SLURM is not installed and installing it needs root")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"],
                ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *PACKAGES]):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        if proc.returncode != 0:
            raise Unavailable(f"{' '.join(cmd)} failed: {proc.stderr[-500:]}")


def _node_facts() -> dict:
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    facts = dict(tok.split("=", 1) for tok in out.split() if "=" in tok)
    return {"cpus": int(facts["CPUs"]), "mem": int(facts["RealMemory"])}


def _conf(tmp: Path, host: str, cpus: int, mem: int) -> str:
    return f"""# test cluster written by tests/slurm_local.py
ClusterName=icml26test
SlurmctldHost={host}(127.0.0.1)
AuthType=auth/munge
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool
SlurmctldPidFile={tmp}/slurmctld.pid
SlurmdPidFile={tmp}/slurmd.pid
SlurmctldLogFile={tmp}/slurmctld.log
SlurmdLogFile={tmp}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1000
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc={tmp}/jobcomp.txt
MinJobAge=300
InactiveLimit=0
KillWait=5
Waittime=0
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={mem} State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def _terminate(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


class LocalSlurm:
    """Start with ``start()``, always ``stop()`` (a context manager does both)."""

    def __init__(self, tmp: Path):
        self.tmp = Path(tmp)
        self.procs: dict[str, subprocess.Popen] = {}
        self.linked = False

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def start(self) -> None:
        # SIGTERM (e.g. a CI time-out) must still stop the daemons: make it an exception
        # that unwinds through stop(), like Ctrl-C.
        signal.signal(signal.SIGTERM, _terminate)
        if SLURM_CONF.exists() or SLURM_CONF.is_symlink():
            raise Unavailable(f"{SLURM_CONF} exists: refusing to touch a real cluster's config")
        ensure_installed()
        host = socket.gethostname().split(".")[0]
        facts = _node_facts()
        for sub in ("state", "spool"):
            (self.tmp / sub).mkdir(parents=True, exist_ok=True)
        conf = self.tmp / "slurm.conf"
        conf.write_text(_conf(self.tmp, host, facts["cpus"], int(facts["mem"] * 0.9)))
        SLURM_CONF.parent.mkdir(parents=True, exist_ok=True)
        SLURM_CONF.symlink_to(conf)
        self.linked = True
        Path("/run/munge").mkdir(parents=True, exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        self._spawn("munged", ["munged", "-F"], user="munge")
        self._wait_for(lambda: Path("/run/munge/munge.socket.2").exists(), "munged socket")
        self._spawn("slurmctld", ["slurmctld", "-D", "-i"])
        self._spawn("slurmd", ["slurmd", "-D"])
        self._wait_for(self._node_idle, "node idle in sinfo", timeout=60)

    def _spawn(self, name: str, cmd: list[str], user: str | None = None) -> None:
        log = open(self.tmp / f"{name}.out", "w")  # noqa: SIM115 (owned by the daemon)
        kwargs = {"user": user} if user else {}
        self.procs[name] = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True, **kwargs)

    def _wait_for(self, ready, what: str, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited ({proc.returncode}): {self.logs(name)}")
            if ready():
                return
            time.sleep(0.3)
        raise RuntimeError(f"timed out waiting for {what}: {self.logs()}")

    @staticmethod
    def _node_idle() -> bool:
        out = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True)
        return out.returncode == 0 and out.stdout.strip() in ("idle", "mix")

    def logs(self, name: str | None = None) -> str:
        names = [name] if name else list(self.procs)
        text = []
        for n in names:
            for f in (self.tmp / f"{n}.out", self.tmp / f"{n}.log"):
                if f.exists():
                    text.append(f"--- {f.name}\n" + f.read_text()[-1500:])
        return "\n".join(text)

    def stop(self) -> None:
        if "slurmctld" in self.procs:
            subprocess.run(["scancel", "--user", "root"], capture_output=True, timeout=30)
        for name in ("slurmd", "slurmctld", "munged"):
            proc = self.procs.pop(name, None)
            if proc is None:
                continue
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)
        if self.linked:
            SLURM_CONF.unlink(missing_ok=True)
            self.linked = False
