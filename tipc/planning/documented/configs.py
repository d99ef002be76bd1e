"""What the repo's TIPC configs give the documented chain: the lite values that stand in for a full dataset
the repo does not ship (`lite_values`), and the train configs that name a lightweight backbone
(`backbone_configs`).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from tipc.planning.docs_vocab import Vocabulary
from tipc.planning.docs_vocab import load as load_vocabulary
from tipc.planning.documented.reading import read_doc
from tipc.planning.documented.words import _options, norm_key

# ------------------------------------------------------------------------------------------ the config


def lite_values(config: Path | None, repo: Path) -> dict[str, tuple[str, int, str]]:
    """{normalised option key: (lite value, line, key as written)} from the TIPC config: its `-key:value`
    slots
    and the `--k=v` words of its commands; a `mode=value|...` slot gives its lite_train_lite_infer value."""
    out: dict[str, tuple[str, int, str]] = {}
    if config is None:
        return out
    text = read_doc(config, repo)
    if text is None:
        return out
    for number, raw in enumerate(text.splitlines(), start=1):
        key, sep, value = raw.strip().partition(":")
        if not sep or not value.strip():
            continue
        value = value.strip()
        if "lite_train_lite_infer=" in value:
            value = value.split("lite_train_lite_infer=", 1)[1].split("|", 1)[0]
        if key.startswith("-") and value.lower() != "null" and "|" not in value:
            out.setdefault(norm_key(key.lstrip("-")), (value, number, key.lstrip("-")))
        try:
            words = shlex.split(value)
        except ValueError:
            continue
        for k, v, _ in _options(words):
            if v and v.lower() != "null":
                out.setdefault(norm_key(k), (v, number, k))
    return out


def backbone_configs(repo: Path, vocab: Vocabulary | None = None) -> list[tuple[str, Path]]:
    """(backbone, config) of the repo's train configs that name a lightweight backbone of seed 004 §4.3.3, in
    their path or model_name."""
    from tipc.config.discover import find_configs

    vocab = vocab or load_vocabulary()
    out: list[tuple[str, Path]] = []
    for path in find_configs(repo):
        text = read_doc(path, repo) or ""
        model = next(
            (ln.split(":", 1)[1].strip() for ln in text.splitlines()[:8] if ln.startswith("model_name:")), ""
        )
        name = vocab.backbone_in(path.relative_to(repo).as_posix()) or vocab.backbone_in(model)
        if name is not None:
            out.append((name, path))
    return out
