"""Slots filled from evidence beyond argparse: doc command lines, paddle.save/load targets, lite archives.

The fixture trees mimic the shapes seen in public competition repos (a decoy `--output` flag, weights
written under `<model_dir>/<kind>/final.pdparams`, an eval run as `train.py --test-only`), written afresh.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.trees import tar_bytes
from tests.scaffold.scaffold_fixtures import build_tree
from tipc.scaffold import infer_slots, render_test_tipc

_PARSER = "import argparse, os, paddle\np = argparse.ArgumentParser()\n"
_INFER = (
    _PARSER + "from paddle import inference\n"
    "p.add_argument('--model-dir')\np.add_argument('--use-gpu', default=False)\n"
    "p.add_argument('--batch-size', type=int, default=1)\np.add_argument('--img-path')\n"
    "p.add_argument('--benchmark', default=False)\n"
)
ANOMALY = {
    "tools/train.py": _PARSER + "p.add_argument('--epochs', type=int, default=256)\n"
    "p.add_argument('--model_dir', default='logs')\np.add_argument('--data_dir', default='Data')\n"
    "p.add_argument('--type', default='all')\np.add_argument('--cuda', default=True)\n"
    "p.add_argument('--batch_size', type=int, default=32)\np.add_argument('--output', default=None)\n"
    "args = p.parse_args()\n"
    "def run(kind, model_dir):\n"
    "    paddle.save({}, os.path.join(str(model_dir), kind, 'final.pdparams'))\n"
    "run('bottle', model_dir=args.model_dir)\n",
    "tools/eval.py": _PARSER + "p.add_argument('--model_dir', default='logs')\n"
    "p.add_argument('--data_dir', default='Data')\np.add_argument('--type', default='all')\n"
    "p.add_argument('--cuda', default=False)\nargs = p.parse_args()\n"
    "name = '%s/%s/final.pdparams' % (args.model_dir, 'bottle')\nstate = paddle.load(name)\n",
    "deploy/export_model.py": _PARSER + "p.add_argument('--model_path', default='logs')\n"
    "p.add_argument('--save-inference-dir', default='out')\nargs = p.parse_args()\n"
    "paddle.load('%s/%s/final.pdparams' % (args.model_path, 'bottle'))\n",
    "deploy/infer.py": _INFER,
    "README.md": "## lite\n```\n"
    "python tools/train.py --data_dir lite_data --type lite --epochs 3 --cuda False\n"
    "python tools/eval.py --data_dir lite_data --type lite\n```\n",
    "lite_data/bottle/train/good/000.png": "",
}


def test_weights_follow_paddle_save_and_doc_lite_commands(tmp_path: Path) -> None:
    repo = build_tree(tmp_path / "anomaly", ANOMALY)
    filled = infer_slots(repo, "m", None)
    s = filled.slots
    assert filled.dialect == "compact"  # deploy/infer.py has no MKLDNN flag
    assert s["save_model"] == ("--model_dir", "./output/")  # not the decoy --output
    assert s["pretrain"][0] == "--model_dir"  # eval reads the folder train wrote
    assert s["export_weight"][0] == "--model_path"
    assert s["train_model_name"] == ("train_model_name", "")
    assert s["epoch"][1].startswith("lite_train_lite_infer=3|")  # the README's lite run
    assert s["norm_train"][1] == "tools/train.py --data_dir=./lite_data --cuda=False --type=lite"
    assert s["eval"][1] == "tools/eval.py --data_dir=./lite_data --cuda=False --type=lite"
    notes = "\n".join(filled.notes)
    assert "tools/train.py:12" in notes and "README.md:3" in notes and "tools/eval.py:9" in notes
    files = render_test_tipc(filled, repo)
    config = files["configs/m/train_infer_python.txt"]
    assert "--output:" not in config
    readme = files["README.md"]
    assert "README.md:3" in readme  # each inferred slot says where it came from


def _tar(files: dict[str, bytes]) -> bytes:
    return tar_bytes(files)


def test_eval_by_switch_lite_archive_one_folder_down_and_no_null_tokens(tmp_path: Path) -> None:
    repo = build_tree(
        tmp_path / "tutorial",
        {
            "train.py": _PARSER + "p.add_argument('--data-path', default='./data')\n"
            "p.add_argument('--device', default='gpu')\n"
            "p.add_argument('-b', '--batch-size', type=int, default=256)\n"
            "p.add_argument('--epochs', type=int, default=90)\np.add_argument('--output-dir', default='.')\n"
            "p.add_argument('--pretrained', default=None)\n"
            "p.add_argument('--test-only', dest='test_only', action='store_true')\nargs = p.parse_args()\n"
            "paddle.save({}, os.path.join(args.output_dir, 'latest.pdparams'))\n",
            "tools/export_model.py": _PARSER + "p.add_argument('--pretrained')\n"
            "p.add_argument('--save-inference-dir')\n",
            "deploy/inference_python/infer.py": _INFER,
            "README.md": "```\npython train.py --test-only --data-path=/data --pretrained=./w.pdparams\n```",
        },
    )
    (repo / "test_images").mkdir()
    members = {f"lite_data/{split}/a/{i}.jpg": b"x" for split in ("train", "val") for i in range(16)}
    (repo / "test_images" / "lite_data.tar").write_bytes(_tar(members))
    filled = infer_slots(repo, "m", None)
    s = filled.slots
    assert s["eval"][1] == "train.py --test-only --data-path=./lite_data --device=cpu"
    assert s["train_model_name"] == ("train_model_name", "latest.pdparams")
    assert s["train_batch"][1].startswith("lite_train_lite_infer=4|")  # a quarter of 16 training images
    assert s["data_path"] == ("--data-path", "./lite_data")
    files = render_test_tipc(filled, repo)
    assert "test_images/lite_data.tar" in files["prepare.sh"]
    from tipc.scaffold import plan_modes

    plans = plan_modes(
        files["configs/m/train_infer_python.txt"], "configs/m/train_infer_python.txt", repo, "compact"
    )
    command_lists = [p["commands"] for p in plans]
    assert all(isinstance(cs, list) for cs in command_lists)
    commands = [str(c) for cs in command_lists if isinstance(cs, list) for c in cs]
    assert commands and not any("null=null" in c or " null " in c for c in commands)


def test_explicit_template_without_mkldnn_flag_is_a_todo_not_a_token(tmp_path: Path) -> None:
    repo = build_tree(tmp_path / "anomaly", ANOMALY)
    filled = infer_slots(repo, "m", "template")
    assert filled.slots["mkldnn"] == ("null", "null")
    todo = next(t for t in filled.todos if t.slot == "mkldnn")
    assert "--dialect compact" in todo.message


def test_eval_by_mode_value_and_sample_data_named_in_the_docs(tmp_path: Path) -> None:
    # One script trains and evaluates (`--mode eval`); the small data has no "lite" in its name.
    repo = build_tree(
        tmp_path / "modes",
        {
            "main.py": _PARSER + "def train(cls):\n"
            "    path = os.path.join(args.output_dir, 'net_' + cls + '.pdparams')\n"
            "    paddle.save({}, path)\n"
            "def evaluate(cls):\n"
            "    state = paddle.load(os.path.join(args.output_dir, 'net_' + cls + '.pdparams'))\n"
            "p.add_argument('--data_dir', default='full')\np.add_argument('--mode', default='train')\n"
            "p.add_argument('--output_dir', default='checkpoints')\n"
            "p.add_argument('--epochs', type=int, default=100)\np.add_argument('--device', default='gpu')\n"
            "args = p.parse_args()\n",
            "README.md": "```bash\npython main.py --mode eval\n```\n"
            "```bash\npython main.py --mode infer --data_dir sample_data --cls bottle\n```\n",
            "sample_data/bottle/test/good/000.png": "",
        },
    )
    filled = infer_slots(repo, "m", "template")
    s = filled.slots
    assert s["eval"] == ("eval", "main.py --mode=eval")
    assert s["train_param1"] == ("--data_dir", "./sample_data")
    assert s["eval_param1"] == ("--data_dir", "./sample_data")
    assert s["save_model"][0] == "--output_dir"
    assert s["pretrain"][0] == "--output_dir" and s["train_model_name"][1] == ""
    notes = "\n".join(filled.notes)
    assert "README.md:2" in notes and "README.md:5" in notes
    assert filled.lite is not None and filled.lite.images == ("sample_data/bottle/test/good/000.png",)


def test_a_data_set_named_in_the_docs_is_a_candidate_not_lite_data(tmp_path: Path) -> None:
    files = {f"data/full/{i}.png": "" for i in range(65)}
    files["train.py"] = _PARSER + "p.add_argument('--data_dir', default='data/full')\n"
    files["README.md"] = "```\npython train.py --data_dir data/full\n```\n"
    repo = build_tree(tmp_path / "big", files)
    filled = infer_slots(repo, "m", "template")
    assert filled.lite is None
    todo = next(t for t in filled.todos if t.slot == "train_param1")
    assert "no lite data" in todo.message
    assert todo.candidates == ("data/full/ (65 files, --data_dir at README.md:2)",)
    assert "(line 13)" in todo.format(13)
