"""Command lines read from a repo's README, docs, notes and shell scripts."""

from __future__ import annotations

from pathlib import Path

from tests.scaffold.scaffold_fixtures import build_tree
from tipc.scaffold.evidence import commands_for, mentions, parse_command, read_commands


def test_parse_command_reads_python_launch_and_stops_at_redirects() -> None:
    assert parse_command("$ python3 tools/train.py --data_dir lite_data --type lite > log 2>&1") == (
        "tools/train.py",
        ("--data_dir", "lite_data", "--type", "lite"),
    )
    launched = parse_command('python -m paddle.distributed.launch --gpus="0,1" ./train.py --epochs=2')
    assert launched == ("train.py", ("--epochs=2",))
    assert parse_command("pip install -r requirements.txt") is None


def test_read_commands_joins_continuations_and_skips_test_tipc(tmp_path: Path) -> None:
    repo = build_tree(
        tmp_path / "r",
        {
            "README.md": (
                "# M\n```bash\npython train.py \\\n  --data-path=./lite_data \\\n  --epochs 2\n```\n"
            ),
            "docs/eval.md": "Run `python train.py --test-only --pretrained=w.pdparams`\n",
            "shell/train.sh": "#!/bin/bash\npython3.7 tools/export_model.py --save-inference-dir out\n",
            "notes.txt": "python eval.py --data_dir lite_data --type lite\n",
            "test_tipc/README.md": "python train.py --never-seen\n",
            "data/list.txt": "python not_a_command.py\n",
        },
    )
    commands = read_commands(repo)
    where = {c.where: (c.script, c.args) for c in commands}
    assert where["README.md:3"] == ("train.py", ("--data-path=./lite_data", "--epochs", "2"))
    assert where["docs/eval.md:1"][1] == ("--test-only", "--pretrained=w.pdparams")
    assert where["shell/train.sh:2"][0] == "tools/export_model.py"
    assert where["notes.txt:1"][0] == "eval.py"
    assert not any("--never-seen" in c.args for c in commands)
    assert not any(c.script == "not_a_command.py" for c in commands)
    train = commands_for(commands, "train.py")
    assert [c.where for c in train] == ["README.md:3", "docs/eval.md:1"]
    assert mentions(train[0], "lite_data") and not mentions(train[1], "lite_data")


def test_options_pairs_values_and_switches() -> None:
    command = read_options("python t.py --a 1 --b=x --flag --neg -1 --last")
    assert command == [("--a", "1"), ("--b", "x"), ("--flag", None), ("--neg", "-1"), ("--last", None)]


def read_options(line: str) -> list[tuple[str, str | None]]:
    from tipc.scaffold.evidence import Command

    parsed = parse_command(line)
    assert parsed is not None
    return Command("x", 1, parsed[0], parsed[1]).options()
