"""Lite data found by what the config reads, not by the name lite_data."""

import io
import tarfile
from pathlib import Path

from tests.judge.checks.checks_fixtures import ctx_for, write_tree
from tipc.judge.checks import CHECKS
from tipc.judge.checks.base import Verdict

CONFIG = "test_tipc/configs/m/train_infer_python.txt"

# sldyns/DnCNN_paddle: a data-path slot and the train command's own data options.
DNCNN = """\
===========================train_params===========================
model_name:DnCNN
python:python
gpu_list:0
use-gpu:True
--epochs:lite_train_lite_infer=1|whole_train_whole_infer=20
--log_dir:./output/
--batchSize:lite_train_lite_infer=1|whole_train_whole_infer=4
--pretrained:null
train_model_name:net.pdparams
--data-path:./test_tipc/data/Set2/
##
trainer:norm_train
norm_train:train.py --data_dir ./test_tipc/data/Set2/ --val_dir ./test_tipc/data/Set2/ --preprocess True
##
===========================eval_params===========================
eval:val.py --log_dir logs --data_path ./test_tipc/data/Set2/ --test_noiseL 15
"""


def tar_of(*names: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name in names:
            info = tarfile.TarInfo(name)
            info.size = 1
            tf.addfile(info, io.BytesIO(b"x"))
    return buf.getvalue()


def test_data_named_otherwise_is_found(tmp_path: Path) -> None:
    write_tree(tmp_path, {CONFIG: DNCNN, "test_tipc/data/Set2/01.png": b"\x89PNG"})
    out = CHECKS["lite_data"](ctx_for(tmp_path, None))
    assert out.verdict is Verdict.PASS, out.summary
    assert out.data["paths"] == ["./test_tipc/data/Set2/"]
    assert (out.evidence[0].path, out.evidence[0].line) == (CONFIG, 11)


def test_data_in_a_shipped_archive_is_found(tmp_path: Path) -> None:
    # The official tutorial: `--data-path:./lite_data`, which prepare.sh extracts from lite_data.tar.
    config = DNCNN.replace("--data-path:./test_tipc/data/Set2/", "--data-path:./lite_data").replace(
        "./test_tipc/data/Set2/", "./lite_data"
    )
    write_tree(tmp_path, {CONFIG: config, "test_images/lite_data.tar": tar_of("lite_data/val/n01/a.jpeg")})
    out = CHECKS["lite_data"](ctx_for(tmp_path, None))
    assert out.verdict is Verdict.PASS and "test_images/lite_data.tar" in out.evidence[0].text


def test_missing_data_fails_naming_the_config_line(tmp_path: Path) -> None:
    write_tree(tmp_path, {CONFIG: DNCNN})
    out = CHECKS["lite_data"](ctx_for(tmp_path, None))
    assert out.verdict is Verdict.FAIL
    assert "./test_tipc/data/Set2/" in out.summary and out.evidence[0].line == 11


def test_no_data_path_is_na_and_options_that_are_not_paths_are_ignored(tmp_path: Path) -> None:
    # Lieberk/Paddle-Cutpaste passes `--data_type=bottle`: a data option, not a path.
    config = (
        "===========================train_params===========================\n"
        "model_name:resnet18\n"
        "norm_train:train.py --test_epochs=3 --data_type=bottle --model_dir=out\n"
    )
    write_tree(tmp_path, {CONFIG: config})
    assert CHECKS["lite_data"](ctx_for(tmp_path, None)).verdict is Verdict.NA
    assert "bad arguments" in CHECKS["lite_data"](ctx_for(tmp_path, None), x=1).summary


def test_config_argument_and_data_outside_the_repo(tmp_path: Path) -> None:
    config = DNCNN.replace("./test_tipc/data/Set2/", "/nonexistent/Set2/")
    write_tree(tmp_path, {CONFIG: config})
    out = CHECKS["lite_data"](ctx_for(tmp_path, None), config=CONFIG)
    assert out.verdict is Verdict.FAIL and "outside the repo" in out.summary
    assert (
        "config: expected a path inside the repo"
        in CHECKS["lite_data"](ctx_for(tmp_path, None), config=3).summary
    )
    missing = CHECKS["lite_data"](ctx_for(tmp_path, None), config="test_tipc/configs/none.txt")
    assert missing.verdict is Verdict.NA and "no train_infer_python config" in missing.summary


def test_the_run_records_config_is_read(tmp_path: Path) -> None:
    from tests.judge.checks.checks_fixtures import make_record

    write_tree(
        tmp_path,
        {
            "test_tipc/configs/demo/train_infer_python.txt": DNCNN,
            CONFIG: DNCNN.replace("./test_tipc/data/Set2/", "./elsewhere/"),
            "test_tipc/data/Set2/01.png": b"\x89PNG",
        },
    )
    record = make_record(tmp_path, [])
    out = CHECKS["lite_data"](ctx_for(tmp_path, record))
    assert out.verdict is Verdict.PASS and out.data["paths"] == ["./test_tipc/data/Set2/"]
    assert CHECKS["lite_data"](ctx_for(tmp_path, None)).verdict is Verdict.FAIL  # every config, CONFIG too


def test_a_dataset_named_on_a_command_line_is_not_a_missing_path(tmp_path: Path) -> None:
    # the data slot names the folder; the train command names the dataset (`--data=CUB_TINY`)
    config = DNCNN.replace("--data-path:./test_tipc/data/Set2/", "--data-path:./data/CUB_TINY").replace(
        "norm_train:train.py --data_dir ./test_tipc/data/Set2/ --val_dir ./test_tipc/data/Set2/",
        "norm_train:train.py --data=CUB_TINY --dataset bird_tiny",
    )
    config = config.replace("--data_path ./test_tipc/data/Set2/", "--data_path ./data/CUB_TINY")
    write_tree(tmp_path, {CONFIG: config, "data/CUB_TINY/images/a.jpg": b"x"})
    out = CHECKS["lite_data"](ctx_for(tmp_path, None))
    assert out.verdict is Verdict.PASS, out.summary
    assert out.data == {"paths": ["./data/CUB_TINY"], "names": ["CUB_TINY", "bird_tiny"]}
    noted = [e.text for e in out.evidence]
    assert (
        "CUB_TINY: a dataset named on the command line, not a path; the config's data path ./data/CUB_TINY"
        in ("\n".join(noted))
    )
    # a path that is missing still fails; a name only is N-A
    (tmp_path / "data/CUB_TINY/images/a.jpg").unlink()
    (tmp_path / "data/CUB_TINY/images").rmdir()
    (tmp_path / "data/CUB_TINY").rmdir()
    assert CHECKS["lite_data"](ctx_for(tmp_path, None)).verdict is Verdict.FAIL
    only_names = config.replace("--data-path:./data/CUB_TINY", "--data-path:null").replace(
        "--data_path ./data/CUB_TINY", "--test_noiseL 15"
    )
    write_tree(tmp_path, {CONFIG: only_names})
    out = CHECKS["lite_data"](ctx_for(tmp_path, None))
    assert out.verdict is Verdict.NA and "names its data by name only" in out.summary, out.summary


def test_a_folder_named_like_a_dataset_is_looked_for(tmp_path: Path) -> None:
    # renmada/RD4AD-paddle: `--data_dir sample_data` is a folder of the repo, found as a path
    config = DNCNN.replace("--data_dir ./test_tipc/data/Set2/", "--data_dir sample_data")
    write_tree(tmp_path, {CONFIG: config, "test_tipc/data/Set2/01.png": b"x", "sample_data/a.png": b"x"})
    out = CHECKS["lite_data"](ctx_for(tmp_path, None))
    assert out.verdict is Verdict.PASS and "sample_data" in out.data["paths"], out.summary
