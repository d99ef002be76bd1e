"""The documented commands of a repo as a plan (`plan_documented` -> `Documented`, chain "documented"):
the docs read in order through `_Planner`, `--device cpu` applied to the steps, the plan's folders named.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from tipc.core.steps import Overrides, Plan
from tipc.planning.docs_vocab import Vocabulary
from tipc.planning.docs_vocab import load as load_vocabulary
from tipc.planning.documented.configs import lite_values
from tipc.planning.documented.model import CHAIN, MODE, Documented
from tipc.planning.documented.planner import _Planner
from tipc.planning.documented.reading import doc_paths


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "model"


def plan_documented(
    repo: Path,
    *,
    model_name: str,
    config: Path | None = None,
    overrides: Overrides = Overrides(),  # noqa: B008 - frozen value
    sandboxed: bool = True,
    network: bool = False,
    gpus: bool | None = None,
    vocab: Vocabulary | None = None,
) -> Documented:
    """The documented commands of `repo` as a plan (chain "documented"); `config` is the TIPC config whose
    lite data stands in for a full dataset the repo does not ship; `gpus`: whether this machine has a GPU
    (False: a multi-device launch is not run here; None: not known)."""
    repo = Path(repo).resolve()
    vocab = vocab or load_vocabulary()
    config_rel = ""
    if config is not None:
        try:
            config_rel = Path(config).resolve().relative_to(repo).as_posix()
        except ValueError:
            config_rel = str(config)
    planner = _Planner(
        repo=repo,
        vocab=vocab,
        overrides=overrides,
        lite=lite_values(config, repo),
        config_rel=config_rel,
        sandboxed=sandboxed,
        network=network,
        gpus=gpus,
    )
    docs = doc_paths(repo, vocab)
    planner._readme = docs[0] if docs and "/" not in docs[0] else ""
    for doc in docs:
        planner.read(doc)
    steps = tuple(planner.steps)
    notes = list(planner.notes)
    if overrides.device == "cpu":
        from tipc.planning.device_flags import add_cpu_flags

        steps, findings = add_cpu_flags(steps, repo, "documented commands")
        notes.extend(f.message for f in findings)
    output_dir = f"test_tipc/output/{_safe(model_name)}/{MODE}"
    plan = Plan(
        config_path=str(config) if config is not None else "",
        repo=str(repo),
        mode=MODE,
        dialect=CHAIN,
        model_name=model_name,
        output_dir=output_dir,
        results_log=f"{output_dir}/results_documented.log",
        status_format="template",
        steps=steps,
        overrides=overrides,
        chain=CHAIN,
    )
    commands = tuple(
        replace(c, cwd=next((s.cwd for s in steps if s.id == c.step_id), c.cwd)) if c.step_id else c
        for c in planner.commands
    )
    return Documented(plan, commands, tuple(planner.substitutions), tuple(dict.fromkeys(notes)), tuple(docs))
