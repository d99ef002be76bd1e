"""Issue 22, item 6: resources. What a run writes is bounded (--disk-limit: upper layer, /tmp, logs), step
output is read in bounded chunks whatever the line length, and step logs are capped."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.security.conftest import OUTPUT, HostileRepo, Reviewer, contained, ended

pytestmark = pytest.mark.integration
RUN_TRAIN = ("--device", "cpu", "--only", "train", "--no-color")
LINE_MB = 256

# Runs tipc in a child and prints the peak RSS (VmHWM, polled) of tipc's own processes: the command, its
# sandboxed child and the observation's helper; not the probes and workers tipc starts under the repo's
# interpreter (one imports Paddle: ~300 MiB), nor the hostile step, which writes its line in 1 MiB chunks.
_PEAK = """
import json, os, subprocess, sys, threading, time
OWN = (b"-m\\0tipc\\0", b"run_module('tipc',", b"run_module('tipc.execute.observation',")
tipc = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
peak = [0]
def descendants():
    parent = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                parent[int(pid)] = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            pass
    mine, grew = {tipc.pid}, True
    while grew:
        more = {p for p, pp in parent.items() if pp in mine} - mine
        mine |= more
        grew = bool(more)
    return mine
def poll():
    while tipc.poll() is None:
        for pid in descendants():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if not any(o in fh.read() for o in OWN):
                        continue
                with open(f"/proc/{pid}/status") as fh:
                    hwm = next(int(l.split()[1]) for l in fh if l.startswith("VmHWM:"))
            except (OSError, StopIteration):
                continue
            peak[0] = max(peak[0], hwm)
        time.sleep(0.05)
watcher = threading.Thread(target=poll)
watcher.start()
out, err = tipc.communicate()
watcher.join()
print(json.dumps({"code": tipc.returncode, "stderr": err[-3000:], "peak_kib": peak[0]}))
"""


def _du(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


@pytest.mark.parametrize("reviewer", ["root"], indirect=True)
def test_a_step_that_fills_the_disk_fails_at_the_disk_limit(
    hostile_demo: HostileRepo, reviewer: Reviewer
) -> None:
    hostile_demo.train("disk", disk_mb=160).seal()
    done = reviewer.tipc("run", str(hostile_demo.repo), *RUN_TRAIN, "--disk-limit", "64M", "--format", "json")
    contained(done.returncode != 2, f"tipc run has no --disk-limit: {done.stderr.strip()[-300:]}")
    ended(done, 1)
    lines = hostile_demo.lines()
    assert "disk:repo" in lines, "the hostile train.py did not run"
    contained(
        _du(hostile_demo.repo / OUTPUT) < 80 << 20,
        f"the run folder holds {_du(hostile_demo.repo / OUTPUT)} bytes",
    )
    record = json.loads(done.stdout)
    train = next(r for r in record["results"] if r["step_id"].startswith("train"))
    contained(
        train["status"] == "failed" and "disk" in json.dumps(train).lower(),
        f"the train step says {train['status']}: {train.get('reason')}",
    )


@pytest.mark.parametrize("reviewer", ["root"], indirect=True)
def test_a_huge_line_does_not_grow_tipcs_memory(
    hostile_demo: HostileRepo, reviewer: Reviewer, tmp_path: Path
) -> None:
    hostile_demo.train("longline", line_mb=LINE_MB).seal()
    peak = tmp_path / "peak.py"
    peak.write_text(_PEAK)
    argv = reviewer.command(
        [sys.executable, str(peak), sys.executable, "-m", "tipc", "run", str(hostile_demo.repo), *RUN_TRAIN]
    )
    done = subprocess.run(
        argv, capture_output=True, text=True, env=reviewer.env(), cwd=reviewer.base, timeout=600, check=False
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["code"] in (0, 1), result["stderr"]
    assert "longline" in hostile_demo.lines(), "the hostile train.py did not run"
    assert result["peak_kib"] > 0, "tipc's own processes were never seen"
    peak_mib = result["peak_kib"] / 1024
    contained(peak_mib < LINE_MB / 2, f"tipc's memory peaked at {peak_mib:.0f} MiB for a {LINE_MB} MiB line")


@pytest.mark.parametrize("reviewer", ["root"], indirect=True)
def test_step_logs_are_capped_and_say_what_they_dropped(
    hostile_demo: HostileRepo, reviewer: Reviewer
) -> None:
    hostile_demo.train("longline", line_mb=LINE_MB).seal()
    cap = 16 << 20
    done = reviewer.tipc("run", str(hostile_demo.repo), *RUN_TRAIN, "--log-limit", "16M", "--format", "json")
    ended(done, 0, 1)
    lines = hostile_demo.lines()
    assert "longline" in lines, "the hostile train.py did not run"
    assert "longline:done" in lines, "the capped log lost the step's last words (its tail)"
    logs = [p for p in (hostile_demo.repo / OUTPUT).rglob("*.log") if p.is_file()]
    biggest = max(logs, key=lambda p: p.stat().st_size)
    contained(
        biggest.stat().st_size < cap + (64 << 10),
        f"{biggest.name} keeps {biggest.stat().st_size >> 20} MiB with --log-limit 16M",
    )
    with biggest.open("rb") as fh:
        fh.seek(cap // 2 - 16)
        middle = fh.read(4096).decode("utf-8", "replace")
    dropped = re.search(r"\[tipc: (\d+) bytes of output dropped here", middle)
    contained(dropped is not None, f"the capped log does not say what it dropped where: {middle[:300]!r}")
    assert dropped is not None
    record = json.loads(done.stdout)
    train = next(r for r in record["results"] if r["step_id"].startswith("train"))
    assert train["log_dropped_bytes"] == int(dropped.group(1)) > (LINE_MB << 20) - cap - (1 << 20)
