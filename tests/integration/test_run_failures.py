"""`tipc run` as a user drives it: a real process tree, a real Ctrl-C / kill, then --resume.

The planner is replaced by a tiny module that loads a hand-made Plan from JSON (the seam is
`tipc.planning.planner.plan`);
everything below it (CLI, runner, proc, record) is real.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.execute.sandbox.test_endings import _settled
from tipc.core.steps import Mode, Plan, Stage, Status, Step
from tipc.execute.record import RECORD_FILENAME, load_record
from tipc.execute.sandbox import run_key, stored_path

pytestmark = pytest.mark.integration

OUT = "test_tipc/output/m/lite_train_lite_infer"
ROOT = Path(__file__).resolve().parents[2]

# Runs `tipc run` in a child interpreter with tipc.planning.planner / tipc.config.discover answered from a
# JSON plan file.
DRIVER = textwrap.dedent(
    """
    import json, sys, types
    from pathlib import Path
    from tipc.core.steps import Plan
    from tipc.planning.planner import default_mode, isolate, select_stages
    from tipc.config.discover import find_repo_root
    plan_file = sys.argv[1]
    fake = types.ModuleType("tipc.planning.planner")
    fake.isolate = isolate
    fake.default_mode = default_mode
    fake.select_stages = select_stages
    fake.plan = lambda config, mode, **kw: Plan.from_json(json.loads(Path(plan_file).read_text()))
    fake.format_plan = lambda p: "\\n".join(s.id for s in p.steps)
    sys.modules["tipc.planning.planner"] = fake
    disc = types.ModuleType("tipc.config.discover")
    disc.find_configs = lambda repo: sorted(Path(repo).glob("test_tipc/configs/*/train_infer_python.txt"))
    disc.find_repo_root = find_repo_root
    sys.modules["tipc.config.discover"] = disc
    import tipc.cli
    tipc.cli.IS_CONSOLE = True  # this driver is tipc's own process: it enters the sandbox itself
    sys.exit(tipc.cli.main(sys.argv[2:]))
    """
)


def _wait_for(path: Path, proc: subprocess.Popen[bytes], limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while not path.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            out = proc.stdout.read().decode() if proc.stdout else ""
            pytest.fail(f"the run never reached its long step (exit {proc.poll()}):\n{out}")
        time.sleep(0.05)


def _stored(repo: Path, rel: str) -> Path:
    """Where a file the sandboxed run wrote at `<repo>/<rel>` (in its output folder) really is."""
    return stored_path(repo, run_key("m", "train_infer_python", "lite_train_lite_infer"), OUT, rel)


def _setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    repo = tmp_path / "repo"
    cfg = repo / "test_tipc/configs/m/train_infer_python.txt"
    cfg.parent.mkdir(parents=True)
    cfg.write_text("model_name:m\n")
    pid_file = repo / OUT / "pids.json"  # as the step sees it, in the sandbox's view
    long_code = textwrap.dedent(
        f"""
        import json, os, subprocess, sys, time
        marker = {str(repo / OUT / "second_time")!r}
        if os.path.exists(marker):
            sys.exit(0)
        open(marker, "w").close()
        g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        open({str(pid_file)!r}, "w").write(json.dumps([os.getpid(), g.pid]))
        time.sleep(120)
        """
    )
    steps = (
        Step("train", Stage.TRAIN, (sys.executable, "-c", "print('trained')")),
        Step("eval", Stage.EVAL, (sys.executable, "-c", long_code), depends_on=("train",)),
        Step("infer", Stage.INFER, (sys.executable, "-c", "print('inferred')"), depends_on=("train",)),
    )
    plan = Plan(
        config_path=str(cfg),
        repo=str(repo),
        mode=Mode.LITE_TRAIN_LITE_INFER,
        dialect="template",
        model_name="m",
        output_dir=OUT,
        results_log=f"{OUT}/results_python.log",
        status_format="template",
        steps=steps,
    )
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan.to_json()))
    return repo, plan_file, pid_file


def _tipc(plan_file: Path, *args: str, token: str = "") -> subprocess.Popen[bytes]:
    # every process of the run inherits the token: found by it afterwards, whatever pid namespace it had
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CI": "true", "TIPC_RUN_TOKEN": token}
    return subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(plan_file), "run", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_stops_the_tree_writes_the_record_and_resume_finishes(tmp_path: Path, sig: int) -> None:
    repo, plan_file, pid_file = _setup(tmp_path)
    token = f"tipc-run-failures-{os.getpid()}-{time.monotonic_ns()}"
    runner = _tipc(plan_file, str(repo), token=token)
    pid_file = _stored(repo, f"{OUT}/pids.json")
    _wait_for(pid_file, runner)
    runner.send_signal(sig)  # only the runner, as a terminal's Ctrl-C would reach tipc first
    out, _ = runner.communicate(timeout=60)
    text = out.decode()
    assert runner.returncode == 128 + sig, text  # 130 for Ctrl-C, 143 for SIGTERM
    assert "--resume" in text
    assert len(json.loads(pid_file.read_text())) == 2  # the step and its grandchild were running
    assert _settled(token) == []  # pids in the file are the run's pid namespace's: found by token instead
    record = load_record(_stored(repo, f"{OUT}/{RECORD_FILENAME}"))
    assert {r.step_id: r.status for r in record.results} == {
        "train": Status.PASSED,
        "eval": Status.INTERRUPTED,
    }

    resumed = _tipc(plan_file, str(repo), "--resume")
    out, _ = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, out.decode()
    record = load_record(_stored(repo, f"{OUT}/{RECORD_FILENAME}"))
    assert {r.step_id: (r.status, r.reused) for r in record.results} == {
        "train": (Status.PASSED, True),
        "eval": (Status.PASSED, False),
        "infer": (Status.PASSED, False),
    }


def test_failed_step_gives_exit_1_and_json_output(tmp_path: Path) -> None:
    repo, plan_file, _ = _setup(tmp_path)
    plan = Plan.from_json(json.loads(plan_file.read_text()))
    bad = Step("train", Stage.TRAIN, (sys.executable, "-c", "raise SystemExit(7)"))
    plan_file.write_text(json.dumps(Plan(**{**plan.__dict__, "steps": (bad, *plan.steps[1:])}).to_json()))
    runner = _tipc(plan_file, str(repo / "test_tipc/configs/m/train_infer_python.txt"), "--format", "json")
    out, _ = runner.communicate(timeout=120)
    assert runner.returncode == 1
    text = out.decode()
    data = json.loads(text[text.index("{") :])
    assert [(r["step_id"], r["status"], r["exit_code"]) for r in data["results"]] == [
        ("train", "failed", 7),
        ("eval", "blocked", None),
        ("infer", "blocked", None),
    ]
