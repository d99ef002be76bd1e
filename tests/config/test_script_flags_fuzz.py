"""Fuzz `tipc init`'s argparse reader: any Python source (broken or odd) yields flags or an error value."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tipc.config.script_flags import ScriptFlags, read_flags

SCRIPT = """\
import argparse
from helpers import add_common
EPOCHS = 5
NAMES = ("--lr", "--wd")
def get_args():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd")
    train = sub.add_parser("train")
    train.add_argument("--epochs", type=int, default=EPOCHS, help="epochs")
    parser.add_argument("-b", "--batch_size", "--batch-size", dest="bs", default=16)
    for name in NAMES:
        parser.add_argument(name, type=float)
    group = parser.add_argument_group("x")
    group.add_argument(*["--use_gpu"], action="store_true")
    parser.add_argument(f"--{EPOCHS}", default=None)
    add_common(parser)
    return parser.parse_args()
"""
HELPER = "def add_common(p):\n    p.add_argument('--save_dir', default='out')\n"
TOKENS = [
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "\n",
    "    ",
    "add_argument(",
    "parser",
    "'--x'",
    "*",
    "**",
    "=",
    "dest=",
    "lambda",
    "from . import",
    "import helpers",
    "\\",
    "'''",
    "#",
    "\x00",
    "\ufeff",
    "async ",
]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_mutated_scripts_never_raise(data: st.DataObject) -> None:
    source = SCRIPT
    for _ in range(data.draw(st.integers(1, 5))):
        i = data.draw(st.integers(0, len(source)))
        j = data.draw(st.integers(i, min(len(source), i + 20)))
        source = source[:i] + data.draw(st.one_of(st.sampled_from(TOKENS), st.text(max_size=4))) + source[j:]
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        (repo / "helpers.py").write_text(
            HELPER + data.draw(st.sampled_from(["", source[:80]])), encoding="utf-8"
        )
        script = repo / "train.py"
        script.write_bytes(source.encode("utf-8", "surrogatepass"))
        out = read_flags(script, repo)
    assert isinstance(out, ScriptFlags)
    assert out.error is None or out.error.startswith("cannot parse")


def test_the_unmutated_script_is_read() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        (repo / "helpers.py").write_text(HELPER, encoding="utf-8")
        (repo / "train.py").write_text(SCRIPT, encoding="utf-8")
        out = read_flags(repo / "train.py", repo)
    options = {o for f in out.flags for o in f.options}
    assert {"--epochs", "--batch_size", "--save_dir", "--use_gpu"} <= options, options


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_never_raise(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "train.py"
        script.write_bytes(data)
        assert isinstance(read_flags(script, Path(tmp)), ScriptFlags)
