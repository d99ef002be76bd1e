"""Seed 002 §2.2.2 / seed 004 §4.1.2: the lite data the TIPC chain trains on is in the repo.

The data is found by what the config reads, not by the name `lite_data`: the data-path slots of the train
block (`--data-path:./lite_data`, `--data_dir:lite_data`, mode-keyed values take the lite_train_lite_infer
entry) and the data options of the train and eval commands (`--data_dir ./test_tipc/data/Set2/`,
`-o Train.dataset.data_dir=...`). Each such path must exist in the repo, or be a member of an archive the repo
ships (a prepare step extracts `test_images/lite_data.tar` into `./lite_data`).

Verdicts: PASS when every path is there (evidence: the config line and where the data is); FAIL naming the
config line of a path that is neither in the repo nor in any archive of it; N-A when the config names no data
path (the rule then falls back to the archive-by-name check). A command option whose value is one word that is
no path of the repo (`--data=CUB_TINY`, `--dataset bird_tiny`) names a dataset, not a path: it is noted, not
looked for. Args: config (a repo-relative config path;
default the run's config, else every test_tipc/configs/**/train_infer_python*.txt).
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.core.steps import DEFAULT_MODE
from tipc.core.yamlschema import Field, Map
from tipc.judge.checks._common import argv_options, norm_key, outcome
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.registry import REPO_PATH, Args, arg_str, registered

if TYPE_CHECKING:
    import yaml

# A key naming data the script reads: a data word, and a path-like ending (`data_type` is not a path).
_DATA_WORD = re.compile(r"data|dataset|train|val|eval|test|image|img|label|anno")
_PATH_END = re.compile(
    r"(?:^|_)(?:dir|dirs|path|paths|root|file|files|list|folder)$|^(?:data|dataset|data_root)$"
)
_NOT_DATA = re.compile(r"model|output|save|log|weight|pretrain|checkpoint|ckpt|infer|export|result")
_COMMAND_KEYS = re.compile(r"^(?:norm_train|pact_train|fpgm_train|distill_train|trainer\d|eval)$")
_MODE = DEFAULT_MODE
_ARCHIVES = (".tar", ".tar.gz", ".tgz", ".zip")
_MAX_ARCHIVE_BYTES = 2 * 1024**3


@dataclass(frozen=True)
class DataRef:
    path: str  # as the config writes it
    line: int
    text: str
    config: str
    in_command: bool = False  # an option of a train/eval command (not a data slot of the config)

    @property
    def bare_name(self) -> bool:
        """A single word (`CUB_TINY`, `bird_tiny`): a dataset's name to a `--data`/`--dataset` option, unless
        the repo has a path of that name."""
        v = self.path.strip().strip("'\"")
        return self.in_command and not any(c in v for c in "/\\.~")


def _is_data_key(key: str) -> bool:
    k = norm_key(key)
    return bool(_DATA_WORD.search(k) and _PATH_END.search(k) and not _NOT_DATA.search(k))


def _lite_value(value: str) -> str:
    """`lite_train_lite_infer=./a|whole_train_whole_infer=./b` -> `./a`; a plain value as it is."""
    if "=" in value and any(part.split("=", 1)[0].strip() == _MODE for part in value.split("|")):
        for part in value.split("|"):
            k, _, v = part.partition("=")
            if k.strip() == _MODE:
                return v.strip()
    return value.strip()


def _path_like(value: str) -> bool:
    v = value.strip().strip("'\"")
    if not v or v.lower() in ("null", "none", "true", "false") or "://" in v or v.startswith("$"):
        return False
    try:
        float(v)
    except ValueError:
        return True
    return False


def data_refs(config: Path, rel_config: str) -> list[DataRef]:
    """The data paths a config's train block and train/eval commands read, with their lines."""
    try:
        lines = config.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    out: list[DataRef] = []
    section = ""
    for no, raw in enumerate(lines, start=1):
        line = raw.strip()
        if line.startswith("==="):
            section = line.strip("=").strip()
            continue
        if ":" not in line or line.startswith("#"):
            continue
        key, value = (x.strip() for x in line.split(":", 1))
        if section.startswith("train") and _is_data_key(key):
            v = _lite_value(value)
            if _path_like(v):
                out.append(DataRef(v, no, line, rel_config))
        if _COMMAND_KEYS.match(key) and value.lower() != "null":
            try:
                tokens = shlex.split(value)
            except ValueError:
                tokens = value.split()
            for k, v in argv_options(tokens):
                if _is_data_key(k) and _path_like(v):
                    out.append(DataRef(_lite_value(v), no, line, rel_config, in_command=True))
                elif norm_key(k) in _CONFIG_FLAGS and v.endswith((".yml", ".yaml")):
                    out.extend(yaml_refs(config, v))
    seen: set[str] = set()
    unique = []
    for ref in out:
        if ref.path not in seen:
            seen.add(ref.path)
            unique.append(ref)
    return unique


_CONFIG_FLAGS = frozenset({"c", "config", "cfg", "config_file"})
_MAX_YAML_BYTES = 1 << 20
_MAX_YAML_DEPTH = 20


def _repo_of(config: Path) -> Path:
    """The repo root a `test_tipc/configs/...` config belongs to (its commands run from there)."""
    for parent in config.resolve().parents:
        if parent.name == "test_tipc":
            return parent.parent
    return config.parent


def yaml_refs(config: Path, name: str) -> list[DataRef]:
    """The data paths of a model's YAML config a train or eval command names (`-c configs/x.yaml`,
    `--config config_for_tipc.yaml`): keys such as `train_image_path`, `image_root`, `data_dir`."""
    import yaml

    repo = _repo_of(config)
    path = (repo / name).resolve()
    if repo.resolve() not in path.parents or not path.is_file() or path.stat().st_size > _MAX_YAML_BYTES:
        return []
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        tree = yaml.load(text, Loader=_lenient_loader())
    except (OSError, yaml.YAMLError, RecursionError):
        return []
    lines = text.splitlines()
    rel = os.path.relpath(path, repo)
    out: list[DataRef] = []
    for key, value in _leaves(tree):
        if _is_data_key(key) and isinstance(value, str) and _path_like(value):
            no = next((i for i, ln in enumerate(lines, 1) if re.match(rf"\s*{re.escape(key)}\s*:", ln)), 0)
            out.append(DataRef(value, no, f"{key}: {value}", rel))
    return out


def _leaves(tree: object) -> list[tuple[str, object]]:
    """(key, value) of every scalar under a mapping key, shared nodes (YAML aliases) visited once."""
    out: list[tuple[str, object]] = []
    seen: set[int] = set()
    todo: list[tuple[object, int]] = [(tree, 0)]
    while todo:
        node, depth = todo.pop()
        if id(node) in seen or depth > _MAX_YAML_DEPTH:
            continue
        seen.add(id(node))
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            if isinstance(value, dict | list):
                todo.append((value, depth + 1))
            elif isinstance(key, str):
                out.append((key, value))
    return out


@functools.cache
def _lenient_loader() -> type[yaml.SafeLoader]:
    import yaml

    class Loader(yaml.SafeLoader):
        """The safe loader, reading a tag it does not know (PaddleDetection's `!Resize`) as plain data."""

    def plain(
        loader: yaml.SafeLoader, suffix: str, node: yaml.ScalarNode | yaml.SequenceNode | yaml.MappingNode
    ) -> object:
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node)
        return loader.construct_scalar(node)

    Loader.add_multi_constructor("!", plain)
    return Loader


def _archive_names(path: Path) -> list[str]:
    try:
        if path.stat().st_size > _MAX_ARCHIVE_BYTES:
            return []
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as zf:
                return zf.namelist()
        with tarfile.open(path, "r:*") as tf:
            return tf.getnames()
    except (OSError, tarfile.TarError, zipfile.BadZipFile, EOFError):
        return []


def _in_archives(repo: Path, archives: list[str], rel: str) -> str | None:
    """The archive holding `rel` (by its full repo-relative path, or by its last folder name at the top)."""
    want = rel.strip("/")
    base = want.split("/")[-1]
    for arch in archives:
        names = [re.sub(r"^(\./)+", "", n).rstrip("/") for n in _archive_names(repo / arch)]
        for n in names:
            if n in (want, base) or n.startswith((want + "/", base + "/")):
                return arch
    return None


def _ref_evidence(ref: DataRef, text: str) -> Evidence:
    """Evidence pointing at the config line that names the data path."""
    return Evidence(text, path=ref.config, line=ref.line, excerpt=ref.text)


def _configs(ctx: CheckContext, args: Args) -> list[Path]:
    """The configs to read: the `config` argument, else the run's config, else every shipped one."""
    from tipc.judge.checks._common import shipped_files

    repo = Path(ctx.repo)
    config_arg = arg_str(args, "config")
    if config_arg is None and ctx.record is not None:
        config_arg = str(ctx.record.plan.config_path)
    if config_arg is not None:
        p = Path(config_arg)
        p = p if p.is_absolute() else repo / p
        return [p] if p.is_file() else []
    found = shipped_files(repo, "test_tipc/configs/**/train_infer_python*.txt")
    return [repo / rel for rel in found] if isinstance(found, list) else []


class _Archives:
    """The repo's shipped archives, listed once and only when a path is not extracted."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._listed: list[str] | None = None

    def holding(self, rel: str) -> str | None:
        from tipc.judge.checks._common import shipped_files

        if self._listed is None:
            listed = shipped_files(self.repo, [f"**/*{ext}" for ext in _ARCHIVES])
            self._listed = listed if isinstance(listed, list) else []
        return _in_archives(self.repo, self._listed, rel)


def _locate(repo: Path, ref: DataRef, archives: _Archives) -> tuple[bool, Evidence]:
    """Whether the data `ref` names is there (in the repo or a shipped archive), with the evidence."""
    root = repo.resolve()
    target = (repo / ref.path).resolve() if not os.path.isabs(ref.path) else Path(ref.path)
    inside = target == root or root in target.parents
    rel = os.path.relpath(target, root) if inside else ref.path
    if inside and target.exists():
        kind = "folder" if target.is_dir() else "file"
        return True, _ref_evidence(ref, f"{ref.path}: {kind} {rel} is in the repo")
    if inside:
        arch = archives.holding(rel)
        if arch is not None:
            return True, _ref_evidence(
                ref, f"{ref.path}: not extracted, but the repo ships it in {arch} (prepare extracts it)"
            )
    where = "outside the repo" if not inside else "neither in the repo nor in any archive it ships"
    return False, _ref_evidence(ref, f"{ref.path}: the data the config reads is {where}")


def _name_evidence(ref: DataRef, refs: list[DataRef]) -> Evidence:
    """A command option naming a dataset by name: not a path, so not looked for; the data slot that holds
    it, if one ends with that name."""
    holder = next(
        (r for r in refs if not r.bare_name and Path(r.path.rstrip("/")).name.lower() == ref.path.lower()),
        None,
    )
    where = f"; the config's data path {holder.path} (line {holder.line}) holds it" if holder else ""
    return _ref_evidence(ref, f"{ref.path}: a dataset named on the command line, not a path{where}")


@registered("lite_data", args=Map({"config": Field(REPO_PATH)}))
def check_lite_data(ctx: CheckContext, **args: object) -> CheckOutcome:
    """The data the TIPC config reads is in the repo, or in an archive the repo ships."""
    configs = _configs(ctx, args)
    if not configs:
        return outcome(Verdict.NA, "no train_infer_python config to read the data paths from")
    repo = Path(ctx.repo)
    refs = []
    for cfg in configs:
        refs.extend(data_refs(cfg, os.path.relpath(cfg, repo)))
    if not refs:
        return outcome(
            Verdict.NA, "the config names no data path (no data slot or data option in its commands)"
        )
    archives = _Archives(repo)
    present: list[Evidence] = []
    missing: list[Evidence] = []
    named: list[DataRef] = []  # datasets named on a command line, not paths
    for ref in refs:
        found, evidence = _locate(repo, ref, archives)
        if not found and ref.bare_name:
            named.append(ref)
        else:
            (present if found else missing).append(evidence)
    names = [_name_evidence(ref, refs) for ref in named]
    paths = [r for r in refs if r not in named]
    if not paths:
        return CheckOutcome(
            Verdict.NA,
            f"the config names its data by name only, no data path to look for: {names[0].text}",
            tuple(names),
            {"names": [r.path for r in named]},
        )
    present.extend(names)
    data = {"paths": [r.path for r in paths], "names": [r.path for r in named]}
    if missing:
        return CheckOutcome(Verdict.FAIL, f"lite data missing: {missing[0].text}", (*missing, *present), data)
    return CheckOutcome(
        Verdict.PASS,
        f"the data the config reads is in the repo: {', '.join(r.path for r in refs)}",
        tuple(present),
        data,
    )
