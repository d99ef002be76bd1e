"""`tipc plan CONFIG|REPO --mode MODE`: the commands the repo's own TIPC script would run, in order. A repo
folder stands for its one train_infer_python config, as for `tipc run` and `tipc check`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tipc.commands import add_mode, positive_int

if TYPE_CHECKING:
    from pathlib import Path

    from tipc.core.steps import Mode, Plan


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "config",
        metavar="CONFIG|REPO",
        help="a train_infer_python.txt-family config, or a repo folder (its one train_infer_python config)",
    )
    add_mode(parser)
    parser.add_argument(
        "--chain",
        choices=("auto", "train_infer_python", "serving"),
        default="auto",
        help="which chain the config drives (default: detected from the config); a mismatch is an error",
    )
    parser.add_argument("--repo", help="folder the script runs from (default: the parent of test_tipc/)")
    parser.add_argument("--dialect", help="dialect profile to read the config with (default: detected)")
    parser.add_argument("--device", choices=("cpu",), help="rewrite device slots to their CPU form in memory")
    parser.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a slot by config key (e.g. Global.epoch_num) or field name (e.g. epoch); repeatable",
    )
    parser.add_argument(
        "--isolated",
        action="store_true",
        help="show what `tipc run` executes: writes outside the output folder redirected into it",
    )
    parser.add_argument(
        "--observe",
        action="store_true",
        help="run the repo's own test_train_inference_python.sh on a throw-away copy with recording "
        "stand-ins and show the commands it runs, with every difference from the profile plan (TIPC040)",
    )
    parser.add_argument(
        "--max-steps",
        type=positive_int,
        metavar="N",
        help="stop planning after N steps per mode (default 1000, or TIPC_MAX_STEPS); TIPC270 says when",
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    import json
    import sys
    from pathlib import Path

    from tipc.commands._target import parse_sets
    from tipc.core.errors import UserError
    from tipc.core.steps import Overrides
    from tipc.planning.planner import format_plan, isolate, plan

    if Path(args.config).is_dir():  # a repo, as every other verb takes: its config, as they pick it
        from tipc.commands._target import resolve_target
        from tipc.config.discover import find_configs

        if not find_configs(Path(args.config)):
            raise UserError(
                f"{args.config}: expected a config file or a repo folder with test_tipc/configs; "
                "this folder has no train_infer_python config"
            )
        repo, config = resolve_target(args.config, None)
        args.repo = args.repo or str(repo)
        args.config = str(config)
    if args.chain != "auto":
        from tipc.config.discover import classify_chain
        from tipc.config.parse import parse_file

        found = classify_chain(Path(args.config), parse_file(Path(args.config)))
        if (found == "serving") != (args.chain == "serving"):
            raise UserError(f"{args.config}: --chain {args.chain}, but this config drives the {found} chain")
    if args.repo and not Path(args.repo).is_dir():
        raise UserError(f"{args.repo}: --repo must be a folder (the one the script runs from)")
    from tipc.core.steps import DEFAULT_MODE, SERVING_MODE

    mode: Mode
    if args.mode:
        mode = args.mode
    elif args.chain == "auto":
        from tipc.planning.planner import default_mode

        mode = default_mode(Path(args.config))  # a serving config plans serving_infer
    else:
        mode = SERVING_MODE if args.chain == "serving" else DEFAULT_MODE
    if args.observe:
        return _observe(args, mode)
    result = plan(
        Path(args.config),
        mode,
        repo=Path(args.repo) if args.repo else None,
        overrides=Overrides(device=args.device, sets=parse_sets(args.sets)),
        dialect=args.dialect,
        max_steps=args.max_steps,
    )
    result = _unobserved_note(result, Path(args.repo) if args.repo else None)
    _say_upfront(result, Path(args.config), args.device)
    if args.isolated:
        result = isolate(result)
    if args.format == "json":
        sys.stdout.write(json.dumps(result.to_json(), indent=2) + "\n")
    else:
        sys.stdout.write(format_plan(result))
    return 0


def _say_upfront(result: Plan, config: Path, device: str | None) -> None:
    """On stderr, before the plan: a missing interpreter, no Paddle, GPU steps without a GPU, as `tipc run`
    would decide (with no --python: `tipc plan` has none)."""
    import sys

    from tipc.commands import _upfront
    from tipc.commands._target import choose_python, config_pythons

    if result.chain != "train_infer_python" and not result.steps:
        return
    written = config_pythons(config)
    choice = choose_python(None, written)
    found = _upfront.lines(result, python=choice.python, given=None, written=written, device=device)
    _upfront.say(found, sys.stderr)


def _unobserved_note(result: Plan, repo: Path | None) -> Plan:
    """The profile plan of a repo whose script `tipc run` would observe (an edited or unknown copy): says
    that run executes what the script runs, which `tipc plan --observe` shows (nothing of the repo runs
    here)."""
    from dataclasses import replace
    from pathlib import Path

    from tipc.config.detect import SCRIPT
    from tipc.config.discover import find_repo_root
    from tipc.core.findings import Finding, Level
    from tipc.planning.observe.identity import script_identity, tipc_wrapper

    root = repo or find_repo_root(Path(result.config_path))
    if result.chain != "train_infer_python" or not (root / SCRIPT).is_file():
        return result
    if script_identity(root) is not None or tipc_wrapper(root) is not None:
        return result
    note = Finding(
        result.config_path,
        0,
        0,
        Level.WARNING,
        "TIPC044",
        f"{SCRIPT} is not a known dialect (an edited or unknown copy): `tipc run` and `tipc check` run "
        f"the commands observed from it, not this {result.dialect} profile plan; `tipc plan --observe` "
        "shows them",
    )
    return replace(result, findings=(*result.findings, note))


def _observe(args: argparse.Namespace, mode: Mode) -> int:
    import json
    import sys
    from dataclasses import replace
    from pathlib import Path

    from tipc.commands._target import parse_sets
    from tipc.config.detect import SCRIPT
    from tipc.config.discover import find_repo_root
    from tipc.core.errors import UserError
    from tipc.core.steps import Overrides
    from tipc.execute.observation import observe
    from tipc.planning.observe.choose import choose_plan
    from tipc.planning.observe.crosscheck import cross_check
    from tipc.planning.observe.identity import script_identity
    from tipc.planning.observe.interpret import observation_json
    from tipc.planning.planner import format_plan, isolate, plan

    config = Path(args.config)
    repo = Path(args.repo) if args.repo else find_repo_root(config)
    overrides = Overrides(device=args.device, sets=parse_sets(args.sets))
    profile = plan(config, mode, repo=repo, overrides=overrides, dialect=args.dialect)
    if profile.chain != "train_infer_python":
        raise UserError(
            f"{config}: --observe runs test_train_inference_python.sh; this is a {profile.chain} config"
        )
    if not (repo / SCRIPT).is_file():
        raise UserError(
            f"{repo / SCRIPT}: no script to observe (the plan comes from the {profile.dialect} profile)"
        )
    obs = observe(config, mode, repo=repo, overrides=overrides, dialect=profile.dialect)
    diffs = cross_check(profile, obs.steps)
    # what `tipc run` executes: the observed plan whenever it differs from the profile's
    runs = choose_plan(profile, obs, known=script_identity(repo), overrides=overrides, repo=repo)
    if not runs.steps:
        which = "no step (the script runs nothing in this mode)"
    elif any(f.code == "TIPC041" for f in runs.findings):
        which = "the observed plan"
    else:
        which = f"the {profile.dialect} profile plan (the script agrees with it)"
    if args.isolated:
        obs = replace(obs, steps=isolate(obs.steps))
        runs = isolate(runs)
    if args.format == "json":
        data = observation_json(obs)
        data["cross_check"] = [f.to_json() for f in diffs]
        data["profile_dialect"] = profile.dialect
        data["runs"] = {"which": which, "plan": runs.to_json()}
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return 0
    stopped = ", stopped at the timeout" if obs.timed_out else ""
    shown = replace(obs.steps, findings=obs.steps.findings + tuple(diffs))
    sys.stdout.write(
        f"observed: bash {SCRIPT} {config} {mode} on a throw-away copy of {repo} "
        f"({obs.duration_s:.2f} s, exit {obs.exit_code}{stopped})\n"
    )
    sys.stdout.write(format_plan(shown))
    sys.stdout.write(f"\n`tipc run` executes {which} ({len(runs.steps)} step(s)).\n")
    if obs.why_nothing:
        sys.stdout.write(f"\nwhy nothing runs: {obs.why_nothing}\n")
    verdict = (
        f"{len(diffs)} difference(s) from the {profile.dialect} profile plan (TIPC040 above)"
        if diffs
        else f"the {profile.dialect} profile plan agrees with the script"
    )
    sys.stdout.write(f"cross-check: {verdict}\n")
    return 0
