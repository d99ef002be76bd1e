"""One way to name things (issue 28): --mode is one list in every verb (serving_infer included) with a "did
you mean"; `tipc plan REPO` as every verb takes a repo; the top-level help lists every exit code; `tipc init`
names the model after the folder; `tipc serve` names it after the model, not the export folder."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers.demo import DEMO, copy_demo
from tipc.cli import build_parser, help_text, main
from tipc.core.steps import ALL_MODES
from tipc.serve.naming import default_name, generic

# Each verb with --mode, and what it needs besides (parsing stops at the mode: nothing runs).
VERBS_WITH_MODE = {
    "plan": ["CFG"],
    "run": ["REPO"],
    "check": ["REPO"],
    "baseline": ["record", "REPO"],
    "matrix": ["REPO", "--paddle", "3.3.1"],
    "review": ["REPO", "--out", "OUT"],
    "history": ["REPO"],
}


@pytest.mark.parametrize("verb", sorted(VERBS_WITH_MODE))
def test_every_verb_takes_the_same_modes_and_suggests_the_closest(
    verb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    words = [verb, *VERBS_WITH_MODE[verb]]
    parser = build_parser(only=verb)
    for mode in ALL_MODES:
        assert parser.parse_args([*words, "--mode", mode]).mode == mode
    assert main([*words, "--mode", "lite_train_lite_infr"]) == 2
    err = capsys.readouterr().err
    assert "unknown mode 'lite_train_lite_infr'; did you mean 'lite_train_lite_infer'?" in err
    assert "serving_infer" in err  # the one list, serving included
    assert main([*words, "--mode", "xyz"]) == 2
    assert "did you mean" not in capsys.readouterr().err


def test_serving_infer_on_a_train_config_says_which_config_it_needs(
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = DEMO / "test_tipc" / "configs" / "lenet_digits" / "train_infer_python.txt"
    assert main(["plan", str(config), "--mode", "serving_infer"]) == 2
    assert "give the serving config" in capsys.readouterr().err


def test_plan_takes_a_repo_as_every_verb_does(capsys: pytest.CaptureFixture[str]) -> None:
    config = DEMO / "test_tipc" / "configs" / "lenet_digits" / "train_infer_python.txt"
    assert main(["plan", str(config), "--format", "json"]) == 0
    by_config = capsys.readouterr().out
    assert main(["plan", str(DEMO), "--format", "json"]) == 0
    assert capsys.readouterr().out == by_config
    assert main(["plan", str(DEMO / "test_tipc")]) == 2  # a folder that is no repo: said, exit 2
    assert "expected a config file or a repo folder" in capsys.readouterr().err


def test_the_top_level_help_lists_every_exit_code() -> None:
    text = help_text()
    for said in ("0 ok", "1 a check failed", "2 usage", "3 internal error or a missing part", "129 hung up"):
        assert said in text
    assert "130 interrupted" in text and "143 terminated" in text
    assert "python -m tipc" in text  # the way round iproute2's /usr/sbin/tipc


def test_init_without_model_names_it_after_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = copy_demo(tmp_path / "my digits-v2")
    shutil.rmtree(repo / "test_tipc")
    assert main(["init", str(repo), "--dry-run"]) == 0
    captured = capsys.readouterr()
    assert "tipc init: model 'my_digits-v2', the repo folder's name" in captured.err
    assert "would create test_tipc/configs/my_digits-v2/train_infer_python.txt" in captured.out
    assert "model_name:my_digits-v2" in captured.out


def test_serve_names_the_model_not_its_export_folder(tmp_path: Path) -> None:
    for name in ("norm_train_gpus_-1_autocast_null", "inference", "output", "lite_train_lite_infer"):
        assert generic(name), name
    for name in ("resnet50", "lenet_digits", "NAFNet-pd"):
        assert not generic(name), name
    # inside a repo: the model of its configs
    repo = copy_demo(tmp_path / "repo")
    exported = repo / "test_tipc" / "output" / "norm_train_gpus_-1_autocast_null"
    exported.mkdir(parents=True)
    assert default_name(exported) == "lenet_digits"
    # two models: the one the path names
    other = repo / "test_tipc" / "configs" / "mobilenet" / "train_infer_python.txt"
    other.parent.mkdir()
    other.write_text(
        "===========================train_params===========================\nmodel_name:mobilenet\n"
    )
    under = repo / "test_tipc" / "output" / "mobilenet" / "lite_train_lite_infer" / "norm_train_gpus_0"
    under.mkdir(parents=True)
    assert default_name(under) == "mobilenet"
    # two models and a path that names neither: the repo's folder, not test_tipc
    assert default_name(exported) == "repo"
    # no repo around it: the nearest folder not named after the export
    loose = tmp_path / "resnet50" / "output" / "inference"
    loose.mkdir(parents=True)
    assert default_name(loose) == "resnet50"
    assert default_name(tmp_path / "resnet50") == "resnet50"


def test_the_serve_verb_uses_that_name_unless_given_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("uvicorn")  # the serve extra; without it the verb exits 3 before naming anything
    import tipc.serve.server as server

    exported = tmp_path / "resnet50" / "norm_train_gpus_-1_autocast_null"
    exported.mkdir(parents=True)
    for name in ("inference.json", "inference.pdiparams"):
        (exported / name).write_text("{}")
    names: list[str] = []

    def serve(_model_dir: Path, *, name: str, **_options: object) -> int:  # the seam: no server started
        names.append(name)
        return 0

    monkeypatch.setattr(server, "serve", serve)
    assert main(["serve", str(exported)]) == 0
    assert main(["serve", str(exported), "--name", "mine"]) == 0
    assert names == ["resnet50", "mine"]
