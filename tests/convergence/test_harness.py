"""The harness against tests/convergence/fake_bert.py, an application printing seed 003's BERT log lines."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.convergence.seed_data import PYTHON, seed_config_text
from tipc.cli import main
from tipc.convergence import do_convergence_test
from tipc.convergence.config import load
from tipc.convergence.harness import Options, run
from tipc.convergence.result import FAIL, PASS
from tipc.execute import proc


def _run(storage: Path, config: Path, **kw: Any) -> Any:
    return do_convergence_test(storage, "convergence_harness_manifest.json", config, python=PYTHON, **kw)


def test_seed_manifest_and_config_pass_against_the_fake_app(seed_storage: Path, seed_config: Path) -> None:
    result = _run(seed_storage, seed_config, jobs=2)
    assert result.passed, result.tests[0].segments
    segs = result.segments
    assert [s.start_step for s in segs] == [0, 4]
    # only the manifest's metric (loss, MLM and NSP) is compared: 3 steps x 2 labels per segment
    assert [len(s.checks) for s in segs] == [6, 6]
    assert {c.label for c in segs[0].checks} == {"MLM", "NSP"}
    assert segs[1].argv[4:8] == ["--continue-training-from-epoch", "4", "--epochs", "7"]


def test_worse_loss_fails_naming_steps_and_numbers(
    seed_storage: Path, seed_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LOSS_SCALE", "1.5")
    result = _run(seed_storage, seed_config)
    assert not result.passed
    seg = result.segments[1]
    assert seg.status == FAIL
    text = seg.failure_text()
    assert (
        "step 5 loss[MLM]: actual 8.76, expected 5.84, operator '<=' margin 0.2 -> allowed <= 7.008" in text
    )
    assert {c.step for c in seg.failed_checks} == {5, 6, 7}


def test_crash_in_one_segment_reports_it_and_the_others_normally(
    seed_storage: Path, seed_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_CRASH_FROM", "0")
    result = _run(seed_storage, seed_config)
    first, second = result.segments
    assert first.status == FAIL and first.exit_code == 3
    assert "application exited with code 3" in first.reasons
    assert all(c.reason == "step not observed in the run's log" for c in first.checks)
    assert len(first.checks) == 6
    assert second.status == PASS and len(second.checks) == 6


def test_a_recorded_step_missing_from_the_log_fails_not_observed(
    seed_storage: Path, seed_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_DROP_STEP", "6")
    result = _run(seed_storage, seed_config)
    seg = result.segments[1]
    assert seg.status == FAIL and seg.exit_code == 0
    assert [(c.step, c.reason) for c in seg.failed_checks] == [(6, "step not observed in the run's log")] * 2
    assert result.segments[0].status == PASS


def test_timeout_stops_the_segment_and_reports_it(
    seed_storage: Path, seed_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_SLEEP_FROM", "4")
    result = _run(seed_storage, seed_config, timeout_s=1.5)
    seg = result.segments[1]
    assert seg.status == FAIL and seg.timed_out
    assert seg.duration_s < 20
    assert any("timed out after 1.5s" in r for r in seg.reasons)
    assert result.segments[0].status == PASS


def test_missing_checkpoint_fails_the_segment(seed_storage: Path, seed_config: Path) -> None:
    (seed_storage / "ckpts" / "20-04-11-14-23-13" / "model_0.onnx").unlink()
    result = _run(seed_storage, seed_config)
    first, second = result.segments
    assert first.status == FAIL and first.reasons[0].startswith("checkpoint not found")
    assert second.status == PASS


def test_segments_run_in_parallel_with_jobs(seed_storage: Path, seed_config: Path) -> None:
    barrier = threading.Barrier(2, timeout=20)

    def runner(argv: list[str], **kw: Any) -> proc.ProcResult:
        barrier.wait()  # raises BrokenBarrierError unless both segments are running at once
        return proc.run(argv, **kw)

    cfg = load(seed_config)["demo"]
    opts = Options(storage=seed_storage, jobs=2, python=PYTHON)
    result = run(cfg, opts, runner=runner)
    assert [s.status for s in result.segments] == [PASS, PASS]


def test_gather_then_run_via_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.yml"
    config.write_text(seed_config_text())
    storage = tmp_path / "st"
    base = ["converge", "gather", "-t", str(config), "-s", str(storage), "--python", PYTHON]
    assert main([*base, "--manifest-name", "m.json", "--test", "demo"]) == 0
    manifest = json.loads((storage / "demo_m.json").read_text())
    assert sorted(manifest["ckpt_logs"]) == ["0", "4"]
    # relative to STORAGE/ckpts, where the original harness's run joins it (os.path.join(storage, "ckpts",
    # checkpoint)): a manifest tipc gathers is one the original can run
    assert manifest["ckpt_logs"]["4"]["checkpoint"] == "model_5.onnx"
    assert all((storage / "ckpts" / e["checkpoint"]).is_file() for e in manifest["ckpt_logs"].values())
    assert "PASS: 1 test(s), 2 segment(s), 0 failed (gather)" in capsys.readouterr().out
    rc = main(
        [
            "converge",
            "run",
            "-t",
            str(config),
            "-s",
            str(storage),
            "--python",
            PYTHON,
            "--manifest-name",
            "m.json",
            "-j",
            "2",
            "--format",
            "json",
            "--report-dir",
            str(tmp_path / "rep"),
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["status"] == PASS
    assert len(out["tests"][0]["segments"][0]["checks"]) == 12  # loss and accuracy, 2 labels, 3 steps
    assert {p.name for p in (tmp_path / "rep").iterdir()} == {
        "converge.json",
        "converge.junit.xml",
        "converge.md",
        "converge.html",
    }


def test_run_fails_with_exit_1(
    seed_storage: Path, seed_config: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("FAKE_LOSS_SCALE", "2")
    rc = main(["converge", "run", "-t", str(seed_config), "-s", str(seed_storage), "--python", PYTHON])
    assert rc == 1
    assert "[FAIL] segment@4" in capsys.readouterr().out


def test_gather_of_a_crashing_app_fails_and_writes_no_manifest(
    tmp_path: Path, seed_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed_config.write_text(seed_config_text(**{"value: 10": "value: 99"}))  # past the fake's table: KeyError
    result = _run(tmp_path / "st", seed_config, do_gather=True)
    assert not result.passed
    assert "exited with code 1" in result.tests[0].errors[0]
    assert not (tmp_path / "st" / "demo_convergence_harness_manifest.json").exists()


def test_gather_with_seeds_records_an_envelope(tmp_path: Path) -> None:
    config = tmp_path / "c.yml"
    seed_flag = '        seed:\n                key: "--seed"\n                set_in_script: true\n'
    misc = "        misc:\n                save_interval:"
    config.write_text(seed_config_text(**{misc: seed_flag + "    " + misc}))
    storage = tmp_path / "st"
    gathered = _run(storage, config, do_gather=True, seeds=3, jobs=3)
    assert gathered.passed, gathered.tests[0].errors
    doc = json.loads((storage / "demo_convergence_harness_manifest.json").read_text())
    band = doc["ckpt_logs"]["4"]["envelope"]["5"]["loss"]["MLM"]
    # the fake adds 0.001 * (seed % 3) to MLM: run 1 as configured (seed 0), runs 2, 3 with seeds 1, 2
    assert band["min"] == pytest.approx(5.840) and band["max"] == pytest.approx(5.842) and band["n"] == 3
    assert doc["tipc"] == {"seeds": 3, "envelope_mode": "minmax", "envelope_k": 3.0}
    ran = _run(storage, config)
    assert ran.passed
    check = next(c for c in ran.segments[1].checks if (c.step, c.label) == (5, "MLM"))
    assert check.band == pytest.approx((5.840, 5.842))
    assert check.hi == pytest.approx(5.842 * 1.2)  # `<=` with margin 0.2 widens the top of the band

    std = tmp_path / "std"
    assert _run(std, config, do_gather=True, seeds=3, envelope_mode="std", envelope_k=1.0).passed
    check = next(c for c in _run(std, config).segments[1].checks if (c.step, c.label) == (5, "MLM"))
    spread = (2 / 3) ** 0.5 * 0.001  # population std of +0, +0.001, +0.002
    assert check.band == pytest.approx((5.841 - spread, 5.841 + spread))
    assert check.expected == pytest.approx(5.841)


def test_seeds_without_a_seed_flag_is_a_config_error(
    tmp_path: Path, seed_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["converge", "gather", "-t", str(seed_config), "-s", str(tmp_path / "s"), "--seeds", "2"])
    assert rc == 2
    assert f"{seed_config}:1: demo: gather --seeds needs flags.gather.seed" in capsys.readouterr().err


def test_bad_config_exits_2_with_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "c.yml"
    config.write_text(seed_config_text(**{'comparison: ">="': 'comparison: "=>"'}))
    rc = main(["converge", "run", "-t", str(config), "-s", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2
    line = next(n for n, t in enumerate(config.read_text().splitlines(), 1) if '"=>"' in t)
    assert f"{config}:{line}:13: demo.metrics.accuracy.comparison: expected one of ==, !=" in err


def test_writes_into_the_application_folder_are_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = tmp_path / "app"
    app.mkdir()
    shutil.copy(Path(__file__).with_name("fake_bert.py"), app / "fake_bert.py")
    config = tmp_path / "c.yml"
    config.write_text(seed_config_text().replace(str(Path(__file__).parent), str(app)))
    monkeypatch.setenv("FAKE_WRITE", "stray.log")
    result = _run(tmp_path / "st", config, do_gather=True)
    assert result.passed
    assert any(n.startswith(f"the application wrote into {app}: stray.log") for n in result.tests[0].notes)


@pytest.mark.parametrize(
    ("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGHUP, 129)]
)
def test_ctrl_c_sigterm_and_sighup_stop_running_segments(
    seed_storage: Path, seed_config: Path, signum: int, code: int
) -> None:
    """Every verb handles SIGTERM and SIGHUP as Ctrl-C (tipc.core.interrupts), with 128 + the signal."""
    env = {**os.environ, "FAKE_SLEEP_FROM": "4", "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    argv = [
        PYTHON,
        "-m",
        "tipc",
        "converge",
        "run",
        "-t",
        str(seed_config),
        "-s",
        str(seed_storage),
        "--python",
        PYTHON,
        "-j",
        "2",
    ]
    child = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    log = seed_storage / "tipc-converge" / "demo" / "run" / "segment_4.log"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not log.exists():
        time.sleep(0.1)
    time.sleep(0.5)
    child.send_signal(signum)
    try:
        _, err = child.communicate(timeout=15)  # the hung segment sleeps 60 s: stopped, not waited for
    finally:
        child.kill()
    assert child.returncode == code, err
    assert "interrupted" in err


def test_missing_executable_fails_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.yml"
    config.write_text(seed_config_text(**{'- "python3"': '- "no-such-interpreter-xyz"'}))
    storage = tmp_path / "st"
    assert main(["converge", "gather", "-t", str(config), "-s", str(storage)]) == 1
    assert "gather run: could not start 'no-such-interpreter-xyz'" in capsys.readouterr().out


def test_run_without_a_manifest_is_exit_2(
    tmp_path: Path, seed_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["converge", "run", "-t", str(seed_config), "-s", str(tmp_path / "nothing")]) == 2
    assert "demo_convergence_harness_manifest.json: no manifest here: gather first" in capsys.readouterr().err


def test_missing_directory_is_located(
    tmp_path: Path, seed_storage: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.yml"
    config.write_text(seed_config_text().replace(str(Path(__file__).parent), str(tmp_path / "gone")))
    assert main(["converge", "run", "-t", str(config), "-s", str(seed_storage)]) == 2
    assert f"{config}:2: directory" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("first", "replaced"),
    [
        ("python3", True),
        ("python3.7", True),
        ("/usr/bin/python", True),
        ("bash", False),
        ("pythonista", False),
    ],
)
def test_python_option_replaces_only_an_interpreter(first: str, replaced: bool) -> None:
    from tipc.convergence.harness import _argv

    out = _argv(
        Options(storage=Path("s"), python="/venv/bin/python"), [first, "app.py", "${WORK}/o"], {"WORK": "/w"}
    )
    assert out == ["/venv/bin/python" if replaced else first, "app.py", "/w/o"]


def test_the_original_demos_trailing_segment_without_steps_is_skipped_with_a_note(
    seed_storage: Path, seed_config: Path
) -> None:
    """The original's recorder keeps the save at the last step of its run (its demo config always makes
    one), with nothing recorded after it; its run compares nothing there and tipc skips it, saying so."""
    manifest = seed_storage / "demo_convergence_harness_manifest.json"
    doc = json.loads(manifest.read_text())
    doc["ckpt_logs"]["9"] = {"checkpoint": "20-04-11-14-23-13/model_9.onnx", "start_step": 9, "results": {}}
    manifest.write_text(json.dumps(doc, indent=4))
    result = run(load(seed_config)["demo"], Options(storage=seed_storage, python=PYTHON))
    assert result.status == PASS and [s.start_step for s in result.segments] == [0, 4]
    assert any(
        "segment at step 9" in n and "skipped, as the original harness does" in n for n in result.notes
    )


def test_the_original_margin_semantics_are_an_option(
    seed_storage: Path, seed_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FAKE_LOSS_SCALE=1.15 raises every loss by 15 %: inside tipc's `<=` band (0.2 x recorded), and
    inside math.isclose(rel_tol=0.2) too; at 1.3 both fail; the accuracy (`>=`) is unchanged."""
    cfg = load(seed_config)["demo"]
    monkeypatch.setenv("FAKE_LOSS_SCALE", "1.15")
    tipc_way = run(cfg, Options(storage=seed_storage, python=PYTHON))
    original = run(cfg, Options(storage=seed_storage, python=PYTHON, margins="original"))
    monkeypatch.setenv("FAKE_LOSS_SCALE", "1.3")
    worse = run(cfg, Options(storage=seed_storage, python=PYTHON, margins="original"))
    assert tipc_way.status == PASS and original.status == PASS and worse.status == FAIL
    failed = worse.segments[0].failed_checks[0]
    assert failed.expected is not None
    assert failed.metric == "loss" and failed.hi == pytest.approx(failed.expected / 0.8)
