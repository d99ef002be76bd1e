from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import pytest

from tipc.cli import main
from tipc.convergence.config import load_text
from tipc.convergence.init import propose

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "lenet_digits"
REAL_REPOS = ROOT.parent / "shared" / "real-repos"


def test_demo_proposal_is_a_working_seed_003_config() -> None:
    prop = propose(DEMO)
    assert prop.can_resume
    assert {role: f.flag for role, f in prop.flags.items() if f is not None} == {
        "checkpoint_input": "--resume",
        "start_step": "--start_step",
        "run_for": "--max_steps",
        "save_interval": "--save_interval",
        "checkpoint_output": "--checkpoint_dir",
    }
    cfg = load_text(prop.yaml_text, "proposal.yml")["lenet_digits"]
    # regexes derived from train.py's own f-strings read its log lines
    assert cfg.step_parser.first("[Step 12] loss: 2.159390, acc: 0.187500, lr: 0.00568") == "12"
    assert cfg.parsers["acc"].parse("[Step 12] loss: 2.159390, acc: 0.187500, lr: 0.1") == {"0": "0.187500"}
    assert cfg.save_parser.first("[Checkpoint] saved step 10 to /s/ckpts/step_10") == "/s/ckpts/step_10"
    assert cfg.save_parser.first("[Train] best acc 0.5, saved ./output/best_model.pdparams") is None
    argv = cfg.gather_argv("/s/ckpts")
    assert argv[2:4] == ["--checkpoint_dir", "/s/ckpts"]
    assert "--output_dir" in argv and "${WORK}/output" in argv  # kept out of the repo
    assert cfg.run_argv("c", 5, 8)[2:8] == ["--resume", "c", "--start_step", "5", "--max_steps", "8"]


def _repo_without_resume(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(DEMO / "test_tipc" / "configs", repo / "test_tipc" / "configs")
    (repo / "train.py").write_text(
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--epochs', type=int)\n"
        "p.add_argument('--output_dir')\np.add_argument('--data_dir')\np.add_argument('--seed')\n"
        "print(f'epoch {1} loss: {0.5}')\n"
    )
    return repo


def test_missing_resume_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo_without_resume(tmp_path)
    prop = propose(repo)
    assert not prop.can_resume
    assert prop.flags["run_for"] is not None and prop.flags["run_for"].flag == "--epochs"
    missing = [m for m in prop.messages if m.startswith("missing capability")]
    assert len(missing) == 2
    assert "no flag to load a checkpoint" in missing[0] and "no flag to start at a given step" in missing[1]
    assert main(["converge", "init", str(repo)]) == 1
    captured = capsys.readouterr()
    assert "missing capability: train.py has no flag to load a checkpoint" in captured.err
    assert '"--TODO-checkpoint-input"' in captured.out


def test_no_tipc_config_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["converge", "init", str(tmp_path)]) == 2
    assert "no test_tipc/configs" in capsys.readouterr().err


def _unpack_sources(name: str, dest: Path) -> Path:
    tarball = REAL_REPOS / f"{name}.tar.gz"
    if not tarball.is_file():
        pytest.skip(f"{tarball} not here")
    with tarfile.open(tarball) as tf:
        members = [
            m for m in tf.getmembers() if m.isfile() and m.name.endswith((".py", ".txt", ".yaml", ".yml"))
        ]
        tf.extractall(dest, members=members, filter="data")
    return dest / name


@pytest.mark.parametrize(
    ("name", "resumes", "missing"),
    [
        ("PaddlePaddle__models__Step6", True, set()),
        ("liuxtakeoff__cutpaste_paddle", False, {"load a checkpoint", "start at a given step"}),
        ("sldyns__DnCNN_paddle", False, {"load a checkpoint", "start at a given step"}),
        (
            "Lllllolita__CAN_Paddle",
            False,
            {"load a checkpoint", "start at a given step", "stop after", "choose where checkpoints"},
        ),
    ],
)
def test_real_repos(name: str, resumes: bool, missing: set[str], tmp_path: Path) -> None:
    repo = _unpack_sources(name, tmp_path)
    prop = propose(repo)
    assert prop.can_resume is resumes
    said = {m.split("no flag to ", 1)[1] for m in prop.messages if m.startswith("missing capability")}
    assert {next(w for w in missing if s.startswith(w)) for s in said} == missing
    cfg = load_text(prop.yaml_text, "p.yml")  # the proposal is always loadable
    if resumes:
        run = next(iter(cfg.values())).run_argv("ck", 3, 5)
        assert run[2:8] == ["--resume", "ck", "--start-epoch", "3", "--epochs", "5"]


def test_unwritable_output_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["converge", "init", str(DEMO), "-o", str(tmp_path / "missing" / "c.yaml")]) == 2
    assert "cannot write" in capsys.readouterr().err
