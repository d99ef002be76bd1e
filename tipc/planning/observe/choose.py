"""What `tipc run` / `tipc check` execute, between the profile plan and the observed one (`plan_from`,
`choose_plan`): the observed plan where it differs (TIPC041 and the differences), else the profile plan with
the variables the script exported for its commands (`_with_script_env`); `--device cpu` on an observed plan
(`_on_cpu`); lint's misplaced-key errors judged against the plan that ran
(`misplaced_keys_read_as_commands`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from tipc.config.detect import SCRIPT
from tipc.core.findings import Finding, Level
from tipc.core.steps import Overrides, Plan, Step
from tipc.planning.observe.builder import _contains, _value_words
from tipc.planning.observe.crosscheck import cross_check
from tipc.planning.observe.identity import script_identity
from tipc.planning.observe.interpret import Observation


def plan_from(
    profile: Plan,
    obs: Observation | None,
    *,
    repo: Path,
    overrides: Overrides = Overrides(),  # noqa: B008 - frozen value
) -> Plan:
    """The plan `tipc run` / `tipc check` should execute (before `tipc.planning.planner.isolate`), from the
    profile plan and the observation of the repo's script (None: it was not observed):

    - no observation (no script in the repo, a serving config, a `tipc init` wrapper): the profile plan;
    - an observation that did not complete (timeout): the profile plan with the TIPC043 warning;
    - otherwise what the script was observed to run, whenever it differs from the profile plan, known
      script (fingerprint) or not: the observed plan, TIPC041 saying so and a TIPC040 per difference; a
      script that runs nothing gives a plan with no steps and a TIPC042 warning saying why. When the two
      agree, the profile plan (its steps are the script's, with the profile's names and slots).
    A script that attempted denied system calls while observed (TIPC045) says so in every case.
    """
    if obs is None:
        return profile
    return choose_plan(profile, obs, known=script_identity(Path(repo)), overrides=overrides, repo=Path(repo))


def choose_plan(
    profile: Plan, obs: Observation, *, known: tuple[str, str] | None, overrides: Overrides, repo: Path
) -> Plan:
    """Between the profile plan and what the script was observed to run: the one `tipc run` executes, with
    the differences as findings (see `plan_from`)."""
    where = str(profile.config_path)
    mine = tuple(f for f in obs.findings if f.code.startswith("TIPC04"))  # overrides are noted by `plan`
    if not obs.complete:
        return replace(profile, findings=profile.findings + mine)
    if not obs.steps.steps:
        return replace(profile, steps=(), findings=profile.findings + mine)
    diffs = tuple(cross_check(profile, obs.steps))
    if not diffs:
        said = ("TIPC042", "TIPC045")  # nothing run, calls denied: true of the profile plan too
        return replace(
            _with_script_env(profile, obs.steps),
            findings=profile.findings + tuple(f for f in mine if f.code in said),
        )
    if known is not None:
        what = f"{SCRIPT} is the {known[0]} script ({known[1]}), but it runs other commands than its profile"
    else:
        what = f"{SCRIPT} is not a known dialect (an edited or unknown copy)"
    summary = (
        f"{what}: tipc runs the {len(obs.steps.steps)} command(s) observed from it; {len(diffs)} "
        f"difference(s) from the {profile.dialect} profile plan follow"
    )
    note = Finding(where, 0, 0, Level.INFO, "TIPC041", summary)
    keep = tuple(f for f in profile.findings if f.code != "TIPC100")
    observed = replace(obs.steps, findings=(*keep, note, *diffs, *mine))
    return _on_cpu(observed, repo) if overrides.device == "cpu" else observed


def _with_script_env(profile: Plan, observed: Plan) -> Plan:
    """The profile plan with the variables the script exported for each of its commands (CAN_Paddle's
    `export PYTHONPATH=$PYTHONPATH:$CAN_DIR`), where the two plans run the same commands in the same order:
    without them the whole_infer export, whose commands matched the profile's, could not import the repo's
    own package, while the lite chain, observed, could."""
    if len(profile.steps) != len(observed.steps):
        return profile
    steps = []
    for mine, seen in zip(profile.steps, observed.steps, strict=True):
        have = {k for k, _ in mine.env} | set(mine.unset_env)
        added = tuple((k, v) for k, v in seen.env if k not in have)
        steps.append(replace(mine, env=(*mine.env, *added)) if added else mine)
    return replace(profile, steps=tuple(steps))


def misplaced_keys_read_as_commands(findings: Iterable[Finding], plan: Plan) -> list[Finding]:
    """Lint findings, judged against the plan that ran: a TIPC105 (a key in a slot meant for another) on a
    line whose value the plan runs as a command, built from that very line, is a warning, not an error. The
    script reads the line as the command it is whatever its key says (an observed plan shows that), so the
    key is a wrong label, not a shifted slot."""
    try:
        lines = Path(plan.config_path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return list(findings)
    out: list[Finding] = []
    for f in findings:
        ran = _runs_line(plan, lines, f.line) if f.code == "TIPC105" and f.level is Level.ERROR else None
        if ran is not None:
            f = Finding(
                f.path,
                f.line,
                f.col,
                Level.WARNING,
                f.code,
                f"{f.message}; but the repo's script reads this line as its {ran.stage.value} command "
                f"({ran.id} runs it), so only the key is misplaced",
            )
        out.append(f)
    return out


def _runs_line(plan: Plan, lines: list[str], line: int) -> Step | None:
    """The step the plan built from config line `line` whose command is that line's value."""
    if not 0 < line <= len(lines) or ":" not in lines[line - 1]:
        return None
    want = _value_words(lines[line - 1].split(":", 1)[1])
    if not want or not any(w.endswith(".py") or w == "-m" for w in want[:2]):
        return None
    for step in plan.steps:
        if line in step.source_lines and _contains(tuple(step.argv[1:]), want):
            return step
    return None


_LAUNCHERS = ("paddle.distributed.launch", "paddle.distributed.fleet.launch", "fleetrun")


def _on_cpu(observed: Plan, repo: Path) -> Plan:
    """--device cpu on an observed plan, as the profile planner does it: multi-GPU launch steps stay in the
    plan but are not applicable, and every other command gets the CPU form of its script's device flag."""
    from tipc.planning.device_flags import add_cpu_flags

    steps = []
    for step in observed.steps:
        launcher = next((w for w in step.argv if w in _LAUNCHERS or w.endswith("/fleetrun")), None)
        if launcher is not None and not step.not_applicable:
            step = replace(
                step,
                not_applicable=f"the script runs it through {launcher} (a multi-GPU launch); "
                "--device cpu runs on the CPU only",
            )
        steps.append(step)
    edited, findings = add_cpu_flags(tuple(steps), repo, observed.config_path)
    return replace(observed, steps=edited, findings=(*observed.findings, *findings))
