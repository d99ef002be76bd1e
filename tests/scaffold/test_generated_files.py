"""What `tipc init` writes, read back with the project's own tools: the real config linter, the canonical
script hashes of `basic.tipc.scripts_unchanged`, and the tipc.yaml settings schema.

Repos: the bundled demo (when present) and synthetic ones with different argparse styles.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from textwrap import dedent

import pytest

from tests.scaffold.scaffold_fixtures import DEMO_FILES, STR2BOOL, build_tree
from tipc.config.known_scripts import load_template, script_hash, templates_dir
from tipc.core.findings import Finding, Level
from tipc.judge.checks.settings import parse_settings
from tipc.judge.rules.templates import check_scripts
from tipc.planning.lint import lint_paths
from tipc.scaffold import infer_slots, render_test_tipc

DEMO = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
DIALECTS = ("template", "compact")
CONFIG = "configs/{model}/train_infer_python.txt"

# tools/ layout, dashed flags, a device flag with choices, an ArgumentParser built in a helper function.
DASHED_FILES: dict[str, str] = {
    "tools/train.py": """
        import argparse

        def get_args_parser(add_help=True):
            parser = argparse.ArgumentParser(description="train", add_help=add_help)
            parser.add_argument("--device", default="gpu", choices=["cpu", "gpu"])
            parser.add_argument("--epochs", default=90, type=int)
            parser.add_argument("--batch-size", default=128, type=int)
            parser.add_argument("--data-path", default="/data/imagenet")
            parser.add_argument("--output-dir", default="./output")
            parser.add_argument("--pretrained", default=None)
            return parser

        args = get_args_parser().parse_args()
        paddle.save(state, os.path.join(args.output_dir, "latest.pdparams"))
        """,
    "tools/eval.py": """
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--device", default="gpu", choices=["cpu", "gpu"])
        parser.add_argument("--pretrained", required=True)
        parser.add_argument("--data-path", default="/data/imagenet")
        """,
    "tools/export_model.py": """
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument("--pretrained")
        parser.add_argument("--save-inference-dir", default="./inference")
        """,
    "deploy/inference_python/infer.py": """
        import argparse
        from paddle import inference
        parser = argparse.ArgumentParser()
        parser.add_argument("--model-dir", required=True)
        parser.add_argument("--img-path", default="./images/demo.jpg")
        parser.add_argument("--use-gpu", default=False, type=str2bool)
        parser.add_argument("--batch-size", default=1, type=int)
        parser.add_argument("--benchmark", default=False, type=str2bool)
        """,
    "lite_data/train/0.jpg": "x",
    "lite_data/val/1.jpg": "x",
    "pretrain_models/model.pdparams": "w",
}
DASHED_FILES = {k: (STR2BOOL + dedent(v) if k.endswith("infer.py") else v) for k, v in DASHED_FILES.items()}

# Argument groups, a parser subclass, a switch and type=bool flags (which TIPC cannot pass as False),
# different synonyms (--epoch_num, --save_dir, --model_path, --infer_imgs).
GROUPED_FILES: dict[str, str] = {
    "train.py": """
        from argparse import ArgumentParser

        class Parser(ArgumentParser):
            def __init__(self):
                super().__init__()
                group = self.add_argument_group("train")
                group.add_argument("--epoch_num", type=int, default=20)
                group.add_argument("--bs", type=int, default=64)
                group.add_argument("--save_dir", default="output")
                group.add_argument("--use_gpu", action="store_true")
                group.add_argument("--dataset_root", default="./lite_data")
                group.add_argument("--init_model", default="")

        args = Parser().parse_args()
        paddle.save(model.state_dict(), f"{args.save_dir}/best_model.pdparams")
        """,
    "val.py": """
        from argparse import ArgumentParser
        p = ArgumentParser()
        p.add_argument("--init_model", required=True)
        p.add_argument("--dataset_root", default="./lite_data")
        """,
    "export.py": """
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("--model_path", required=True)
        p.add_argument("--save_dir", default="./inference_model")
        """,
    "deploy/python/infer.py": """
        import argparse
        import paddle.inference as paddle_infer
        p = argparse.ArgumentParser()
        p.add_argument("--model_dir", required=True)
        p.add_argument("--infer_imgs", default="./lite_data/infer")
        p.add_argument("--use_gpu", type=bool, default=False)
        p.add_argument("--enable_mkldnn", type=bool, default=False)
        p.add_argument("--cpu_threads", type=int, default=1)
        p.add_argument("--run_mode", default="paddle", choices=["paddle", "trt_fp32", "trt_fp16"])
        """,
    "lite_data/infer/a.png": "x",
    "lite_data/train_list.txt": "a.png 0\n",
    "weights/best.pdparams": "w",
}

SYNTHETIC = {"demo_like": DEMO_FILES, "dashed_tools": DASHED_FILES, "grouped_subclass": GROUPED_FILES}


def _demo_copy(tmp_path: Path) -> Path:
    if not (DEMO / "train.py").is_file():
        pytest.skip("examples/lenet_digits is not in this checkout")
    dest = tmp_path / "lenet_digits"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("test_tipc", "output", "__pycache__"))
    return dest


def _generate(repo: Path, model: str, dialect: str) -> dict[str, str]:
    files = render_test_tipc(infer_slots(repo, model, dialect), repo)
    for rel, text in files.items():
        path = repo / "test_tipc" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return files


def _problems(findings: list[Finding]) -> list[str]:
    return [f.format() for f in findings if f.level in (Level.ERROR, Level.WARNING)]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_demo_config_lints_clean(tmp_path: Path, dialect: str) -> None:
    repo = _demo_copy(tmp_path)
    _generate(repo, "lenet_digits", dialect)
    config = repo / "test_tipc" / CONFIG.format(model="lenet_digits")
    assert _problems(lint_paths([config], dialect=dialect)) == []
    # Read the way `tipc lint` / `tipc check` read it without --dialect, too (the detected profile).
    assert _problems(lint_paths([repo])) == []
    if dialect == "template":
        # Nothing at all, not even an info note.
        assert [f.format() for f in lint_paths([config], dialect=dialect) if f.code != "TIPC000"] == []


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("name", sorted(SYNTHETIC))
def test_synthetic_configs_lint_clean(tmp_path: Path, name: str, dialect: str) -> None:
    repo = build_tree(tmp_path / name, SYNTHETIC[name])
    _generate(repo, "m", dialect)
    config = repo / "test_tipc" / CONFIG.format(model="m")
    assert config.read_text().count("\n") == (51 if dialect == "template" else 32)
    assert _problems(lint_paths([config], dialect=dialect)) == []
    assert _problems(lint_paths([repo])) == []


def test_synthetic_repos_are_read_in_their_own_style(tmp_path: Path) -> None:
    dashed = infer_slots(build_tree(tmp_path / "d", DASHED_FILES), "m", "template").slots
    assert dashed["norm_train"] == ("norm_train", "tools/train.py")
    assert dashed["train_use_gpu"] == ("--device", "cpu")
    assert dashed["train_batch"][0] == "--batch-size" and dashed["train_param1"] == (
        "--data-path",
        "./lite_data",
    )
    assert dashed["inference"] == ("inference", "deploy/inference_python/infer.py")
    assert dashed["model_dir"][0] == "--model-dir" and dashed["image"][0] == "--img-path"
    grouped = infer_slots(build_tree(tmp_path / "g", GROUPED_FILES), "m", "template")
    s = grouped.slots
    assert s["epoch"][0] == "--epoch_num" and s["train_batch"][0] == "--bs"
    assert s["train_use_gpu"] == ("null", "null")  # a store_true switch cannot take `=False`
    assert s["pretrain"] == ("--init_model", "null") and s["train_model_name"][1] == "best_model.pdparams"
    assert s["precision"] == ("--run_mode", "paddle") and s["image"] == ("--infer_imgs", "./lite_data/infer")
    # type=bool flags read 'False' as True: the generated folder says so instead of hiding it
    assert any(t.slot == "infer_use_gpu" and "type=bool" in t.message for t in grouped.todos)


# ---- canonical script hashes ---------------------------------------------------------------------------

HASHED = ("test_train_inference_python.sh", "common_func.sh")


@pytest.mark.parametrize("dialect", DIALECTS)
def test_generated_scripts_match_the_shipped_canonical_hashes(tmp_path: Path, dialect: str) -> None:
    template = load_template(templates_dir() / "train_infer_python.yaml")
    digests = set()
    for name, files in SYNTHETIC.items():
        repo = build_tree(tmp_path / name, files)
        rendered = _generate(repo, f"model_{name}", dialect)
        for script in HASHED:
            known = {k.sha256 for k in template.files[f"test_tipc/{script}"]}
            digest = script_hash(rendered[script])
            assert digest in known, (
                f"{script} ({dialect}) changed: record it with python -m tipc.judge.rules.hash_script "
                f"--add train_infer_python <generated test_tipc/{script}>"
            )
            digests.add((script, digest))
        outcome = check_scripts(repo, "train_infer_python")
        assert outcome.verdict.value == "PASS", outcome.summary
    # Regenerating for another repo or model name gives the same scripts: one hash per script and dialect.
    assert len(digests) == len(HASHED)


# ---- tipc.yaml -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dialect", DIALECTS)
def test_tipc_yaml_validates_against_the_settings_schema(tmp_path: Path, dialect: str) -> None:
    repo = _demo_copy(tmp_path)
    files = _generate(repo, "lenet_digits", dialect)
    settings = parse_settings(files["tipc.yaml"], "test_tipc/tipc.yaml")
    assert settings.agreement.inputs == "lite_data/infer_inputs.npy"
    assert (repo / settings.agreement.inputs).is_file()
    # The compact script's train-mode inference passes no image, so the predict-vs-infer check needs them.
    if dialect == "compact":
        assert settings.agreement.images == ("lite_data/infer/",)
    else:
        assert settings.agreement.images == ()


def test_no_tipc_yaml_without_anything_to_say(tmp_path: Path) -> None:
    repo = build_tree(tmp_path / "r", {k: v for k, v in DEMO_FILES.items() if k != "predict.py"})
    assert "tipc.yaml" not in _generate(repo, "m", "compact")


# ---- docs follow the planner ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "output", "status"),
    [
        ("template", "test_tipc/output/", "Run successfully with command - python tools/train.py"),
        (
            "compact",
            "test_tipc/output/m/lite_train_lite_infer/",
            "Run successfully with command - m - python",
        ),
    ],
)
def test_docs_show_the_planned_commands_output_folder_and_status_lines(
    tmp_path: Path, dialect: str, output: str, status: str
) -> None:
    from tipc.planning.planner import plan

    repo = build_tree(tmp_path / "r", DASHED_FILES)
    files = _generate(repo, "m", dialect)
    docs = files["docs/test_train_inference_python.md"]
    config = repo / "test_tipc" / CONFIG.format(model="m")
    planned = plan(config, "lite_train_lite_infer", repo=repo, dialect=dialect)
    for step in planned.steps:
        assert " ".join(step.argv) in docs
    assert f"\n{output}\n" in docs and status in docs
    assert ("--dialect template" in files["README.md"]) == (dialect == "template")
