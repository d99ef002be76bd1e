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
    # a missing folder is made (atomic writes make their folder); a file in the way is no folder
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    assert main(["converge", "init", str(DEMO), "-o", str(blocker / "c.yaml")]) == 2
    assert "cannot write" in capsys.readouterr().err


def _repo_with_variants(tmp_path: Path) -> Path:
    """The demo's train config beside a variant that sorts first (train_amp_...), as Step6 ships them."""
    repo = tmp_path / "repo"
    shutil.copytree(DEMO, repo, ignore=shutil.ignore_patterns("output", "__pycache__", "lite_data"))
    configs = repo / "test_tipc" / "configs" / "lenet_digits"
    main_text = (configs / "train_infer_python.txt").read_text()
    amp = main_text.replace("norm_train:train.py", "norm_train:train.py --amp_level=O2")
    (configs / "train_amp_infer_python.txt").write_text(amp)
    return repo


def test_proposal_reads_the_main_config_and_keeps_its_data_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repo_with_variants(tmp_path)
    path = repo / "test_tipc" / "configs" / "lenet_digits" / "train_infer_python.txt"
    lines = path.read_text().splitlines()
    # the data only in the template's train-parameter slot (line 13), not in the train command
    assert lines[12] == "null:null" and lines[15] == "norm_train:train.py --data_dir=./lite_data --seed=2024"
    lines[12], lines[15] = "--data_dir:./lite_data", "norm_train:train.py --seed=2024"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    prop = propose(repo)
    assert "from test_tipc/configs/lenet_digits/train_infer_python.txt" in prop.yaml_text
    assert "--amp_level" not in prop.yaml_text
    cfg = load_text(prop.yaml_text, str(tmp_path / "proposal.yml"))["repo"]
    argv = cfg.gather_argv("/s/ckpts")
    assert "--data_dir" in argv and argv[argv.index("--data_dir") + 1] == "./lite_data"
    # the variant is still there to be named
    amp = propose(repo, "test_tipc/configs/lenet_digits/train_amp_infer_python.txt")
    assert "--amp_level" in amp.yaml_text


def test_directory_is_relative_to_where_the_file_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = _repo_with_variants(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["converge", "init", "repo"]) == 0
    out = capsys.readouterr().out
    assert 'directory: "repo"' in out and str(tmp_path) not in out
    # written into the repo itself (the file the help suggests committing): the repo is "."
    target = repo / "convergence.yaml"
    assert main(["converge", "init", str(repo), "-o", str(target)]) == 0
    written = target.read_text()
    assert 'directory: "."' in written and str(tmp_path) not in written
    # the committed file still finds its repo from anywhere: relative to the file's folder
    monkeypatch.chdir(tmp_path.parent)
    cfg = load_text(written, str(target))["repo"]
    assert cfg.resolve_directory() == repo.resolve()


def test_several_main_configs_are_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo_with_variants(tmp_path)
    other = repo / "test_tipc" / "configs" / "other"
    other.mkdir()
    shutil.copy(repo / "test_tipc" / "configs" / "lenet_digits" / "train_infer_python.txt", other)
    assert main(["converge", "init", str(repo)]) == 2
    err = capsys.readouterr().err
    assert "several train_infer_python configs" in err and "other/train_infer_python.txt" in err


def test_step6_proposal_uses_train_infer_python_and_its_data_path(tmp_path: Path) -> None:
    repo = _unpack_sources("PaddlePaddle__models__Step6", tmp_path)
    prop = propose(repo, base=tmp_path)
    assert "from test_tipc/configs/mobilenet_v3_small/train_infer_python.txt" in prop.yaml_text
    cfg = load_text(prop.yaml_text, str(tmp_path / "c.yml"))["PaddlePaddle__models__Step6"]
    assert cfg.directory == "PaddlePaddle__models__Step6"
    argv = cfg.gather_argv("ck")
    assert "--amp_level" not in argv
    assert argv[argv.index("--data-path") + 1] == "./lite_data"
