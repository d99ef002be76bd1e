"""Static argparse analysis over the styles model repos use; every script is a tmp file, never executed."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.helpers.trees import write_tree
from tipc.config.script_flags import read_flags


def _write(root: Path, files: dict[str, str]) -> None:
    write_tree(root, {rel: textwrap.dedent(text) for rel, text in files.items()})


def _by_flag(root: Path, script: str) -> dict[str, object]:
    return {f.flag: f for f in read_flags(root / script, root).flags}


def test_plain_parser_reads_types_defaults_and_actions(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "train.py": """
            import argparse
            raise SystemExit("this script must never be run by the analysis")
            parser = argparse.ArgumentParser()
            parser.add_argument("--epochs", "-e", type=int, default=10)
            parser.add_argument("--lr", type=float, default=0.1)
            parser.add_argument("--amp", action="store_true")
            parser.add_argument("--output_dir", required=True)
            parser.add_argument("config")
            """
        },
    )
    flags = read_flags(tmp_path / "train.py", tmp_path)
    by = {f.flag: f for f in flags.flags}
    assert by["--epochs"].options == ("--epochs", "-e")
    assert by["--epochs"].type_name == "int" and by["--epochs"].default == 10
    assert by["--amp"].is_switch
    assert by["--output_dir"].required
    assert by["config"].positional and by["config"].required
    assert by["--epochs"].line == 5


def test_groups_and_dashes_keep_the_scripts_spelling(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "train.py": """
            import argparse
            p = argparse.ArgumentParser()
            g = p.add_argument_group("data")
            g.add_argument("--batch-size", type=int, default=64)
            g.add_argument("--data-path", default="/data")
            """
        },
    )
    by = _by_flag(tmp_path, "train.py")
    assert set(by) == {"--batch-size", "--data-path"}
    flag = read_flags(tmp_path / "train.py", tmp_path).find(("batch_size",))
    assert flag is not None and flag.flag == "--batch-size" and flag.dest == "batch_size"


def test_helper_function_and_constants(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "train.py": """
            import argparse
            EPOCHS = "--max_epochs"
            BATCH_NAMES = ("--bs", "--batch_size")

            def add_train_args(parser):
                parser.add_argument(EPOCHS, type=int, default=3)
                parser.add_argument(*BATCH_NAMES, type=int, default=8)

            def main():
                parser = argparse.ArgumentParser()
                add_train_args(parser)
                return parser.parse_args()
            """
        },
    )
    flags = read_flags(tmp_path / "train.py", tmp_path)
    epoch = flags.find(("epochs", "max_epochs"))
    batch = flags.find(("batch_size",))
    assert epoch is not None and epoch.flag == "--max_epochs" and epoch.default == 3
    assert batch is not None and batch.options == ("--bs", "--batch_size") and batch.flag == "--bs"


def test_helper_imported_from_a_local_module(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "utils/args.py": """
            def add_common(parser):
                parser.add_argument("--use_gpu", type=str, default="False")

            def unrelated(parser):
                parser.add_argument("--never_called")
            """,
            "utils/__init__.py": "",
            "tools/train.py": """
            import argparse
            from utils.args import add_common
            p = argparse.ArgumentParser()
            add_common(p)
            """,
        },
    )
    by = _by_flag(tmp_path, "tools/train.py")
    assert "--use_gpu" in by
    assert "--never_called" not in by
    assert by["--use_gpu"].path == "utils/args.py"  # type: ignore[attr-defined]


def test_dest_overrides_the_name(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "infer.py": """
            import argparse
            p = argparse.ArgumentParser()
            p.add_argument("--inference-model", dest="model_dir")
            """
        },
    )
    flags = read_flags(tmp_path / "infer.py", tmp_path)
    flag = flags.find(("model_dir",))
    assert flag is not None and flag.flag == "--inference-model"


def test_subparsers_record_their_command(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "main.py": """
            import argparse
            p = argparse.ArgumentParser()
            sub = p.add_subparsers(dest="cmd")
            train = sub.add_parser("train")
            train.add_argument("--epochs", type=int, default=1)
            ev = sub.add_parser("eval")
            ev.add_argument("--weights")
            """
        },
    )
    flags = read_flags(tmp_path / "main.py", tmp_path).flags
    assert {(f.flag, f.subcommand) for f in flags} == {("--epochs", "train"), ("--weights", "eval")}


def test_argument_parser_subclass_self_add_argument(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "tools/train.py": """
            from argparse import ArgumentParser
            class ArgsParser(ArgumentParser):
                def __init__(self):
                    super().__init__()
                    self.add_argument("-c", "--config")
                    self.add_argument("--eval", action="store_true", default=False)
            """
        },
    )
    by = _by_flag(tmp_path, "tools/train.py")
    assert set(by) == {"--config", "--eval"}


def test_syntax_error_is_reported_not_raised(tmp_path: Path) -> None:
    _write(tmp_path, {"train.py": "def broken(:\n"})
    flags = read_flags(tmp_path / "train.py", tmp_path)
    assert flags.flags == () and flags.error is not None


def test_module_attribute_helpers_and_parser_classes_are_followed(tmp_path: Path) -> None:
    # PaddleOCR style: tools/train.py calls program.preprocess(), which builds an ArgsParser subclass.
    _write(
        tmp_path,
        {
            "tools/__init__.py": "",
            "tools/program.py": """
            from argparse import ArgumentParser

            class ArgsParser(ArgumentParser):
                def __init__(self):
                    super().__init__()
                    self.add_argument("-c", "--config", help="configuration file")
                    self.add_argument("-o", "--opt", nargs="+")

            def preprocess(is_train=False):
                return ArgsParser().parse_args()

            def unrelated():
                ArgumentParser().add_argument("--not_here")
            """,
            "tools/train.py": """
            import tools.program as program
            config = program.preprocess(is_train=True)
            """,
        },
    )
    assert set(_by_flag(tmp_path, "tools/train.py")) == {"--config", "--opt"}


def test_a_flag_the_script_refuses_to_run_without_is_required(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "train.py": """
            import argparse, sys
            parser = argparse.ArgumentParser()
            parser.add_argument("--config", dest="cfg", default=None, type=str)
            parser.add_argument("--resume", default=None)
            parser.add_argument("--out", default=None)
            parser.add_argument("--seed", type=int, default=None)
            parser.add_argument("--iters", type=int, default=10)
            args = parser.parse_args()
            if not args.cfg:
                raise RuntimeError("No configuration file specified.")
            if args.out is None:
                sys.exit("give --out")
            if args.resume:
                print("resuming")
            if not args.iters:
                raise ValueError("iters must be positive")
            """
        },
    )
    required = {f.flag for f in read_flags(tmp_path / "train.py", tmp_path).flags if f.required}
    # --resume is only tested, --iters has a value of its own: neither is needed to run
    assert required == {"--config", "--out"}
