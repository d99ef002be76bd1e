"""Slot filling from a scanned repo: synonyms, spelling kept, CPU defaults, TODOs for what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scaffold.scaffold_fixtures import DEMO_FILES, build_tree
from tipc.core.errors import UserError
from tipc.scaffold import infer_slots
from tipc.scaffold.detect import find_lite_data, find_scripts, saved_checkpoint_names


def test_demo_like_repo_fills_every_slot_without_todos(demo_repo: Path) -> None:
    filled = infer_slots(demo_repo, "lenet_digits", "template")
    assert filled.todos == []
    s = filled.slots
    assert s["gpu_list"] == ("gpu_list", "-1")
    assert s["train_use_gpu"] == ("--use_gpu", "False")
    assert s["epoch"] == (
        "--epochs",
        "lite_train_lite_infer=5|lite_train_whole_infer=5|whole_train_whole_infer=5",
    )
    assert s["train_batch"][0] == "--batch_size"
    assert s["save_model"] == ("--output_dir", "./output/")
    assert s["pretrain"] == ("--pretrained", "null")
    assert s["train_model_name"] == ("train_model_name", "latest.pdparams")
    assert s["norm_train"] == ("norm_train", "train.py")
    assert s["eval"] == ("eval", "eval.py")
    assert s["norm_export"] == ("norm_export", "export_model.py")
    assert s["save_inference"][0] == "--save_inference_dir"
    assert s["export_weight"] == ("--pretrained", "")
    assert s["inference"] == ("inference", "infer.py")
    assert s["infer_use_gpu"] == ("--use_gpu", "False")
    assert s["mkldnn"] == ("--enable_mkldnn", "False")
    assert s["cpu_threads"] == ("--cpu_threads", "1")
    assert s["precision"] == ("--precision", "fp32")
    assert s["model_dir"] == ("--model_dir", "")
    assert s["image"] == ("--img_path", "./lite_data/images/0.png")
    assert s["infer_model"] == ("infer_model", "./pretrained/lenet_digits.pdparams")
    # the data flag already defaults to the lite data, so no extra parameter is passed
    assert s["train_param1"] == ("null", "null")


def test_dashed_flags_keep_their_spelling(tmp_path: Path) -> None:
    files = dict(DEMO_FILES)
    files["train.py"] = (
        "import argparse\np = argparse.ArgumentParser()\n"
        "p.add_argument('--max-epochs', type=int, default=90)\n"
        "p.add_argument('--batch-size', type=int, default=128)\n"
        "p.add_argument('--output-dir')\np.add_argument('--data-path', default='/data/imagenet')\n"
        "p.add_argument('--pretrained')\n"
    )
    repo = build_tree(tmp_path / "r", files)
    filled = infer_slots(repo, "m", "template")
    s = filled.slots
    assert s["epoch"] == (
        "--max-epochs",
        "lite_train_lite_infer=5|lite_train_whole_infer=5|whole_train_whole_infer=90",
    )
    # the fixture's lite data holds a couple of files: a batch of one keeps an epoch non-empty
    assert s["train_batch"] == (
        "--batch-size",
        "lite_train_lite_infer=1|lite_train_whole_infer=1|whole_train_whole_infer=128",
    )
    assert s["save_model"][0] == "--output-dir"
    assert s["train_param1"] == ("--data-path", "./lite_data")  # default is elsewhere: pass the lite data
    assert s["train_use_gpu"] == ("null", "null")
    # no .pdparams name in the script: a TODO, never a silent guess
    assert any(t.slot == "train_model_name" for t in filled.todos)


def test_missing_pieces_become_todos_not_config_comments(tmp_path: Path) -> None:
    repo = build_tree(tmp_path / "r", {"train.py": "import argparse\np = argparse.ArgumentParser()\n"})
    filled = infer_slots(repo, "m", "template")
    slots_with_todos = {t.slot for t in filled.todos}
    assert {"norm_export", "inference", "infer_model", "epoch"} <= slots_with_todos
    assert filled.slots["eval"] == ("eval", "null")
    for key, value in filled.slots.values():
        assert "#" not in key + value and "TODO" not in key + value


def test_switch_and_type_bool_flags_are_reported(tmp_path: Path) -> None:
    files = dict(DEMO_FILES)
    files["infer.py"] = (
        "import argparse\nimport paddle.inference\np = argparse.ArgumentParser()\n"
        "p.add_argument('--model_dir')\np.add_argument('--use_gpu', type=bool, default=False)\n"
        "p.add_argument('--enable_mkldnn', action='store_true')\n"
        "p.add_argument('--benchmark', action='store_true')\n"
    )
    repo = build_tree(tmp_path / "r", files)
    filled = infer_slots(repo, "m", "template")
    messages = {t.slot: t.message for t in filled.todos}
    assert "type=bool" in messages["infer_use_gpu"]
    assert "switch" in messages["mkldnn"]
    assert filled.slots["benchmark"] == ("null", "null")  # optional: left out rather than broken


def test_required_flags_nobody_passes_are_todos(tmp_path: Path) -> None:
    files = dict(DEMO_FILES)
    files["export_model.py"] = (
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--pretrained')\n"
        "p.add_argument('--save_inference_dir')\np.add_argument('--arch', required=True)\n"
    )
    repo = build_tree(tmp_path / "r", files)
    filled = infer_slots(repo, "m", "template")
    assert any("--arch" in t.message for t in filled.todos)


def test_sets_override_and_keep_gpu_lists_aligned(demo_repo: Path) -> None:
    filled = infer_slots(demo_repo, "lenet_digits", "template", [("gpu_list", "0|-1"), ("epoch.key", "--ep")])
    assert filled.slots["gpu_list"] == ("gpu_list", "0|-1")
    assert filled.slots["train_use_gpu"] == ("--use_gpu", "True|False")
    assert filled.slots["epoch"][0] == "--ep"
    with pytest.raises(UserError, match="unknown slot"):
        infer_slots(demo_repo, "lenet_digits", "template", [("nope", "1")])


def test_compact_dialect_embeds_fixed_arguments(tmp_path: Path) -> None:
    files = dict(DEMO_FILES)
    files["eval.py"] = files["eval.py"].replace('default="./lite_data"', 'default="/data"')
    repo = build_tree(tmp_path / "r", files)
    filled = infer_slots(repo, "m", "compact")
    assert filled.slots["eval"] == ("eval", "eval.py --data_dir=./lite_data --use_gpu=False")
    assert filled.slots["infer_model"][0] == "train_model"
    assert filled.slots["model_dir"][1].endswith("/inference/")


def test_detection_prefers_paddle_inference_scripts(tmp_path: Path) -> None:
    repo = build_tree(
        tmp_path / "r",
        {
            "tools/train.py": "",
            "tools/infer.py": "# dygraph predictor\n",
            "deploy/python/infer.py": "from paddle.inference import create_predictor\n",
            "tools/export_model.py": "",
        },
    )
    scripts = find_scripts(repo)
    assert scripts["train"] == "tools/train.py"
    assert scripts["infer"] == "deploy/python/infer.py"
    assert scripts["export"] == "tools/export_model.py"


def test_lite_tar_members_are_listed_without_extracting(tmp_path: Path) -> None:
    import tarfile

    src = build_tree(tmp_path / "src", {"lite_data/images/a.jpg": "x", "lite_data/train_list.txt": "a"})
    repo = tmp_path / "r"
    repo.mkdir()
    with tarfile.open(repo / "lite_data.tar", "w") as tar:
        tar.add(src / "lite_data", arcname="lite_data")
    lite = find_lite_data(repo)
    assert lite is not None and lite.dir == "lite_data" and lite.archive == "lite_data.tar"
    assert lite.images == ("lite_data/images/a.jpg",) and lite.archive_has_top_dir
    assert not (repo / "lite_data").exists()


def test_checkpoint_names_skip_per_epoch_fstrings(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        "import os\nfor e in range(3):\n    save(os.path.join(d, f'epoch_{e}.pdparams'))\n"
        "save(os.path.join(d, 'best.pdparams'))\nsave(os.path.join(d, 'latest.pdparams'))\n"
    )
    assert saved_checkpoint_names(script) == ("latest.pdparams", "best.pdparams")
    # a fixed file name after a formatted folder is stable; a formatted name is not
    script.write_text(
        "save(f'{d}/best_model.pdparams')\nsave(f'{d}/{e}.pdparams')\nsave(f'{d}/e{e}.pdparams')\n"
    )
    assert saved_checkpoint_names(script) == ("best_model.pdparams",)


def test_image_default_inside_the_lite_data_is_kept(tmp_path: Path) -> None:
    files = dict(DEMO_FILES)
    files["infer.py"] = files["infer.py"].replace(
        'p.add_argument("--img_path", default=None)',
        'p.add_argument("--img_path", default="./lite_data/images/")',
    )
    repo = build_tree(tmp_path / "r", files)
    filled = infer_slots(repo, "m", "template")
    assert filled.slots["image"] == ("--img_path", "./lite_data/images/")
    assert filled.slots["train_infer_img_dir"] == ("train_infer_img_dir", "./lite_data/images/")


def test_set_values_with_a_colon_are_refused(demo_repo: Path) -> None:
    with pytest.raises(UserError, match="':'"):
        infer_slots(demo_repo, "lenet_digits", "template", [("infer_model", "https://x/y.pdparams")])


def test_subcommand_scripts_run_their_train_command(tmp_path: Path) -> None:
    files = dict(DEMO_FILES)
    files["train.py"] = (
        "import argparse\np = argparse.ArgumentParser()\nsub = p.add_subparsers()\n"
        "ev = sub.add_parser('eval')\nev.add_argument('--weights')\n"
        "tr = sub.add_parser('train')\ntr.add_argument('--epochs', type=int, default=3)\n"
    )
    repo = build_tree(tmp_path / "r", files)
    assert infer_slots(repo, "m", "template").slots["norm_train"] == ("norm_train", "train.py train")


def test_eval_weights_flag_must_match_the_pretrain_key(tmp_path: Path) -> None:
    files = dict(DEMO_FILES)
    files["eval.py"] = (
        "import argparse\np = argparse.ArgumentParser()\n"
        "p.add_argument('--weights', required=True)\np.add_argument('--use_gpu', default='False')\n"
    )
    repo = build_tree(tmp_path / "r", files)
    filled = infer_slots(repo, "m", "template")
    assert filled.slots["pretrain"] == ("--pretrained", "null")
    messages = [t.message for t in filled.todos]
    assert any("eval receives the weights as --pretrained" in m for m in messages)
    assert any("--weights" in m and "not passed" in m for m in messages)  # required, and nobody passes it


def test_pretrain_prefers_the_most_conventional_shared_flag(tmp_path: Path) -> None:
    files = dict(DEMO_FILES)
    files["train.py"] = files["train.py"].replace(
        'p.add_argument("--pretrained", default=None)',
        'p.add_argument("--resume", default=None)\n    p.add_argument("--pretrained", default=None)',
    )
    files["eval.py"] = files["eval.py"] + 'p.add_argument("--resume")\n'
    repo = build_tree(tmp_path / "r", files)
    assert infer_slots(repo, "m", "template").slots["pretrain"][0] == "--pretrained"


def test_precision_values_respect_the_flags_choices(tmp_path: Path) -> None:
    files = dict(DEMO_FILES)
    files["infer.py"] = files["infer.py"].replace(
        'p.add_argument("--precision", default="fp32")',
        'p.add_argument("--run_mode", default="paddle", choices=["paddle", "trt_fp32", "trt_fp16"])',
    )
    repo = build_tree(tmp_path / "r", files)
    assert infer_slots(repo, "m", "template").slots["precision"] == ("--run_mode", "paddle")


def test_required_data_flag_without_lite_data_is_a_todo(tmp_path: Path) -> None:
    files = {k: v for k, v in DEMO_FILES.items() if not k.startswith("lite_data/")}
    files["train.py"] = files["train.py"].replace(
        'p.add_argument("--data_dir", default="./lite_data")', 'p.add_argument("--data_dir", required=True)'
    )
    repo = build_tree(tmp_path / "r", files)
    filled = infer_slots(repo, "m", "template")
    assert any("--data_dir" in t.message for t in filled.todos)


def test_paths_the_scripts_would_split_become_todos(tmp_path: Path) -> None:
    files = {k: v for k, v in DEMO_FILES.items() if not k.startswith("lite_data/images")}
    files["lite_data/my images/0.png"] = "x"
    repo = build_tree(tmp_path / "r", files)
    filled = infer_slots(repo, "m", "template")
    assert filled.slots["image"] == ("--img_path", "null")
    assert any(t.slot == "image" and "white space" in t.message for t in filled.todos)


def test_set_model_name_cannot_escape(demo_repo: Path) -> None:
    with pytest.raises(UserError, match="invalid model name"):
        infer_slots(demo_repo, "m", "template", [("model_name", "../../etc")])
