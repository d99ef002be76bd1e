"""Adversarial bad input for every verb, through the real CLI.

The standard (docs/exit-codes.md): bad input gets a clear message naming file[:line] and what was expected,
exit code 2 (1 where a check legitimately fails), never a traceback, and no file of the input repo changes.
Nothing here runs Paddle: the runs that do start use `--python false`, so every step fails at once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tipc.cli import main
from tipc.execute.record import record_location
from tipc.planning.planner import plan

DEMO = Path(__file__).resolve().parent.parent / "examples" / "lenet_digits"
CONFIG_REL = "test_tipc/configs/lenet_digits/train_infer_python.txt"
SERVING_REL = "test_tipc/configs/lenet_digits/serving_infer_python.txt"


# --- fixtures -------------------------------------------------------------------------------------------


def _tree_hash(root: Path) -> dict[str, str]:
    """Every file under root except tipc's own output folder, by content hash."""
    out: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("test_tipc/output") or not path.is_file():
            continue
        out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    """A copy of the demo repo (no data: nothing here trains); asserts afterwards that nothing changed."""
    dest = tmp_path / "repo"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("lite_data", "output", "__pycache__", "*.tar"))
    before = _tree_hash(dest)
    yield dest
    assert _tree_hash(dest) == before, "a bad-input command changed the user's repo"


@dataclass
class Inputs:
    """Bad input files outside the repo, hashed so a test can assert none of them was touched."""

    root: Path

    def write(self, name: str, data: bytes) -> Path:
        path = self.root / name
        path.write_bytes(data)
        return path


@pytest.fixture
def inputs(tmp_path: Path) -> Iterator[Inputs]:
    root = tmp_path / "inputs"
    root.mkdir()
    yield Inputs(root)


GOOD = (DEMO / CONFIG_REL).read_bytes()
NO_PYTHON = b"\n".join(line for line in GOOD.split(b"\n") if not line.startswith(b"python:"))
THREE_LINES = (
    b"===========================train_params===========================\nmodel_name:x\npython:python\n"
)
LATIN1 = GOOD.replace(b"model_name:lenet_digits", "model_name:l\xe9net".encode("latin-1"), 1)
BINARY = GOOD[:200] + b"\x00\x01\x02" + bytes(range(256))


def first_bad_line(data: bytes) -> int:
    """The 1-based line of the first NUL or non-ASCII byte: where a located error must point."""
    return data[: next(i for i, b in enumerate(data) if b == 0 or b >= 0x80)].count(b"\n") + 1


def cli(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    rc = main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err, captured.out + captured.err
    return rc, captured.out, captured.err


def assert_located(
    rc: int, text: str, path: Path | str, line: int | None = None, rc_expected: int = 2
) -> None:
    assert rc == rc_expected, text
    where = f"{path}:{line}" if line is not None else str(path)
    assert where in text, f"expected {where!r} in:\n{text}"


# --- lint / plan: the config reader ---------------------------------------------------------------------

UNREADABLE_DATA = [pytest.param(BINARY, id="binary"), pytest.param(LATIN1, id="latin1")]
UNREADABLE = [
    pytest.param(BINARY, "binary file", id="binary"),
    pytest.param(LATIN1, "not UTF-8", id="latin1"),
]


@pytest.mark.parametrize("verb", ["lint", "plan"])
@pytest.mark.parametrize(("data", "what"), UNREADABLE)
def test_unreadable_config_exits_2_with_file_and_line(
    verb: str, data: bytes, what: str, inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    path = inputs.write("bad.txt", data)
    line = first_bad_line(data)
    rc, _out, err = cli(capsys, [verb, str(path)])
    assert_located(rc, err, path, line)
    assert what in err
    assert path.read_bytes() == data


@pytest.mark.parametrize("verb", ["lint", "plan"])
def test_missing_config_exits_2(verb: str, inputs: Inputs, capsys: pytest.CaptureFixture[str]) -> None:
    path = inputs.root / "nope.txt"
    rc, _out, err = cli(capsys, [verb, str(path)])
    assert_located(rc, err, path)


def test_plan_of_a_directory_says_a_file_was_expected(
    inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _out, err = cli(capsys, ["plan", str(inputs.root)])
    assert_located(rc, err, inputs.root)
    assert "expected a config file" in err


def test_lint_of_a_folder_without_configs_exits_2(inputs: Inputs, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _out, err = cli(capsys, ["lint", str(inputs.root)])
    assert_located(rc, err, inputs.root)


def test_lint_flags_an_empty_config(inputs: Inputs, capsys: pytest.CaptureFixture[str]) -> None:
    path = inputs.write("empty.txt", b"")
    rc, out, _err = cli(capsys, ["lint", str(path)])
    assert_located(rc, out, path, rc_expected=1)
    assert "TIPC001" in out


def test_lint_flags_crlf_at_line_1(inputs: Inputs, capsys: pytest.CaptureFixture[str]) -> None:
    path = inputs.write("crlf.txt", GOOD.replace(b"\n", b"\r\n"))
    rc, out, _err = cli(capsys, ["lint", str(path)])
    assert_located(rc, out, path, 1, rc_expected=1)
    assert "CRLF" in out


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(THREE_LINES, id="3-lines"),
        pytest.param(NO_PYTHON, id="no-python-line"),
        pytest.param(GOOD.replace(b"\n", b"\r\n"), id="crlf"),
        pytest.param(b"", id="empty"),
    ],
)
@pytest.mark.parametrize("verb", ["lint", "plan"])
def test_odd_but_readable_configs_never_crash(
    verb: str, data: bytes, inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    path = inputs.write("odd.txt", data)
    rc, out, err = cli(capsys, [verb, str(path)])
    assert rc in (0, 1), out + err  # lint findings are exit 1; plan shows what the script would run
    assert path.read_bytes() == data


@pytest.mark.parametrize("verb", ["lint", "plan"])
def test_a_config_over_the_size_limits_is_a_located_usage_error(
    verb: str, inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    # Bounded work: tipc refuses a 5 MB file, or one line longer than any TIPC value, before tokenising it.
    path = inputs.write("huge.txt", GOOD + b"#" * (5 * 1024 * 1024) + b"\n")
    rc, _out, err = cli(capsys, [verb, str(path)])
    assert_located(rc, err, path)
    assert "larger than" in err
    line = GOOD.count(b"\n") + 1
    path = inputs.write("long.txt", GOOD + b"x:" + b"y" * 100_000 + b"\n")
    rc, _out, err = cli(capsys, [verb, str(path)])
    assert_located(rc, err, path, line)


def test_plan_flags_a_config_without_its_python_line(
    inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    path = inputs.write("nopy.txt", NO_PYTHON)
    rc, out, _err = cli(capsys, ["lint", str(path)])
    assert_located(rc, out, path, rc_expected=1)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param(["--mode", "zzz"], "invalid choice", id="mode"),
        pytest.param(["--dialect", "zzz"], "unknown dialect", id="dialect"),
        pytest.param(["--set", "epoch"], "expected KEY=VALUE", id="set-without-equals"),
        pytest.param(["--set", "NoSuch.key=1"], "no slot with that key", id="set-unknown-key"),
        pytest.param(["--chain", "serving"], "", id="chain-mismatch"),
    ],
)
def test_plan_bad_options_exit_2(
    extra: list[str], message: str, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _out, err = cli(capsys, ["plan", *extra, str(repo / CONFIG_REL)])
    assert rc == 2, err
    assert message in err


def test_plan_repo_that_is_not_a_folder_exits_2(
    repo: Path, inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    for bad in (inputs.root / "nope", inputs.write("afile", b"x")):
        rc, _out, err = cli(capsys, ["plan", "--repo", str(bad), str(repo / CONFIG_REL)])
        assert_located(rc, err, bad)


def test_lint_unknown_dialect_exits_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _out, err = cli(capsys, ["lint", "--dialect", "zzz", str(repo / CONFIG_REL)])
    assert rc == 2 and "unknown dialect 'zzz'" in err


@pytest.mark.parametrize(
    ("data", "line"),
    [
        pytest.param(b"", 1, id="empty"),
        pytest.param(b"\x00abc", 1, id="binary"),
        pytest.param(b"===\nmodel_name:x\n", 1, id="no-header"),
        pytest.param(b"===serving_params===\nmodel_name:\xe9\n", 2, id="latin1"),
    ],
)
def test_bad_serving_config_exits_2_located(
    data: bytes, line: int, inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    path = inputs.write("serving_infer_python.txt", data)
    rc, _out, err = cli(capsys, ["plan", "--chain", "serving", str(path)])
    assert_located(rc, err, path, line)


# --- run ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        pytest.param(["--mode", "zzz"], "expected one of", id="mode"),
        pytest.param(["--dialect", "zzz"], "unknown dialect", id="dialect"),
        pytest.param(["--set", "epoch"], "expected KEY=VALUE", id="set-without-equals"),
        pytest.param(["--set", "NoSuch.key=1"], "no slot with that key", id="set-unknown-key"),
        pytest.param(["--only", "nosuchstage"], "", id="only-unknown-stage"),
    ],
)
@pytest.mark.parametrize("verb", ["run", "check"])
def test_run_and_check_bad_options_exit_2_before_running(
    verb: str, extra: list[str], message: str, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _out, err = cli(capsys, [verb, "--python", "false", *extra, str(repo)])
    assert rc == 2, err
    assert message in err
    assert not (repo / "test_tipc" / "output").exists(), "nothing may run on a usage error"


@pytest.mark.parametrize("data", UNREADABLE_DATA)
@pytest.mark.parametrize("verb", ["run", "check"])
def test_run_and_check_unreadable_config_exit_2(
    verb: str, data: bytes, repo: Path, inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    path = inputs.write("bad.txt", data)
    rc, _out, err = cli(capsys, [verb, "--python", "false", "--config", str(path), str(repo)])
    assert_located(rc, err, path, first_bad_line(data))
    assert not (repo / "test_tipc" / "output").exists()


@pytest.mark.parametrize("verb", ["run", "check"])
def test_run_and_check_missing_or_directory_config_exit_2(
    verb: str, repo: Path, inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    for bad in (inputs.root / "nope.txt", inputs.root):
        rc, _out, err = cli(capsys, [verb, "--python", "false", "--config", str(bad), str(repo)])
        assert_located(rc, err, bad)


@pytest.mark.parametrize("verb", ["run", "check", "init"])
def test_missing_repo_or_a_file_as_repo_exit_2(
    verb: str, inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    not_a_repo = inputs.write("afile", b"x")
    extra = ["--model", "m", "--dry-run"] if verb == "init" else ["--python", "false"]
    for bad in (inputs.root / "nope", not_a_repo):
        rc, _out, err = cli(capsys, [verb, *extra, str(bad)])
        assert_located(rc, err, bad)
    assert not_a_repo.read_bytes() == b"x"


def test_run_of_an_empty_config_says_nothing_was_verified(
    repo: Path, inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    path = inputs.write("empty.txt", b"")
    rc, _out, err = cli(capsys, ["run", "--python", "false", "--config", str(path), str(repo)])
    assert_located(rc, err, path, rc_expected=1)
    assert "nothing was run" in err


CORRUPT_RECORDS = [
    pytest.param(b'{"schema": "tipc.run-record/1", "pla', id="truncated"),
    pytest.param(b"\xff\xfe\x00", id="binary"),
    pytest.param(
        b'{"schema": "tipc.run-record/1", "started": 1, "plan": [1], "results": [5]}', id="wrong-shape"
    ),
    pytest.param(
        b'{"schema": "tipc.run-record/1", "started": 1, "plan": {}, "results": "ab"}', id="str-results"
    ),
    pytest.param(b"[]", id="list"),
]


def _stored_record(repo: Path) -> tuple[Path, Path]:
    """(where a sandboxed run sees its record, where that file really is)."""
    from tipc.execute.sandbox import run_key, stored_path

    the_plan = plan(repo / CONFIG_REL, "lite_train_lite_infer", repo=repo)
    seen = repo / record_location(the_plan)
    key = run_key(the_plan.model_name, the_plan.config_path, the_plan.mode)
    return seen, stored_path(repo, key, the_plan.output_dir, str(record_location(the_plan)))


@pytest.mark.parametrize("data", CORRUPT_RECORDS)
@pytest.mark.parametrize("flag", ["--resume", "--rerun-failed"])
def test_run_with_a_corrupt_record_names_it_and_runs_afresh(
    flag: str, data: bytes, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record, stored = _stored_record(repo)
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_bytes(data)
    rc, out, err = cli(capsys, ["run", flag, "--python", "false", str(repo)])
    assert rc == 1, err  # every step fails under `false`; the corrupt record is reported, not fatal
    assert f"cannot reuse the previous record: {record}" in out + err


@pytest.mark.parametrize("data", CORRUPT_RECORDS[:3])
def test_check_reuse_run_with_a_corrupt_record_runs_the_chain(
    data: bytes, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, stored = _stored_record(repo)
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_bytes(data)
    rc, _out, err = cli(capsys, ["check", "--reuse-run", "--python", "false", str(repo)])
    assert rc == 1, err
    assert "reports written to" in err


# --- check ----------------------------------------------------------------------------------------------

RULESETS = [
    pytest.param(b"rules: [\n  - {id: x\n", 2, "invalid YAML", id="bad-yaml"),
    pytest.param(b"rules: 5\n", 1, "schema", id="wrong-type"),
    pytest.param(b"- a\n- b\n", 1, "mapping", id="a-list"),
    pytest.param(b"schema: tipc.ruleset/1\nname: x\nrules: []\nbogus: 1\n", None, "", id="unknown-key"),
    pytest.param(b"rules: []\n\xff\n", 2, "not UTF-8", id="non-utf8"),
]


@pytest.mark.parametrize(("data", "line", "message"), RULESETS)
def test_malformed_ruleset_file_exits_2_located(
    data: bytes,
    line: int | None,
    message: str,
    repo: Path,
    inputs: Inputs,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = inputs.write("rules.yaml", data)
    rc, _out, err = cli(capsys, ["check", "--python", "false", "--ruleset", str(path), str(repo)])
    assert_located(rc, err, path, line)
    assert message in err
    assert not (repo / "test_tipc" / "output").exists()


@pytest.mark.parametrize("bad", ["zzz", "nope.yaml", "DIR"])
def test_unknown_ruleset_name_or_path_exits_2(
    bad: str, repo: Path, inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    arg = str(inputs.root) if bad == "DIR" else bad
    rc, _out, err = cli(capsys, ["check", "--python", "false", "--ruleset", arg, str(repo)])
    assert_located(rc, err, arg)


SETTINGS = [
    pytest.param("agreement: [\n  x: 1\n", 3, "invalid YAML", id="bad-yaml"),
    pytest.param("agreement:\n  tolerances: {atol: abc}\n", 2, "expected a number", id="wrong-type"),
    pytest.param("agreement:\n  inputz: x\n", 2, "unknown key 'inputz'", id="unknown-key"),
    pytest.param("- 1\n- 2\n", 1, "expected a mapping", id="a-list"),
    pytest.param("1: 2\n", 1, "mapping key 1 must be a string", id="int-key"),
    pytest.param("agreement:\n\tinputs: x\n", 2, "invalid YAML", id="tab"),
    pytest.param("python: 5\n", 1, "expected a non-empty string", id="python-int"),
    pytest.param("agreement:\n  predict_args: 'a \"b'\n", 2, "cannot split", id="unbalanced-quote"),
    pytest.param("convergence: {alpha: 2}\n", 1, "alpha", id="out-of-range"),
    pytest.param("python: x\nagreement:\x00\n", 2, "invalid YAML", id="nul-byte"),
    pytest.param("python: x\n\nlog_fields: {}\n# caf\xe9\n".encode("latin-1"), 4, "not UTF-8", id="latin1"),
]


@pytest.mark.parametrize(("text", "line", "message"), SETTINGS)
def test_malformed_tipc_yaml_exits_2_located(
    text: str | bytes, line: int, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "repo"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("lite_data", "output", "__pycache__", "*.tar"))
    settings = dest / "test_tipc" / "tipc.yaml"
    settings.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    before = _tree_hash(dest)
    rc, _out, err = cli(capsys, ["check", "--python", "false", str(dest)])
    assert_located(rc, err, "test_tipc/tipc.yaml", line)
    assert message in err
    assert _tree_hash(dest) == before
    assert not (dest / "test_tipc" / "output").exists()


def test_check_report_dir_under_a_file_exits_2_before_running(
    repo: Path, inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = inputs.write("afile", b"x")
    for report_dir in (blocker / "reports", blocker):
        rc, _out, err = cli(
            capsys, ["check", "--python", "false", "--report-dir", str(report_dir), str(repo)]
        )
        assert_located(rc, err, report_dir)
        assert not (repo / "test_tipc" / "output").exists(), "the chain ran before the report dir was checked"
    assert blocker.read_bytes() == b"x"


# --- init -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a/b", "..", "../x", "a b", "/abs", "x\\y"])
def test_init_rejects_path_like_model_names(
    name: str, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _out, err = cli(capsys, ["init", "--model", name, "--force", str(repo)])
    assert rc == 2 and "invalid model name" in err, err
    assert not (repo.parent / "x").exists()


@pytest.mark.parametrize(
    ("sets", "message"),
    [
        pytest.param(["epoch"], "expected SLOT=VALUE", id="without-equals"),
        pytest.param(["zz=1"], "unknown slot 'zz'", id="unknown-slot"),
        pytest.param(["zz.key=1"], "unknown slot", id="unknown-slot-key"),
    ],
)
def test_init_bad_set_exits_2(
    sets: list[str], message: str, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["init", "--model", "m", "--dry-run"] + [a for s in sets for a in ("--set", s)] + [str(repo)]
    rc, _out, err = cli(capsys, argv)
    assert rc == 2 and message in err, err


def test_init_over_existing_files_needs_force(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _out, err = cli(capsys, ["init", "--model", "lenet_digits", str(repo)])
    assert rc == 2 and "--force" in err


@pytest.mark.parametrize(
    ("data", "line", "message"),
    [
        pytest.param(BINARY, first_bad_line(BINARY), "binary file", id="binary"),
        pytest.param(b"", None, "empty config", id="empty"),
        pytest.param(b"\n \n", None, "empty config", id="blank"),
    ],
)
def test_init_from_config_unreadable_exits_2_naming_the_source(
    data: bytes, line: int | None, message: str, inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    src = inputs.write("old.txt", data)
    out = inputs.root / "new.txt"
    rc, _out, err = cli(capsys, ["init", "--from-config", str(src), "--output", str(out)])
    assert_located(rc, err, src, line)
    assert message in err
    assert not out.exists()
    assert src.read_bytes() == data


def test_init_from_config_of_a_directory_or_missing_file_exits_2(
    inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    for src in (inputs.root, inputs.root / "nope.txt"):
        rc, _out, err = cli(
            capsys, ["init", "--from-config", str(src), "--output", str(inputs.root / "n.txt")]
        )
        assert_located(rc, err, src)


def test_init_from_config_into_an_unwritable_place_exits_2_and_writes_nothing(
    repo: Path, inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = inputs.write("afile", b"x")
    src = inputs.write("old.txt", GOOD.replace(b"\n", b"\r\n"))  # needs a fix, so a write is due
    for target in (blocker / "new.txt", inputs.root):
        rc, _out, err = cli(capsys, ["init", "--from-config", str(src), "--output", str(target)])
        assert_located(rc, err, target)
    assert blocker.read_bytes() == b"x"
    assert sorted(p.name for p in inputs.root.iterdir()) == ["afile", "old.txt"]


def test_init_from_config_of_odd_text_never_crashes(
    inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    for i, data in enumerate((THREE_LINES, NO_PYTHON, LATIN1, GOOD.replace(b"\n", b"\r"))):
        src = inputs.write(f"old{i}.txt", data)
        rc, _out, err = cli(
            capsys, ["init", "--from-config", str(src), "--output", str(inputs.root / f"n{i}.txt")]
        )
        assert rc == 0, err
        assert src.read_bytes() == data


# --- serve ----------------------------------------------------------------------------------------------


def test_serve_without_a_model_exits_2(inputs: Inputs, capsys: pytest.CaptureFixture[str]) -> None:
    empty_dir = inputs.root / "model"
    empty_dir.mkdir()
    half = inputs.root / "half"
    half.mkdir()
    (half / "inference.json").write_text("{}", encoding="utf-8")
    a_file = inputs.write("afile", b"x")
    for bad, message in (
        (inputs.root / "nope", "expected an exported inference model folder"),
        (a_file, "expected an exported inference model folder"),
        (empty_dir, "no inference.json or inference.pdmodel"),
        (half, "no inference.pdiparams"),
    ):
        rc, _out, err = cli(capsys, ["serve", "--port", "0", str(bad)])
        assert_located(rc, err, bad)
        assert message in err


@pytest.mark.parametrize(
    "extra", [["--port", "-5"], ["--port", "x"], ["--workers", "0"], ["--max-body-bytes", "-1"]]
)
def test_serve_bad_options_exit_2(
    extra: list[str], inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, _out, err = cli(capsys, ["serve", *extra, str(inputs.root)])
    assert rc == 2, err


# --- the error handler itself ---------------------------------------------------------------------------


def test_an_internal_error_is_one_line_and_exit_3(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import tipc.commands.lint as lint_command

    def broken(*_args: object, **_kwargs: object) -> int:
        raise KeyError("boom")

    monkeypatch.setattr(lint_command, "run", broken)
    rc, out, err = cli(capsys, ["lint", str(repo / CONFIG_REL)])
    assert rc == 3
    assert err.startswith("tipc: internal error: KeyError: 'boom'\n")
    assert out == ""


def test_a_real_process_exits_2_without_a_traceback(inputs: Inputs) -> None:
    path = inputs.write("bad.txt", BINARY)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    proc = subprocess.run(
        [sys.executable, "-m", "tipc", "plan", str(path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.strip()
        == f"tipc: {path}:{first_bad_line(BINARY)}: binary file (NUL byte), expected a text config"
    )
    assert "Traceback" not in proc.stdout + proc.stderr


def test_a_crashing_worker_is_summarised_in_one_line(tmp_path: Path) -> None:
    """The agreement worker's traceback stays in its log; the report gets the exception line and the log."""
    from tipc.judge.checks._worker import run_worker

    fake_python = tmp_path / "python"
    fake_python.write_text(
        "#!/bin/sh\n"
        # it has every module tipc's probe asks for, so the worker is placed here (tipc.execute.own_parts)
        'case "$1" in *findmodules*) exit 0;; esac\n'
        "echo 'Traceback (most recent call last):' >&2\n"
        "echo '  File \"worker.py\", line 1, in <module>' >&2\n"
        "echo 'ImportError: libpaddle.so: cannot open shared object file' >&2\n"
        "exit 1\n",
        encoding="utf-8",
    )
    fake_python.chmod(0o755)
    run = run_worker(str(fake_python), {"model_dir": str(tmp_path)}, tmp_path / "work", 60)
    assert run.response is None and run.exit_code == 1
    assert run.error == (
        "worker exited 1 without a response: ImportError: libpaddle.so: cannot open shared object file "
        "(traceback in the worker log)"
    )
    assert "Traceback" in run.log.read_text(encoding="utf-8")


@pytest.mark.parametrize("data", UNREADABLE_DATA)
def test_check_with_an_unreadable_serving_config_exits_2_naming_it(
    data: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dest = tmp_path / "repo"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns("lite_data", "output", "__pycache__", "*.tar"))
    serving = dest / SERVING_REL
    serving.write_bytes(data)
    before = _tree_hash(dest)
    rc, _out, err = cli(capsys, ["check", "--python", "false", str(dest)])
    assert_located(rc, err, serving, first_bad_line(data))
    assert _tree_hash(dest) == before
    assert not (dest / "test_tipc" / "output").exists(), "nothing may run on a config error"


@pytest.mark.parametrize("verb", ["run", "check"])
def test_an_output_folder_that_is_a_file_exits_2_before_running(
    verb: str, repo: Path, inputs: Inputs, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = repo / "test_tipc" / "output"
    blocker.write_bytes(b"not a folder")
    extra = ["--report-dir", str(inputs.root / "reports")] if verb == "check" else []
    rc, _out, err = cli(capsys, [verb, "--python", "false", *extra, str(repo)])
    assert_located(rc, err, blocker)
    assert "is a file, expected a folder" in err
    assert blocker.read_bytes() == b"not a folder"
    assert not (inputs.root / "reports").exists()
