"""The benchmark's data: the catalogue of silent-failure kinds (catalogue.yaml) and the repos they are planted
into (repos.yaml), loaded into frozen values and validated (an unknown key or a wrong type is an error naming
the file and the entry)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
CATALOGUE = HERE / "catalogue.yaml"
REPOS = HERE / "repos.yaml"

# What a kind may need of the clean repo's run (bench/silent/facts.py judges each).
NEEDS = re.compile(
    r"^(stage_passed:(train|eval|export|infer)|train_log:\w+|trained_weights|weights_flag|exported_model"
    r"|serving_passed|predict_judged|device_not_forced|results_log|loss_judged)$"
)
STAGES = ("train", "eval", "export", "infer")


class DataError(ValueError):
    """A catalogue or repos file that does not hold what the benchmark reads."""


@dataclass(frozen=True)
class SeenIn:
    repo: str
    what: str


@dataclass(frozen=True)
class Kind:
    """One silent-failure kind: where it comes from, what ought to catch it, how it is planted."""

    id: str
    title: str
    description: str
    seen_in: tuple[SeenIn, ...]
    source: str
    expect: tuple[str, ...]  # rule ids that ought to FAIL
    expect_notes: tuple[str, ...]  # regexes over the report's notes that count as calling it out
    missing_rule: str
    needs: tuple[str, ...]
    silent: tuple[str, ...]  # stages that must still pass once planted
    injector: str
    reuse_run: bool
    # (rule id, key of its data): the plant shows only where that data differs from the clean repo's (what
    # predict printed, say); where it does not, the plant had no effect there
    observe: tuple[str, str] | None = None


@dataclass(frozen=True)
class Prepare:
    """An edit a repo needs before anything of it runs here (the same for the clean run and every variant)."""

    file: str
    replace: str
    with_: str
    why: str


@dataclass(frozen=True)
class Repo:
    """A repo of the benchmark: where it comes from, tipc's switches for it, its ground truth."""

    name: str
    source: str  # "demo" (examples/lenet_digits) or "tarball" (<repos dir>/<name>.tar.gz)
    python: str  # "tipc" (tipc's own interpreter) or "repos" (.venv-repos)
    switches: tuple[str, ...]
    prepare: tuple[Prepare, ...]
    native: dict[str, str]  # kind id -> what the unmodified repo shows
    legit: dict[str, str]  # rule id -> why it rightly fails (or warns) on the unmodified repo


def _load(path: Path, schema: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise DataError(f"{path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("schema") != schema:
        raise DataError(f"{path}: expected a mapping with schema: {schema}")
    return data


def _strs(where: str, value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DataError(f"{where}: {key} must be a list of strings, got {value!r}")
    return tuple(value)


def _str(where: str, entry: dict[str, Any], key: str, default: str | None = None) -> str:
    value = entry.get(key, default)
    if not isinstance(value, str):
        raise DataError(f"{where}: {key} must be a string, got {value!r}")
    return value.strip()


def _check_keys(where: str, entry: Any, allowed: set[str]) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise DataError(f"{where}: expected a mapping, got {entry!r}")
    unknown = sorted(set(entry) - allowed)
    if unknown:
        raise DataError(f"{where}: unknown key(s) {unknown}; expected some of {sorted(allowed)}")
    return entry


_KIND_KEYS = {
    "id",
    "title",
    "description",
    "seen_in",
    "source",
    "expect",
    "expect_notes",
    "missing_rule",
    "needs",
    "silent",
    "injector",
    "reuse_run",
    "observe",
}


def _kind(where: str, raw: Any) -> Kind:
    entry = _check_keys(where, raw, _KIND_KEYS)
    seen = []
    for i, s in enumerate(entry.get("seen_in") or []):
        item = _check_keys(f"{where} seen_in[{i}]", s, {"repo", "what"})
        seen.append(SeenIn(_str(where, item, "repo"), _str(where, item, "what")))
    needs = _strs(where, entry.get("needs"), "needs")
    bad = [n for n in needs if not NEEDS.match(n)]
    if bad:
        raise DataError(f"{where}: unknown need(s) {bad}")
    silent = _strs(where, entry.get("silent"), "silent")
    if any(s not in STAGES for s in silent):
        raise DataError(f"{where}: silent names stages among {STAGES}, got {list(silent)}")
    expect = _strs(where, entry.get("expect"), "expect")
    expect_notes = _strs(where, entry.get("expect_notes"), "expect_notes")
    missing = _str(where, entry, "missing_rule", "")
    if not expect and not missing:
        raise DataError(
            f"{where}: a kind no rule is expected to catch says what rule is missing (missing_rule)"
        )
    reuse = entry.get("reuse_run", False)
    if not isinstance(reuse, bool):
        raise DataError(f"{where}: reuse_run must be true or false")
    return Kind(
        id=_str(where, entry, "id"),
        title=_str(where, entry, "title"),
        description=" ".join(_str(where, entry, "description").split()),
        seen_in=tuple(seen),
        source=_str(where, entry, "source", ""),
        expect=expect,
        expect_notes=expect_notes,
        missing_rule=" ".join(missing.split()),
        needs=needs,
        silent=silent,
        injector=_str(where, entry, "injector"),
        reuse_run=reuse,
        observe=_observe(where, entry.get("observe")),
    )


def _observe(where: str, value: Any) -> tuple[str, str] | None:
    if value is None:
        return None
    item = _check_keys(f"{where} observe", value, {"rule", "data"})
    return _str(where, item, "rule"), _str(where, item, "data")


def load_catalogue(path: Path = CATALOGUE) -> tuple[Kind, ...]:
    data = _load(path, "tipc-bench.silent-catalogue/1")
    kinds = tuple(_kind(f"{path} kinds[{i}]", k) for i, k in enumerate(data.get("kinds") or []))
    ids = [k.id for k in kinds]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise DataError(f"{path}: duplicate kind id(s) {dupes}")
    return kinds


def _mapping(where: str, value: Any, key: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise DataError(f"{where}: {key} must map names to strings")
    return {k: " ".join(v.split()) for k, v in value.items()}


def _repo(where: str, raw: Any, kind_ids: set[str]) -> Repo:
    entry = _check_keys(where, raw, {"name", "source", "python", "switches", "prepare", "native", "legit"})
    source = _str(where, entry, "source")
    python = _str(where, entry, "python")
    if source not in ("demo", "tarball") or python not in ("tipc", "repos"):
        raise DataError(f"{where}: source is demo or tarball, python is tipc or repos")
    prepares = []
    for i, p in enumerate(entry.get("prepare") or []):
        item = _check_keys(f"{where} prepare[{i}]", p, {"file", "replace", "with", "why"})
        prepares.append(
            Prepare(
                _str(where, item, "file"),
                _str(where, item, "replace"),
                _str(where, item, "with"),
                _str(where, item, "why"),
            )
        )
    native = _mapping(where, entry.get("native"), "native")
    unknown = sorted(set(native) - kind_ids)
    if unknown:
        raise DataError(f"{where}: native names unknown kind(s) {unknown}")
    return Repo(
        name=_str(where, entry, "name"),
        source=source,
        python=python,
        switches=_strs(where, entry.get("switches"), "switches"),
        prepare=tuple(prepares),
        native=native,
        legit=_mapping(where, entry.get("legit"), "legit"),
    )


def load_repos(path: Path = REPOS, kinds: tuple[Kind, ...] | None = None) -> tuple[Repo, ...]:
    data = _load(path, "tipc-bench.silent-repos/1")
    ids = {k.id for k in (kinds if kinds is not None else load_catalogue())}
    return tuple(_repo(f"{path} repos[{i}]", r, ids) for i, r in enumerate(data.get("repos") or []))
