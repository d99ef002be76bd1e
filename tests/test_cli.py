from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tipc.cli import VERBS, main


def test_help_lists_every_verb(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for verb in VERBS:
        assert verb in out


def test_no_verb_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2


def test_unknown_verb_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_cli_imports_no_paddle_or_heavy_modules() -> None:
    code = (
        "import sys, tipc.cli\n"
        "p = tipc.cli.build_parser()\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'paddle', 'onnxruntime', 'onnx', 'paddle2onnx', 'numpy', 'uvicorn', 'starlette'})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_a_verb_builds_only_its_own_arguments() -> None:
    # `tipc run` must not pay for the other verbs' parsers (`init` loads the scaffolder to list its slots)
    code = (
        "import sys, tipc.cli\n"
        "p = tipc.cli.build_parser(only='run')\n"
        "print(any(m.startswith('tipc.scaffold') for m in sys.modules))\n"
        "p.parse_args(['run', 'REPO', '--mode', 'whole_infer'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_each_verb_still_has_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    for verb, option in (("run", "--step-timeout"), ("init", "--model"), ("lint", "--format")):
        assert main([verb, "--help"]) == 0
        assert option in capsys.readouterr().out
    assert main(["--debug", "run", "/no/such/repo"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_set_values_that_look_like_options_are_joined() -> None:
    from tipc.cli import join_option_values

    assert join_option_values(["plan", "c.txt", "--set", "--use_gpu=False", "--set", "epoch=2"]) == [
        "plan",
        "c.txt",
        "--set=--use_gpu=False",
        "--set",
        "epoch=2",
    ]
    assert join_option_values(["run", "--", "--set", "-x"]) == ["run", "--", "--set", "-x"]
    assert join_option_values(["run", "--set"]) == ["run", "--set"]


@pytest.mark.parametrize("verb", ["lint", "plan", "run", "check"])
def test_an_over_long_file_name_exits_2(
    verb: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = str(tmp_path / ("a" * 300 + ".txt"))
    argv = {"run": ["run", "--dry-run", "--no-sandbox", name], "check": ["check", "--no-sandbox", name]}
    assert main(argv.get(verb, [verb, name])) == 2
    err = capsys.readouterr().err
    assert "File name too long" in err and "internal error" not in err, err


def test_non_ascii_output_to_an_ascii_stdout_is_replaced_not_exit_3(tmp_path: Path) -> None:
    demo = Path(__file__).resolve().parent.parent / "examples" / "lenet_digits"
    config = tmp_path / "test_tipc" / "configs" / "m" / "train_infer_python.txt"
    config.parent.mkdir(parents=True)
    text = (demo / "test_tipc/configs/lenet_digits/train_infer_python.txt").read_text(encoding="utf-8")
    config.write_text(text.replace("model_name:lenet_digits", "model_name:lénet_dïgits"), encoding="utf-8")
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "LC_ALL": "C"}
    env["PYTHONPATH"] = str(demo.parent.parent) + ":" + env.get("PYTHONPATH", "")
    for verb in ("plan", "lint"):
        done = subprocess.run(
            [sys.executable, "-m", "tipc", verb, str(config)], capture_output=True, env=env, timeout=60
        )
        assert done.returncode in (0, 1), done.stderr.decode(errors="replace")
    assert (
        b"l?net_d?gits"
        in subprocess.run(
            [sys.executable, "-m", "tipc", "plan", str(config)], capture_output=True, env=env, timeout=60
        ).stdout
    )


def test_help_and_version_answer_without_argparse_or_any_command() -> None:
    # `tipc --help` costs little more than starting Python (bench/cli_startup.py measures it)
    code = (
        "import sys\n"
        "before = set(sys.modules)  # what Python itself loaded (site, .pth files)\n"
        "from tipc.cli import main\n"
        "words = [['--help'], ['-h'], ['--version'], ['--debug', '--help'], []]\n"
        "codes = [main(w) for w in words]\n"
        "heavy = ('argparse', 'typing', 're', 'dataclasses')\n"
        "layers = ('tipc.commands', 'tipc.config', 'tipc.planning')\n"
        "loaded = sorted(m for m in set(sys.modules) - before if m in heavy or m.startswith(layers))\n"
        "sys.stderr.write(f'{codes} {loaded}')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stderr == "[0, 0, 0, 0, 2] []"
    assert "tipc 0." in done.stdout


def test_the_help_lists_each_verb_with_its_line_and_the_global_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tipc.cli import GLOBAL_OPTIONS, build_parser

    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for verb, text in VERBS.items():
        assert f"  {verb}" in out and text in out
    for flags, text in GLOBAL_OPTIONS:
        assert flags in out and text in out
    # the parser knows the same verbs and the same global options
    parser = build_parser(only="")
    parser_help = parser.format_help()
    assert all(verb in parser_help for verb in VERBS)
    assert all(flag in parser_help for flags, _ in GLOBAL_OPTIONS for flag in flags.split(", "))
    assert main(["--bogus"]) == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err
