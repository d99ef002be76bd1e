"""Rendered files: exact slot layouts (§2.1 / §3 of tipc-format.md), sandboxing, and safe writing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tipc.core.errors import UserError
from tipc.scaffold import infer_slots, render_test_tipc
from tipc.scaffold.render import check_model_name, plan_writes, safe_target, write_all

# Expected keys by 1-based line, written from the notes, independently of tipc.scaffold.slots.
# "*" = a key chosen from the repo's scripts (any text); "=" = a `====...====` header.
TEMPLATE_EXPECTED = {
    1: "=", 2: "model_name", 3: "python", 4: "gpu_list", 5: "*", 6: "*", 7: "*", 8: "*", 9: "*", 10: "*",
    11: "train_model_name", 12: "train_infer_img_dir", 13: "*", 14: "##", 15: "trainer", 16: "norm_train",
    17: "pact_train", 18: "fpgm_train", 19: "distill_train", 20: "*", 21: "*", 22: "##", 23: "=", 24: "eval",
    25: "*", 26: "##", 27: "=", 28: "*", 29: "*", 30: "norm_export", 31: "quant_export", 32: "fpgm_export",
    33: "distill_export", 34: "export1", 35: "export2", 36: "inference_dir", 37: "infer_model",
    38: "infer_export", 39: "infer_quant", 40: "inference", 41: "*", 42: "*", 43: "*", 44: "*", 45: "*",
    46: "*", 47: "*", 48: "*", 49: "*", 50: "*", 51: "*",
}  # fmt: skip
COMPACT_EXPECTED = {
    1: "=", 2: "model_name", 3: "python", 4: "gpu_list", 5: "*", 6: "*", 7: "*", 8: "*", 9: "*",
    10: "train_model_name", 11: "*", 12: "##", 13: "trainer", 14: "norm_train", 15: "##", 16: "=", 17: "eval",
    18: "##", 19: "=", 20: "*", 21: "*", 22: "norm_export", 23: "##", 24: "train_model", 25: "infer_export",
    26: "##", 27: "inference", 28: "*", 29: "*", 30: "*", 31: "*", 32: "*",
}  # fmt: skip
HEADERS = {"template": {1: "train_params", 23: "eval_params", 27: "infer_params"},
           "compact": {1: "train_params", 16: "eval_params", 19: "infer_params"}}  # fmt: skip


def read_positional(text: str) -> list[tuple[str, str]]:
    """A small local reader: one (key, value) per physical line, split at the first ':'."""
    assert "\r" not in text and text.endswith("\n")
    out = []
    for line in text[:-1].split("\n"):
        key, _, value = line.partition(":")
        out.append((key, value))
    return out


@pytest.mark.parametrize(
    ("dialect", "expected"), [("template", TEMPLATE_EXPECTED), ("compact", COMPACT_EXPECTED)]
)
def test_config_has_the_exact_slot_layout(demo_repo: Path, dialect: str, expected: dict[int, str]) -> None:
    filled = infer_slots(demo_repo, "lenet_digits", dialect)
    text = render_test_tipc(filled, demo_repo)["configs/lenet_digits/train_infer_python.txt"]
    lines = read_positional(text)
    assert len(lines) == len(expected)
    for number, (key, value) in enumerate(lines, 1):
        want = expected[number]
        assert key.strip() and key == key.strip(), f"line {number}: blank or padded key {key!r}"
        if want == "=":
            assert key.startswith("====") and HEADERS[dialect][number] in key and value == ""
        elif want == "##":
            assert key == "##"
        elif want != "*":
            assert key == want, f"line {number}: {key!r} != {want!r}"
        assert "#" not in value, f"line {number}: no comments inside a positional config"
    assert lines[1] == ("model_name", "lenet_digits")
    # the values the scripts read, on the lines they read them
    if dialect == "template":
        assert lines[6][0] == "--epochs" and lines[6][1].startswith("lite_train_lite_infer=")
        assert lines[39] == ("inference", "infer.py") and lines[40] == ("--use_gpu", "False")
        assert lines[46] == ("--model_dir", "")
    else:
        assert lines[5][0] == "--epochs" and lines[26] == ("inference", "infer.py")


def test_every_file_of_the_spec_layout_is_rendered(demo_repo: Path) -> None:
    files = render_test_tipc(infer_slots(demo_repo, "lenet_digits", "template"), demo_repo)
    assert set(files) == {
        "configs/lenet_digits/train_infer_python.txt",
        "test_train_inference_python.sh",
        "common_func.sh",
        "prepare.sh",
        "README.md",
        "docs/test_train_inference_python.md",
    }
    readme = files["README.md"]
    assert "| 算法论文" in readme and "| lenet_digits |" in readme
    for mode in ("lite_train_lite_infer", "lite_train_whole_infer", "whole_train_whole_infer", "whole_infer"):
        assert f"train_infer_python.txt {mode}" in files["docs/test_train_inference_python.md"]


def test_tipc_yaml_names_the_lite_input_batch_when_there_is_one(demo_repo: Path) -> None:
    import yaml

    (demo_repo / "lite_data/infer_inputs.npy").write_bytes(b"\x93NUMPY")
    files = render_test_tipc(infer_slots(demo_repo, "lenet_digits", "template"), demo_repo)
    assert yaml.safe_load(files["tipc.yaml"]) == {"agreement": {"inputs": "lite_data/infer_inputs.npy"}}


def test_todos_land_in_readme_and_docs_not_in_config(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "train.py").write_text("import argparse\n")
    filled = infer_slots(repo, "m", "template")
    files = render_test_tipc(filled, repo)
    assert filled.todos
    first = filled.todos[0].message
    assert first in files["README.md"] and first in files["docs/test_train_inference_python.md"]
    assert "TODO" not in files["configs/m/train_infer_python.txt"]


@pytest.mark.parametrize("bad", ["../../etc", "a/b", "/abs", "..", "", ".hidden", "a\nb", "x" * 200])
def test_model_names_that_could_escape_are_refused(bad: str) -> None:
    with pytest.raises(UserError):
        check_model_name(bad)


@pytest.mark.parametrize("rel", ["../x", "/etc/passwd", "a/../../x", "configs/../../x"])
def test_safe_target_refuses_escapes(tmp_path: Path, rel: str) -> None:
    with pytest.raises(UserError):
        safe_target(tmp_path / "test_tipc", rel)


def test_safe_target_refuses_symlinks_pointing_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    dest = tmp_path / "repo" / "test_tipc"
    dest.mkdir(parents=True)
    os.symlink(outside, dest / "configs")
    with pytest.raises(UserError, match="outside"):
        safe_target(dest, "configs/m/train_infer_python.txt")
    os.symlink(outside / "f.sh", dest / "prepare.sh")
    with pytest.raises(UserError, match="outside"):
        safe_target(dest, "prepare.sh")
    assert safe_target(dest, "README.md") == dest / "README.md"


def test_write_all_is_all_or_nothing(tmp_path: Path) -> None:
    dest = tmp_path / "repo" / "test_tipc"
    planned = plan_writes(dest, {"a.txt": "a\n", "sub/b.sh": "echo\n"})
    assert write_all(dest, planned, force=False) == ["a.txt", "sub/b.sh"]
    assert (dest / "a.txt").read_text() == "a\n"
    assert os.access(dest / "sub/b.sh", os.X_OK)
    # existing files: refused without force, nothing changed
    planned = plan_writes(dest, {"a.txt": "A\n", "new.txt": "n\n"})
    with pytest.raises(UserError, match=r"a\.txt"):
        write_all(dest, planned, force=False)
    assert (dest / "a.txt").read_text() == "a\n" and not (dest / "new.txt").exists()
    write_all(dest, planned, force=True)
    assert (dest / "a.txt").read_text() == "A\n"
    assert [p.name for p in (tmp_path / "repo").iterdir()] == ["test_tipc"]  # no staging left behind


def test_sandbox_blocks_unsafe_template_code(tmp_path: Path) -> None:
    from jinja2.exceptions import SecurityError

    from tipc.scaffold.render import _environment

    (tmp_path / "evil.j2").write_text("{{ ''.__class__.__mro__[1].__subclasses__() }}")
    env = _environment(tmp_path)
    with pytest.raises(SecurityError):
        env.get_template("evil.j2").render()


def test_every_rendered_file_ends_with_one_newline(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "train.py").write_text("import argparse\n")
    for dialect in ("template", "compact"):
        files = render_test_tipc(infer_slots(repo, "m", dialect), repo)
        for rel, text in files.items():
            assert text.endswith("\n") and not text.endswith("\n\n"), rel


def test_diff_marks_a_missing_final_newline() -> None:
    from tipc.scaffold.render import PlannedFile, diff_text

    text = diff_text(PlannedFile("c.txt", Path("c.txt"), "a\nb\n", "a\nb"), "c.txt")
    assert text.endswith("-b\n\\ No newline at end of file\n+b\n")
