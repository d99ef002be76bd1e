"""Bounded work on any input: each slow class an audit found is a regression test here.

Every case must end in well under a second with a plan, a located finding or a located exit-2 error; the
timings asserted are generous bounds (a shared 2-core CI box), far below the minutes the old code took.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from tests.config.fixtures import OCR_DET, make_repo
from tipc.config import parse
from tipc.core.errors import ConfigError
from tipc.planning.chain import context as chain
from tipc.planning.lint import lint_paths
from tipc.planning.planner import plan

CONFIG = "test_tipc/configs/demo/train_infer_python.txt"
T = TypeVar("T")


def timed(fn: Callable[[], T], bound_s: float = 1.0) -> T:
    start = time.process_time()
    result = fn()
    spent = time.process_time() - start
    assert spent < bound_s, f"took {spent:.2f} s of CPU (bound {bound_s} s)"
    return result


def with_values(edits: dict[int, str]) -> str:
    """OCR_DET with the values of some 1-based lines replaced (keys kept)."""
    lines = OCR_DET.split("\n")
    for number, value in edits.items():
        key = lines[number - 1].split(":", 1)[0]
        lines[number - 1] = f"{key}:{value}"
    return "\n".join(lines)


def lint_and_plan(path: Path, **kwargs: object) -> tuple[list[object], object]:
    found = timed(lambda: lint_paths([path]))
    planned = timed(lambda: plan(path, "lite_train_lite_infer", **kwargs))  # type: ignore[arg-type]
    return list(found), planned


def test_a_one_megabyte_value_is_a_located_error_not_minutes_of_cpu(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {CONFIG: with_values({16: "tools/train.py " + "x" * 1_000_000})})
    for call in (lambda: lint_paths([repo / CONFIG]), lambda: plan(repo / CONFIG, "lite_train_lite_infer")):
        with pytest.raises(ConfigError) as err:
            timed(call)
        assert str(repo / CONFIG) in err.value.render()


def test_a_line_over_the_limit_names_its_line(tmp_path: Path) -> None:
    value = "tools/train.py " + "x" * parse.MAX_LINE_CHARS
    repo = make_repo(tmp_path, {CONFIG: with_values({16: value})})
    with pytest.raises(ConfigError) as err:
        timed(lambda: lint_paths([repo / CONFIG]))
    assert err.value.line == 16 and f"{CONFIG}:16" in err.value.render()


def test_a_long_quoted_value_under_the_limit_is_tokenised_in_linear_time(tmp_path: Path) -> None:
    # shlex read this character by character: a few KB of quoted words took seconds per mode.
    value = "tools/train.py " + '-o \'a b\' "c \\" d" e\\ f ' * 300
    repo = make_repo(tmp_path, {CONFIG: with_values({16: value})})
    _found, planned = lint_and_plan(repo / CONFIG)
    train = planned.steps[0]  # type: ignore[attr-defined]
    assert train.argv.count("a b") == 300 and train.argv.count('c " d') == 300 and "e f" in train.argv


def test_pipe_alternatives_stop_at_the_step_cap_with_a_located_finding(tmp_path: Path) -> None:
    # 30 x 30 x 30 x 30 combinations from a ~1.5 KB config.
    many = "|".join(["1"] * 30)
    edits = {4: many, 41: "|".join(["False"] * 30), 43: many, 44: many, 46: "|".join(["fp32"] * 30)}
    repo = make_repo(tmp_path, {CONFIG: with_values(edits)})
    found, planned = lint_and_plan(repo / CONFIG)
    steps = planned.steps  # type: ignore[attr-defined]
    assert len(steps) == chain.DEFAULT_MAX_STEPS
    capped = [f for f in planned.findings if f.code == "TIPC270"]  # type: ignore[attr-defined]
    assert capped and capped[0].level.value == "error" and capped[0].line in (4, 41, 43, 44, 46)
    assert any(f.code == "TIPC270" for f in found)  # type: ignore[attr-defined]
    # The switch raises (or lowers) the cap.
    small = plan(repo / CONFIG, "lite_train_lite_infer", max_steps=7)
    assert len(small.steps) == 7


def test_the_cap_comes_from_tipc_max_steps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(tmp_path, {CONFIG: with_values({4: "|".join(["0"] * 40)})})
    monkeypatch.setenv("TIPC_MAX_STEPS", "5")
    assert len(plan(repo / CONFIG, "lite_train_lite_infer").steps) == 5


def test_null_alternatives_that_add_no_step_are_bounded_too(tmp_path: Path) -> None:
    # `null|null|...` in every loop: no step is planned, yet the loops multiply (47.8 s before).
    nulls = "|".join(["null"] * 1600)  # 8 KB, just under the line limit
    repo = make_repo(
        tmp_path, {CONFIG: with_values({n: nulls for n in (4, 5, 6, 15, 41, 42, 43, 44, 45, 46)})}
    )
    found, planned = lint_and_plan(repo / CONFIG)
    assert any(f.code == "TIPC270" for f in planned.findings)  # type: ignore[attr-defined]
    assert found


def test_duplicate_step_ids_are_numbered_in_linear_time() -> None:
    ctx = chain._Ctx.__new__(chain._Ctx)  # only the id bookkeeping is exercised
    ctx.ids, ctx.next_suffix = set(), {}
    ids = timed(lambda: [ctx.unique("train/x") for _ in range(50_000)], bound_s=2.0)
    assert ids[:3] == ["train/x", "train/x#2", "train/x#3"] and len(set(ids)) == 50_000
    assert ctx.unique("train/x#2") == "train/x#2#2"  # an id that looks numbered stays distinct


def test_repeated_gpu_items_plan_distinct_ids(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {CONFIG: with_values({4: "|".join(["0"] * 3000)})})
    _found, planned = lint_and_plan(repo / CONFIG)
    ids = [s.id for s in planned.steps]  # type: ignore[attr-defined]
    assert len(ids) == len(set(ids)) == chain.DEFAULT_MAX_STEPS


def test_an_absolute_glob_does_not_walk_the_file_system(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {CONFIG: with_values({12: "/*/*/*/*"})})
    found, planned = lint_and_plan(repo / CONFIG)
    assert planned.steps  # type: ignore[attr-defined]
    img = [f for f in found if f.code == "TIPC104"]  # type: ignore[attr-defined]
    assert img and all("expands to" not in f.message for f in img)  # type: ignore[attr-defined]


def test_a_glob_inside_the_repo_expands_and_a_huge_one_stops_at_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tipc.config import reader

    repo = make_repo(tmp_path, {CONFIG: with_values({12: "./train_data/*/"})})
    for name in ("b", "a", ".hidden"):
        (repo / "train_data" / name).mkdir(parents=True)
    planned = plan(repo / CONFIG, "lite_train_lite_infer")
    assert any("expands to './train_data/a/'" in f.message for f in planned.findings)
    monkeypatch.setattr(reader, "GLOB_SCAN_LIMIT", 2)
    planned = timed(lambda: plan(repo / CONFIG, "lite_train_lite_infer"))
    assert any(f.code == "TIPC104" and "matches too much" in f.message for f in planned.findings)


def test_a_glob_with_dotdot_is_not_expanded_outside_the_repo(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    repo = make_repo(tmp_path / "repo", {CONFIG: with_values({12: "../out*"})})
    planned = plan(repo / CONFIG, "lite_train_lite_infer")
    assert not any("expands to" in f.message for f in planned.findings)


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "train_infer_python.txt"
    os.mkfifo(path)
    yield path


def test_a_fifo_is_refused_before_reading(fifo: Path) -> None:
    # Without a writer, reading a FIFO blocks forever: it must be refused without opening it for a read.
    for call in (lambda: lint_paths([fifo]), lambda: plan(fifo, "lite_train_lite_infer")):
        with pytest.raises(ConfigError, match="FIFO"):
            timed(call)


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_dev_zero_is_refused_not_read_into_memory() -> None:
    for call in (
        lambda: lint_paths([Path("/dev/zero")]),
        lambda: plan(Path("/dev/zero"), "lite_train_lite_infer"),
        lambda: parse.read_text(Path("/dev/zero")),
    ):
        with pytest.raises(ConfigError, match="character device"):
            timed(call)


def test_a_directory_given_as_the_config_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="directory"):
        plan(tmp_path, "lite_train_lite_infer")


def test_a_file_over_the_size_limit_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    with open(path, "wb") as fh:
        fh.truncate(parse.MAX_CONFIG_BYTES + 1)  # sparse: no time spent writing
    with pytest.raises(ConfigError, match="larger than"):
        timed(lambda: parse.read_text(path))


def test_glob_components_match_like_bash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tipc.config import reader

    for rel in ("data/a/x.txt", "data/b/y.txt", "data/.h/x.txt", "data/f.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("", encoding="utf-8")
    # a literal component must exist; a leading dot is matched only literally; `dir/` keeps folders only
    assert reader._glob_in(tmp_path, "data/*/x.txt") == ["data/a/x.txt"]
    assert reader._glob_in(tmp_path, "data/.*/x.txt") == ["data/.h/x.txt"]
    assert reader._glob_in(tmp_path, "data/*/") == ["data/a/", "data/b/"]
    assert reader._glob_in(tmp_path, "data/*") == ["data/a", "data/b", "data/f.txt"]
    assert reader._glob_in(tmp_path, "nope/*") == []
    assert reader.expand_glob("data/*/", tmp_path, "first_colon") == "data/a/ data/b/"
    assert reader.expand_glob("data/*/", tmp_path, "every_colon") == "data/a/"
    monkeypatch.setattr(reader, "GLOB_MATCH_LIMIT", 2)
    with pytest.raises(reader.GlobTooLarge, match="more than 2 matches"):
        reader._glob_in(tmp_path, "data/*")


def test_the_words_of_a_command_repeated_in_every_step_are_examined_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 300 glob words in the train command, repeated by a 40-item gpu_list and the inference loops: their
    # TIPC303 notes were replayed for every planned step (steps x words), seconds of CPU per lint.
    globs = " ".join(f"data/part{i}/*.txt" for i in range(300))
    edits = {4: "|".join(["0"] * 40), 16: f"tools/train.py {globs}", 43: "|".join(["1"] * 30)}
    repo = make_repo(tmp_path, {CONFIG: with_values(edits)})
    calls = 0
    note = chain._Ctx.note

    def counted(self: chain._Ctx, *args: object, **kwargs: object) -> None:
        nonlocal calls
        calls += 1
        note(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(chain._Ctx, "note", counted)
    found = lint_paths([repo / CONFIG])
    assert len([f for f in found if f.code == "TIPC303"]) == 300
    assert calls < 5_000, f"{calls} notes for 300 words"


def test_a_long_mode_keyed_value_is_read_once_per_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tipc.config import bash

    epochs = "|".join(f"m{i}=1" for i in range(900)) + "|lite_train_lite_infer=2"
    repo = make_repo(tmp_path, {CONFIG: with_values({4: "|".join(["0"] * 200), 7: epochs})})
    bash.mode_value.cache_clear()
    splits = 0
    ifs_split = bash.ifs_split

    def counted(text: str, sep: str) -> list[str]:
        nonlocal splits
        splits += 1
        return ifs_split(text, sep)

    monkeypatch.setattr(bash, "ifs_split", counted)
    planned = plan(repo / CONFIG, "lite_train_lite_infer")
    assert len(planned.steps) > 200 and "Global.epoch_num=2" in planned.steps[0].argv
    assert splits < 20_000, f"{splits} splits of a 901-alternative value"
