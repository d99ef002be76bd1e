"""Static checks of the demo repo: config slots match the flags, lite data is consistent, scripts lint.

No Paddle here: these run in well under a second each.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import tarfile
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from tipc.execute import proc

DEMO = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
CONFIG = DEMO / "test_tipc" / "configs" / "lenet_digits" / "train_infer_python.txt"


def load_transforms() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "lenet_digits_transforms", DEMO / "lenet_digits" / "transforms.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def argparse_flags(script: str) -> set[str]:
    return set(re.findall(r'add_argument\(\s*"(--[a-z_]+)"', (DEMO / script).read_text()))


def slots() -> list[tuple[str, str]]:
    """(key, value) per line, split like the template's parser (every ':'; value = field 1)."""
    out = []
    for line in CONFIG.read_text().split("\n")[:51]:
        fields = line.split(":")
        out.append((fields[0], fields[1] if len(fields) > 1 else ""))
    return out


def test_config_is_51_template_lines_without_blank_or_crlf() -> None:
    raw = CONFIG.read_bytes()
    assert b"\r" not in raw
    lines = raw.decode().splitlines()
    assert len(lines) == 51
    assert all(line.strip() for line in lines)
    assert lines[0].strip("=") == "train_params"
    assert lines[22].strip("=") == "eval_params" and lines[26].strip("=") == "infer_params"
    assert [lines[i] for i in (13, 21, 25)] == ["##", "##", "##"]


def test_config_keys_are_real_flags_of_the_scripts() -> None:
    s = slots()
    train, evaluate, export, infer = (
        argparse_flags(f) for f in ("train.py", "eval.py", "export_model.py", "infer.py")
    )
    # train slots: use_gpu(4), epoch(6), save model(7), batch(8), pretrain(9)
    for idx in (4, 6, 7, 8, 9):
        assert s[idx][0] in train, s[idx]
    assert s[15][1].split()[0] == "train.py"
    assert {tok.split("=")[0] for tok in s[15][1].split()[1:]} <= train
    # eval gets the pretrain key and the train use_gpu key
    assert s[23][1].split()[0] == "eval.py" and {s[9][0], s[4][0]} <= evaluate
    # export: save-inference key(27), weight key(28)
    assert s[29][1] == "export_model.py" and {s[27][0], s[28][0]} <= export
    # inference: use_gpu .. benchmark
    assert s[39][1] == "infer.py"
    for idx in (40, 41, 42, 43, 44, 45, 46, 47, 49):
        assert s[idx][0] in infer, s[idx]
    assert s[3][1] == "-1" and s[40][1] == "False"
    assert (DEMO / s[36][1]).is_file()  # whole_infer weights are shipped
    assert s[10][1] == "latest.pdparams"


@pytest.mark.parametrize(
    "mode", ["lite_train_lite_infer", "lite_train_whole_infer", "whole_train_whole_infer"]
)
def test_every_train_mode_has_epochs_and_batch(mode: str) -> None:
    s = slots()
    for idx in (6, 8):
        values = dict(alt.split("=")[:2] for alt in s[idx][1].split("|"))
        assert int(values[mode]) > 0


def test_lite_data_lists_point_at_images_and_are_balanced() -> None:
    for name, per_class in (("train_list.txt", 30), ("test_list.txt", 10)):
        rows = [line.split() for line in (DEMO / "lite_data" / name).read_text().splitlines()]
        assert all((DEMO / "lite_data" / path).is_file() for path, _ in rows)
        labels = [int(label) for _, label in rows]
        assert sorted(set(labels)) == list(range(10))
        assert all(labels.count(c) == per_class for c in range(10))


def test_lite_data_tar_unpacks_to_the_same_lite_data(tmp_path: Path) -> None:
    with tarfile.open(DEMO / "lite_data.tar") as tar:
        tar.extractall(tmp_path, filter="data")
    unpacked = {
        p.relative_to(tmp_path).as_posix() for p in (tmp_path / "lite_data").rglob("*") if p.is_file()
    }
    shipped = {p.relative_to(DEMO).as_posix() for p in (DEMO / "lite_data").rglob("*") if p.is_file()}
    assert unpacked == shipped
    for rel in shipped:
        assert (tmp_path / rel).read_bytes() == (DEMO / rel).read_bytes(), rel


def test_infer_inputs_are_the_first_test_images_preprocessed() -> None:
    transforms = load_transforms()
    batch = np.load(DEMO / "lite_data" / "infer_inputs.npy")
    assert batch.dtype == np.float32 and batch.shape == (16, 1, 8, 8)
    rows = (DEMO / "lite_data" / "test_list.txt").read_text().splitlines()[:16]
    expected = np.stack([transforms.load_image(str(DEMO / "lite_data" / r.split()[0])) for r in rows])
    np.testing.assert_array_equal(batch, expected)
    assert batch.min() >= -1.0 and batch.max() <= 1.0


def test_ground_truth_covers_the_inference_images() -> None:
    (gt,) = (DEMO / "test_tipc" / "results").glob("python_infer_cpu_*precision_fp32*.txt")
    names = {Path(line.split("\t")[0]).name for line in gt.read_text().splitlines()}
    assert names == {p.name for p in (DEMO / "lite_data" / "infer").glob("*.png")}


@pytest.mark.skipif(shutil.which("shellcheck") is None, reason="shellcheck not installed")
def test_tipc_shell_scripts_pass_shellcheck() -> None:
    scripts = ["test_tipc/common_func.sh", "test_tipc/test_train_inference_python.sh", "test_tipc/prepare.sh"]
    lines: list[str] = []
    result = proc.run(["shellcheck", "-x", *scripts], cwd=DEMO, timeout_s=60, on_line=lines.append)
    assert result.exit_code == 0, "\n".join(lines)


def test_the_demo_stays_runnable_on_python_3_9() -> None:
    """`tipc matrix --paddle 2.6.2` runs the demo under Python 3.9 (Paddle 2.x's interpreter): its code must
    compile there and pass no keyword 3.9 lacks (`zip(strict=...)` is 3.10's: the demo's infer.py failed on
    it)."""
    import ast

    from tests.helpers.pythons import pyenv_pythons

    sources = sorted(p for p in DEMO.rglob("*.py") if "output" not in p.parts)
    for path in sources:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path), feature_version=(3, 9))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "zip":
                assert not any(k.arg == "strict" for k in node.keywords), f"{path}:{node.lineno}"
    old = pyenv_pythons("3.9")
    if old:  # the real interpreter where there is one compiles every file
        code = "import sys\nfor f in sys.argv[1:]: compile(open(f, encoding='utf-8').read(), f, 'exec')"
        rc, out = proc.capture([str(old[0]), "-c", code, *map(str, sources)], cwd=DEMO, timeout_s=120)
        assert rc == 0, out
