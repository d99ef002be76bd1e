"""Where scripts write and read weights, from their paddle.save / paddle.load targets."""

from __future__ import annotations

from pathlib import Path

from tipc.scaffold.dataflow import literal_paths_under, model_dir_refs, weight_refs


def _script(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.py"
    path.write_text(text)
    return path


def test_save_into_a_folder_argument_with_a_stable_name(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        "import os, paddle\n"
        "def main(args, model):\n"
        "    paddle.save(model.state_dict(), os.path.join(args.output_dir, 'model_{}.pdparams'.format(1)))\n"
        "    paddle.save(model.state_dict(), os.path.join(args.output_dir, 'latest.pdparams'))\n",
    )
    refs = weight_refs(script, {"output_dir", "epochs"}, "save")
    assert (refs[0].dest, refs[0].style, refs[0].name, refs[0].line) == (
        "output_dir",
        "dir",
        "latest.pdparams",
        4,
    )


def test_helper_parameter_named_after_the_flag_and_sub_folder(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        "import os, paddle\n"
        "def run(kind, model_dir='logs'):\n"
        "    paddle.save({}, os.path.join(str(model_dir), kind, 'final.pdparams'))\n",
    )
    refs = weight_refs(script, {"model_dir", "kind_flag"}, "save")
    assert [(r.dest, r.style, r.name) for r in refs] == [("model_dir", "dir", "final.pdparams")]


def test_load_through_a_path_expression_and_a_direct_file_flag(tmp_path: Path) -> None:
    indirect = _script(
        tmp_path,
        "import paddle\n"
        "def ev(name):\n    return paddle.load(str(name))\n"
        "name = '%s/%s/final.pdparams' % (args.model_dir, t)\n",
    )
    refs = weight_refs(indirect, {"model_dir"}, "load")
    assert [(r.dest, r.style) for r in refs] == [("model_dir", "dir")]
    direct = tmp_path / "d.py"
    direct.write_text("import paddle\nstate = paddle.load(args.pretrained)\n")
    assert [(r.dest, r.style) for r in weight_refs(direct, {"pretrained"}, "load")] == [
        ("pretrained", "file")
    ]


def test_resume_and_unrelated_paths_are_not_weights(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        "import os, paddle\n"
        "paddle.load(os.path.join(args.resume, '.pdparams'))\n"
        "paddle.save(x, args.log_dir + '/loss.txt')\n",
    )
    assert weight_refs(script, {"resume", "log_dir"}, "load") == []
    assert weight_refs(script, {"resume", "log_dir"}, "save") == []
    assert weight_refs(tmp_path / "missing.py", {"x"}, "save") == []


def test_folder_and_name_flags_joined(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        "import os, paddle\nstates = paddle.load(os.path.join(args.output_dir, args.ckpt_name))\n",
    )
    refs = weight_refs(script, {"output_dir", "ckpt_name"}, "load")
    assert [(r.dest, r.style, r.name) for r in refs] == [("output_dir", "dir", None)]


def test_model_dir_from_the_exported_file_names(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        "import os\nfrom paddle import inference\n"
        "cfg = inference.Config(\n"
        "    os.path.join(args.out, 'inference.pdmodel'), args.out + '/inference.pdiparams')\n",
    )
    assert {r.dest for r in model_dir_refs(script, {"out", "img"})} == {"out"}


def test_literal_paths_under_a_default_folder(tmp_path: Path) -> None:
    script = _script(
        tmp_path, "x = 'logs/%s/params.crf'\ny = './logs/a'\nz = 'logsx/b'\nw = 'other/logs/c'\n"
    )
    assert literal_paths_under(script, "logs") == [1, 2]
    assert literal_paths_under(script, ".") == []
