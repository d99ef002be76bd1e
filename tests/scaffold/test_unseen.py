"""`tipc init` on shapes it was not tuned for (issue 28): weights saved under a sub-folder built through local
variables or at a constant path, training counted in iterations, lite data in test_tipc/data, in split
folders named `*_mini` or in a zip to unpack, an eval script only the docs name, file-style model flags.

The trees mimic shapes seen in public repos (DMNet, NAFNet, PaddleC3D), written afresh. Each test reads what
tipc itself then plans from the generated config, so a slot that looks right but sends a stage to the wrong
path fails here.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.scaffold.scaffold_fixtures import build_tree
from tipc.scaffold import infer_slots, render_test_tipc
from tipc.scaffold.detect import find_lite_data, find_scripts, train_samples

_PARSER = "import argparse, os, paddle\np = argparse.ArgumentParser()\n"
_PNG = "not really a png"

# Iterations, a log folder with the weights one folder down (`<log_dir>/models/model_latest.pdparams`, built
# through a local variable), split folders of paired images named `*_mini`, eval only in the README.
RESTORATION = {
    "train.py": _PARSER + "p.add_argument('--batchSize', type=int, default=8)\n"
    "p.add_argument('--iter', type=int, default=16)\n"
    "p.add_argument('--data_dir', type=str, default='patches/train/')\n"
    "p.add_argument('--val_dir', type=str, default='patches/val/')\n"
    "p.add_argument('--log_dir', type=str, default='output')\n"
    "opt = p.parse_args()\n"
    "def main():\n"
    "    model_dir = os.path.join(opt.log_dir, 'models')\n"
    "    paddle.save({}, os.path.join(model_dir, 'model_best.pdparams'))\n"
    "    paddle.save({}, os.path.join(model_dir, 'model_latest.pdparams'))\n",
    "predict.py": _PARSER + "p.add_argument('--model_ckpt', default='model_best.pdparams')\n"
    "p.add_argument('--data_path', default='patches/val_mini/')\n"
    "p.add_argument('--save_path', default='results/')\n"
    "p.add_argument('--save_images', action='store_true')\n"
    "opt = p.parse_args()\nckpt = paddle.load(opt.model_ckpt)\n",
    "export_model.py": _PARSER + "p.add_argument('--save-inference-dir', default='./inference_output')\n"
    "p.add_argument('--model-dir', default='model_best.pdparams')\n"
    "opt = p.parse_args()\nckpt = paddle.load(opt.model_dir)\n",
    "infer.py": _PARSER + "from paddle import inference\n"
    "p.add_argument('--model-dir', default=None)\np.add_argument('--use-gpu', default=True)\n"
    "p.add_argument('--batch-size', type=int, default=1)\np.add_argument('--clean-dir', default='c.png')\n"
    "p.add_argument('--noisy-dir', default='n.png')\np.add_argument('--benchmark', default=False)\n"
    "args = p.parse_args()\n"
    "config = inference.Config(os.path.join(args.model_dir, 'model.pdmodel'), "
    "os.path.join(args.model_dir, 'model.pdiparams'))\n",
    "README.md": "## predict\n```\n"
    "python test_full.py --weight ../data/model_best.pdparams\n"
    "python predict.py --model_ckpt ../data/model_best.pdparams --data_path ./patches/val_mini/ "
    "--save_path results/ --save_images\n```\n"
    "```\npython infer.py --model-dir inference_output --use-gpu True "
    "--clean-dir=./patches/val_mini/gt/0.png --noisy-dir=./patches/val_mini/input/0.png\n```\n",
    "test_full.py": _PARSER + "p.add_argument('--weight')\n",
    **{
        f"patches/{split}_mini/{kind}/{i}.png": _PNG
        for split in ("train", "val")
        for kind in ("gt", "input")
        for i in range(8)
    },
}

# Weights saved at a constant path whatever train is given, read back by a `test.py` eval (by default) and
# an export given the path; lite data in test_tipc/data beside an input array; model and params as files.
VIDEO = {
    "train.py": _PARSER + "p.add_argument('--dataset_root', default='/home/someone/ucf101/')\n"
    "p.add_argument('--batch_size', type=int, default=32)\n"
    "p.add_argument('--max_epochs', type=int, default=100)\n"
    "p.add_argument('--pretrained', default=None)\nargs = p.parse_args()\n"
    "save_dir = os.path.join('output', 'best_model')\n"
    "paddle.save({}, os.path.join(save_dir, 'model.pdparams'))\n",
    "test.py": _PARSER + "p.add_argument('--dataset_root', default='/home/someone/ucf101/')\n"
    "p.add_argument('--pretrained', default='output/best_model/model.pdparams')\nargs = p.parse_args()\n",
    "export_model.py": _PARSER + "p.add_argument('--save_dir', default='./output')\n"
    "p.add_argument('--model_path', default=None)\nargs = p.parse_args()\n",
    "infer.py": _PARSER + "from paddle.inference import Config, create_predictor\n"
    "p.add_argument('-i', '--input_file', type=str)\np.add_argument('--model_file', type=str)\n"
    "p.add_argument('--params_file', type=str)\np.add_argument('--use_gpu', default=True)\n"
    "p.add_argument('--enable_mkldnn', default=False)\np.add_argument('--enable_benchmark', default=False)\n"
    "args = p.parse_args()\nconfig = Config(args.model_file, args.params_file)\n",
    "test_tipc/data/example.npy": "array",
    "test_tipc/data/screenshot.png": _PNG,
    **{f"test_tipc/data/mini_clips/frames/v{i}/img_{f}.jpg": _PNG for i in range(3) for f in range(2)},
    "test_tipc/data/mini_clips/train_list.txt": "v0 2 0\nv1 2 1\n",
    "test_tipc/data/mini_clips/val_list.txt": "v2 2 0\n",
}


def _planned(repo: Path) -> dict[str, str]:
    """stage -> the first command tipc plans for it from the generated config (what `tipc run` runs)."""
    done = subprocess.run(
        [sys.executable, "-m", "tipc", "run", str(repo), "--dry-run", "--format", "json", "--no-sandbox"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out: dict[str, str] = {}
    for step in json.loads(done.stdout)["steps"]:
        out.setdefault(step["id"].split("/", 1)[0], " ".join(step["argv"]))
    return out


def _write(repo: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = repo / "test_tipc" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_weights_under_a_sub_folder_of_the_log_dir_and_split_folders(tmp_path: Path) -> None:
    repo = build_tree(tmp_path / "restoration", RESTORATION)
    filled = infer_slots(repo, "m", None)
    s = filled.slots
    assert filled.dialect == "compact"
    assert s["save_model"] == ("--log_dir", "./output/")
    # the file under the save folder, sub-folder included; the latest, written every run, not the best
    assert s["train_model_name"] == ("train_model_name", "models/model_latest.pdparams")
    assert s["epoch"] == (
        "--iter",
        "lite_train_lite_infer=10|lite_train_whole_infer=10|whole_train_whole_infer=16",
    )
    # 8 pairs of images in the training split: a batch of 2
    assert s["train_batch"][1].startswith("lite_train_lite_infer=2|")
    assert s["data_path"] == ("--data_dir", "./patches/train_mini")
    assert "--val_dir=./patches/val_mini" in s["norm_train"][1]
    # eval: the script the README runs with weights on the lite data, not the full-test one; no output flags
    assert s["eval"] == ("eval", "predict.py")
    assert s["pretrain"] == ("--model_ckpt", "null")
    assert s["export_weight"] == ("--model-dir", "")
    files = render_test_tipc(filled, repo)
    _write(repo, files)
    plan = _planned(repo)
    save = "./test_tipc/output/m/lite_train_lite_infer/norm_train_gpus_-1_autocast_False_nodes_1.log"
    assert f"--log_dir={save}" in plan["train"]
    assert f"--model_ckpt={save}/models/model_latest.pdparams" in plan["eval"]
    assert f"--model-dir={save}/models/model_latest.pdparams" in plan["export"]
    assert (
        f"--model-dir={save}" in plan["infer"] and "--clean-dir=./patches/val_mini/gt/0.png" in plan["infer"]
    )


def test_constant_save_path_is_read_back_and_never_the_scripts_log_folder(tmp_path: Path) -> None:
    repo = build_tree(tmp_path / "video", VIDEO)
    filled = infer_slots(repo, "m", None)
    s = filled.slots
    assert filled.dialect == "template"
    assert s["save_model"] == ("null", "null")
    assert s["eval"] == ("eval", "test.py")  # test.py defaults to the very file train writes
    assert s["pretrain"] == ("null", "null") and s["export_weight"] == ("null", "null")
    assert s["norm_export"] == (
        "norm_export",
        "export_model.py --model_path=./output/best_model/model.pdparams",
    )
    assert s["train_param1"] == ("--dataset_root", "./test_tipc/data/mini_clips")
    # 2 clips in the training list (6 frames on disk): a batch of 1 keeps an epoch non-empty
    assert s["train_batch"][1].startswith("lite_train_lite_infer=1|")
    assert s["image"] == ("--input_file", "./test_tipc/data/example.npy")
    assert s["benchmark"] == ("--enable_benchmark", "False")
    todos = {t.slot: t.message for t in filled.todos}
    assert "save_model" not in todos  # where train writes is known
    assert "takes the exported model as files (--model_file, --params_file)" in todos["model_dir"]
    _write(repo, render_test_tipc(filled, repo))
    plan = _planned(repo)
    assert "--model_path=./output/best_model/model.pdparams" in plan["export"]
    assert not any("autocast_null/model.pdparams" in cmd for cmd in plan.values()), plan


def test_no_save_folder_and_no_constant_path_passes_no_made_up_weights(tmp_path: Path) -> None:
    files = dict(RESTORATION)
    files["train.py"] = (
        _PARSER + "p.add_argument('--iter', type=int, default=16)\n"
        "p.add_argument('--data_dir', default='patches/train/')\nopt = p.parse_args()\n"
        "def save(model, where):\n    paddle.save(model.state_dict(), where)\n"
    )
    repo = build_tree(tmp_path / "r", files)
    filled = infer_slots(repo, "m", None)
    assert filled.slots["save_model"] == ("null", "null")
    assert filled.slots["pretrain"] == ("null", "null") and filled.slots["export_weight"] == ("null", "null")
    assert any(
        t.slot == "pretrain" and "could not tell where train.py writes" in t.message for t in filled.todos
    )
    _write(repo, render_test_tipc(filled, repo))
    plan = _planned(repo)
    assert not any(".log/" in cmd for cmd in (plan["eval"], plan["export"])), plan


def test_lite_data_where_repos_keep_it(tmp_path: Path) -> None:
    # split folders named *_mini stand for their data set
    restoration = build_tree(tmp_path / "a", RESTORATION)
    lite = find_lite_data(restoration)
    assert lite is not None and lite.dir == "patches" and lite.train_samples == 8
    # test_tipc/data: the named data set, the input array beside it; a screenshot is not data
    video = build_tree(tmp_path / "b", VIDEO)
    lite = find_lite_data(video)
    assert lite is not None and lite.dir == "test_tipc/data/mini_clips"
    assert lite.input_arrays == ("test_tipc/data/example.npy",)
    # code and configs named *lite* are not data
    decoys = build_tree(
        tmp_path / "c",
        {
            "deploy/lite/app/main.java": "class A {}",
            "deploy/lite/app/img.png": _PNG,
            "deploy/lite/app/img2.png": _PNG,
            "configs/model_lite/model.yml": "a: 1",
            "configs/model_lite/preview.png": _PNG,
            "configs/model_lite/preview2.png": _PNG,
        },
    )
    assert find_lite_data(decoys) is None


def test_zip_in_test_tipc_data_is_unpacked_in_place_by_prepare(tmp_path: Path) -> None:
    files = {k: v for k, v in VIDEO.items() if "mini_clips" not in k}
    repo = build_tree(tmp_path / "v", files)
    with zipfile.ZipFile(repo / "test_tipc" / "data" / "mini_clips.zip", "w") as zf:
        for k, v in VIDEO.items():
            if "mini_clips" in k:
                zf.writestr(k.removeprefix("test_tipc/data/"), v)
        zf.writestr("__MACOSX/mini_clips/._train_list.txt", "junk")
    lite = find_lite_data(repo)
    assert lite is not None and lite.dir == "test_tipc/data/mini_clips"
    assert (lite.archive, lite.extract_to) == ("test_tipc/data/mini_clips.zip", "test_tipc/data")
    assert not (repo / "test_tipc" / "data" / "mini_clips").exists()  # init reads, never extracts
    filled = infer_slots(repo, "m", None)
    assert filled.slots["train_param1"] == ("--dataset_root", "./test_tipc/data/mini_clips")
    _write(repo, render_test_tipc(filled, repo))
    config = "test_tipc/configs/m/train_infer_python.txt"
    for _ in range(2):  # idempotent: the second run finds the folder
        done = subprocess.run(
            ["bash", "test_tipc/prepare.sh", config, "lite_train_lite_infer"],
            cwd=repo,
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin", "PYTHON": sys.executable},
            check=False,
        )
        assert done.returncode == 0, done.stderr
    assert (repo / "test_tipc/data/mini_clips/train_list.txt").read_text() == "v0 2 0\nv1 2 1\n"
    assert not (repo / "test_tipc/data/__MACOSX").exists()
    assert "is present; nothing to extract" in done.stdout


def test_a_unit_test_module_named_test_py_is_not_eval(tmp_path: Path) -> None:
    repo = build_tree(
        tmp_path / "r",
        {"train.py": _PARSER, "test.py": "import unittest\nimport argparse\n# add_argument in a comment\n"},
    )
    assert "eval" not in find_scripts(repo)


def test_paired_folders_count_one_sample_per_pair() -> None:
    pairs = [f"d/train_mini/{k}/{i}.png" for k in ("gt", "input") for i in range(10)]
    assert train_samples(pairs) == 10
    seg = [f"d/train/images/{i}.jpg" for i in range(6)] + [f"d/train/labels/{i}.png" for i in range(6)]
    assert train_samples([*seg, "d/train.txt"]) == 6
