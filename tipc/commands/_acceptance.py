"""The chains `tipc check` runs after the basic one when a rule reads them (seed 004 §4.1.3, §4.2.3):

- `documented`: the commands the repo's docs give (tipc.planning.documented), run in the same sandbox with the
  chain's switches and their own time budget (`--docs-step-timeout`, `--docs-timeout`);
- `pretrained`: the same config in whole_infer mode, which exports the provided weights (the config's
  infer_model slot) and infers with them: predict == infer on the pretrained model reads its record. Where the
  dialect logs every mode to one folder it runs under `<output>/tipc_pretrained`, so the basic chain's logs
  stay what the other rules read.

A rule asks for a chain with a `chain:` argument (tipc.judge.rules.evaluate.chains_named).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.core.errors import UserError
from tipc.core.steps import Mode
from tipc.planning import DOCS_STEP_TIMEOUT_S, DOCS_TIMEOUT_S

if TYPE_CHECKING:
    from tipc.core.steps import Overrides, Plan
    from tipc.execute.record import RunRecord
    from tipc.execute.sandbox import SandboxOptions
    from tipc.planning.documented.model import Documented

DOCUMENTED = "documented"
PRETRAINED = "pretrained"
BACKBONES = "backbones"  # one chain per backbone config, recorded as `backbone:<config>`
PRETRAINED_MODE = Mode.WHOLE_INFER


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("documented commands (seed 004 §4.1.3: following the docs)")
    group.add_argument(
        "--docs-step-timeout",
        type=float,
        default=DOCS_STEP_TIMEOUT_S,
        metavar="S",
        help="time budget of each documented command (default: %(default)g s); a training still running "
        "then is stopped and counted as run",
    )
    group.add_argument(
        "--docs-timeout",
        type=float,
        default=DOCS_TIMEOUT_S,
        metavar="S",
        help="time budget of all documented commands together (default: %(default)g s)",
    )


def check_arguments(args: argparse.Namespace) -> None:
    for name in ("docs_step_timeout", "docs_timeout"):
        value = getattr(args, name, None)
        if value is not None and not 0 < value < float("inf"):
            raise UserError(f"--{name.replace('_', '-')} must be a positive number of seconds")


@dataclass
class Extra:
    """The extra chains one check runs, planned before anything runs."""

    documented: Documented | None = None
    pretrained: Plan | None = None
    backbones: dict[str, Plan] = field(default_factory=dict)  # `backbone:<config>` -> its lite plan
    notes: list[str] = field(default_factory=list)

    def binds(self) -> dict[str, str]:
        out: dict[str, str] = {}
        if self.documented is not None:
            out[DOCUMENTED] = self.documented.plan.output_dir
        if self.pretrained is not None:
            out[PRETRAINED] = self.pretrained.output_dir
        for i, plan in enumerate(self.backbones.values()):
            out[f"backbone{i}"] = plan.output_dir
        return out

    def named(self) -> list[tuple[str, Plan]]:
        found = [(DOCUMENTED, self.documented.plan)] if self.documented is not None else []
        if self.pretrained is not None:
            found.append((PRETRAINED, self.pretrained))
        return [*found, *self.backbones.items()]

    def plans(self) -> list[Plan]:
        return [plan for _, plan in self.named()]


def plan_extra(
    args: argparse.Namespace,
    repo: Path,
    config: Path,
    chains: set[str],
    the_plan: Plan,
    overrides: Overrides,
    planner: Callable[..., Plan],
    sandbox_options: SandboxOptions | None,
    timeouts: Mapping[str, float],
) -> Extra:
    extra = Extra()
    in_place = sandbox_options is None or sandbox_options.backend == "none"
    if DOCUMENTED in chains:
        from tipc.commands._upfront import gpu_present
        from tipc.planning.documented.plan import plan_documented

        extra.documented = plan_documented(
            repo,
            model_name=the_plan.model_name,
            config=config,
            overrides=overrides,
            sandboxed=not in_place,
            network=bool(getattr(args, "network", False)),
            gpus=gpu_present(),
        )
    if PRETRAINED in chains and the_plan.mode != PRETRAINED_MODE:
        extra.pretrained, notes = _pretrained_plan(
            args, repo, config, the_plan, overrides, planner, in_place, timeouts
        )
        extra.notes.extend(notes)
    if BACKBONES in chains:
        extra.backbones, notes = _backbone_plans(
            args, repo, config, the_plan, overrides, planner, in_place, timeouts
        )
        extra.notes.extend(notes)
    return extra


def _backbone_plans(
    args: argparse.Namespace,
    repo: Path,
    config: Path,
    the_plan: Plan,
    overrides: Overrides,
    planner: Callable[..., Plan],
    in_place: bool,
    timeouts: Mapping[str, float],
) -> tuple[dict[str, Plan], list[str]]:
    from tipc.commands import _sandboxed
    from tipc.core.errors import TipcError
    from tipc.planning.planner import isolate
    from tipc.planning.relocate import relocate_output

    plans: dict[str, Plan] = {}
    notes: list[str] = []
    used = {the_plan.output_dir.strip("/")}
    from tipc.planning.documented.configs import backbone_configs

    for i, (name, path) in enumerate(c for c in backbone_configs(repo) if c[1].resolve() != config.resolve()):
        rel = path.relative_to(repo).as_posix()
        try:
            plan = planner(path, args.mode, repo=repo, overrides=overrides, dialect=None)
        except TipcError as exc:
            notes.append(f"backbone {name}: {rel} cannot be planned: {exc}")
            continue
        if in_place:
            plan = isolate(plan)
        out = plan.output_dir.strip("/")
        if any(out == u or out.startswith(u + "/") or u.startswith(out + "/") for u in used):
            plan = relocate_output(plan, f"{the_plan.output_dir.strip('/')}/tipc_backbone_{i}")
        used.add(plan.output_dir.strip("/"))
        plan, more = _sandboxed.with_prepare(plan, _sandboxed.chain_options(args))
        notes.extend(more)
        plan = _sandboxed.with_stage_args(plan, _sandboxed.stage_args(_sandboxed.chain_options(args)))
        plans[f"backbone:{rel}"] = _sandboxed.with_stage_timeouts(plan, timeouts)
    return plans, notes


def _pretrained_plan(
    args: argparse.Namespace,
    repo: Path,
    config: Path,
    the_plan: Plan,
    overrides: Overrides,
    planner: Callable[..., Plan],
    in_place: bool,
    timeouts: Mapping[str, float],
) -> tuple[Plan, list[str]]:
    from tipc.commands import _sandboxed
    from tipc.planning.planner import isolate
    from tipc.planning.relocate import relocate_output

    plan = planner(config, PRETRAINED_MODE, repo=repo, overrides=overrides, dialect=args.dialect)
    if in_place:
        plan = isolate(plan)
    out, basic = plan.output_dir.strip("/"), the_plan.output_dir.strip("/")
    if out == basic or out.startswith(basic + "/") or basic.startswith(out + "/"):
        plan = relocate_output(plan, f"{basic}/tipc_{PRETRAINED}")
    chain = replace(_sandboxed.chain_options(args), mode=PRETRAINED_MODE)
    plan, notes = _sandboxed.with_prepare(plan, chain)
    plan = _sandboxed.with_stage_args(plan, _sandboxed.stage_args(chain))
    return _sandboxed.with_stage_timeouts(plan, timeouts), notes


def run_extra(
    args: argparse.Namespace,
    repo: Path,
    extra: Extra,
    run: Callable[[Plan, dict[str, object]], RunRecord],
    find: Callable[[Path, Plan], Path | None],
    load: Callable[[Path], RunRecord],
    notes: list[str],
) -> dict[str, RunRecord]:
    """The records of the extra chains (reused with --reuse-run when one is found), by chain name."""
    records: dict[str, RunRecord] = {}
    for name, plan in (
        (DOCUMENTED, extra.documented.plan if extra.documented else None),
        (PRETRAINED, extra.pretrained),
    ):
        if plan is None:
            continue
        record = None
        if getattr(args, "reuse_run", False):
            found = find(repo, plan)
            if found is not None:
                record = load(found)
                notes.append(f"{name} chain: reused the run record {found}")
        if record is None:
            options: dict[str, object] = {}
            if name == DOCUMENTED:
                options = {"step_timeout_s": args.docs_step_timeout, "run_timeout_s": args.docs_timeout}
            record = run(plan, options)
        ran = sum(1 for r in record.results if r.started is not None)
        failed = sum(1 for r in record.results if not r.status.ok and r.started is not None)
        notes.append(
            f"{name} chain ({plan.output_dir}): {len(plan.steps)} step(s), {ran} ran, {failed} did not pass"
        )
        records[name] = record
    return records
