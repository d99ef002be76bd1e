"""The closed registry of rule operators.

A ruleset can only name operators listed in `OPERATORS`; each declares its parameters (checked when the
ruleset loads) and returns a `CheckOutcome`. Operators never raise on a bad repo: a missing file, an
unreadable archive or an absent run record is an outcome. Operators that need the run (logs, agreement,
convergence) delegate to the check registry `tipc.judge.checks.CHECKS`, passed in through `OpEnv.checks` so
tests
and the lead's wiring choose what runs.
"""

from __future__ import annotations

import os
import re
import stat
import tarfile
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.registry import Args, arg_int, arg_opt_int, arg_str, arg_strs, arg_text
from tipc.judge.rules import markdown
from tipc.judge.rules.files import RepoFiles, glob_regex_ci
from tipc.judge.rules.model import CheckSpec

if TYPE_CHECKING:
    from tipc.core.steps import Plan, Step
    from tipc.execute.record import RunRecord, StepResult

MAX_TEXT_BYTES = 4 * 1024 * 1024
MAX_LISTED = 10
CheckFn = Callable[..., CheckOutcome]


@dataclass(frozen=True)
class Param:
    """One operator parameter. kind: path, glob (str or list), regex, str, str_list, int, float, bool,
    mapping, checks (a list of check specs), choice:<a>|<b>."""

    kind: str
    required: bool = False
    default: object = None
    doc: str = ""


@dataclass
class OpEnv:
    """Everything an operator may look at. Built once per evaluation."""

    ctx: CheckContext
    checks: Mapping[str, CheckFn]
    files: RepoFiles
    templates_dir: Path | None = None
    evaluate: Callable[[CheckSpec], CheckOutcome] = field(default=lambda spec: _unwired(spec))

    @property
    def repo(self) -> Path:
        return Path(self.ctx.repo)


def _unwired(spec: CheckSpec) -> CheckOutcome:
    raise RuntimeError(f"operator {spec.op!r} evaluated without an evaluator")


@dataclass(frozen=True)
class Operator:
    name: str
    params: dict[str, Param]
    fn: Callable[[OpEnv, Args], CheckOutcome]
    doc: str


def _out(
    verdict: Verdict, summary: str, *evidence: Evidence, data: dict[str, object] | None = None
) -> CheckOutcome:
    return CheckOutcome(verdict, summary, tuple(evidence), data or {})


def _listing(paths: list[str]) -> str:
    shown = ", ".join(paths[:MAX_LISTED])
    return shown + (f" and {len(paths) - MAX_LISTED} more" if len(paths) > MAX_LISTED else "")


def _patterns(args: Args, key: str) -> tuple[str, ...]:
    """A glob parameter: one pattern or a list of them."""
    return tuple(arg_strs(args, key) or ())


def child_specs(args: Args) -> list[CheckSpec]:
    """A combinator's `checks` (the loader built them)."""
    value = args.get("checks")
    if isinstance(value, list | tuple) and all(isinstance(s, CheckSpec) for s in value):
        return [s for s in value if isinstance(s, CheckSpec)]
    raise TypeError(f"operator argument 'checks': expected check specs, got {value!r}")


def _read_text(path: Path, repo: Path) -> str | None:
    """The first MAX_TEXT_BYTES of a regular file of `repo`; None for anything else: a link leading out of
    the repo (its excerpts would show another file's lines), a FIFO (opening it would wait), a device."""
    real = os.path.realpath(path)
    if not Path(real).is_relative_to(os.path.realpath(repo)):
        return None
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(MAX_TEXT_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")


# --- files -------------------------------------------------------------------------------------------


def op_file_exists(env: OpEnv, args: Args) -> CheckOutcome:
    rel = arg_text(args, "path")
    kind = arg_text(args, "kind")
    target = env.repo / rel
    ok = {"file": target.is_file(), "dir": target.is_dir(), "any": target.exists()}[kind]
    noun = {"file": "file", "dir": "folder", "any": "path"}[kind]
    if ok:
        return _out(Verdict.PASS, f"{noun} {rel} exists", Evidence("exists", path=rel))
    if not target.exists():
        # `readme.md` is the README.md the spec names: the same file on a case-insensitive checkout.
        pool = {"file": env.files.files, "dir": env.files.dirs, "any": env.files.files + env.files.dirs}[kind]
        other = sorted(p for p in pool if p.lower() == rel.strip("/").lower())
        if other:
            return _out(
                Verdict.PASS,
                f"{noun} {rel} exists (spelled {other[0]})",
                Evidence(f"exists as {other[0]}", path=other[0]),
            )
    if target.exists():
        return _out(
            Verdict.FAIL, f"{rel} exists but is not a {noun}", Evidence(f"{rel} has the wrong type", path=rel)
        )
    return _out(Verdict.FAIL, f"{noun} {rel} is missing", Evidence(f"expected {noun} {rel} in the repo"))


def _count_verdict(count: int, args: Args) -> tuple[bool, str]:
    exactly, at_least, at_most = (arg_opt_int(args, k) for k in ("exactly", "at_least", "at_most"))
    if exactly is None and at_least is None and at_most is None:
        at_least = 1
    wanted = []
    ok = True
    if exactly is not None:
        ok &= count == exactly
        wanted.append(f"exactly {exactly}")
    if at_least is not None:
        ok &= count >= at_least
        wanted.append(f"at least {at_least}")
    if at_most is not None:
        ok &= count <= at_most
        wanted.append(f"at most {at_most}")
    return ok, " and ".join(wanted)


def op_glob_matches(env: OpEnv, args: Args) -> CheckOutcome:
    patterns = _patterns(args, "pattern")
    found = env.files.glob(patterns, include_dirs=bool(args["dirs"]))
    ok, wanted = _count_verdict(len(found), args)
    shown = " or ".join(patterns)
    numbers = (("matches", len(found)),)
    if ok:
        return _out(
            Verdict.PASS,
            f"{len(found)} match(es) for {shown}",
            Evidence(_listing(found) or "no matches", numbers=numbers),
        )
    return _out(
        Verdict.FAIL,
        f"{len(found)} match(es) for {shown}; expected {wanted}",
        Evidence(_listing(found) if found else f"nothing in the repo matches {shown}", numbers=numbers),
    )


def _archive_members(path: Path) -> list[str]:
    """Member names of a tar or zip archive; raises OSError/tarfile/zipfile errors on unreadable files."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            return zf.namelist()
    with tarfile.open(path, "r:*") as tf:
        return tf.getnames()


def op_archive_contains(env: OpEnv, args: Args) -> CheckOutcome:
    archive_patterns = _patterns(args, "archive")
    member_patterns = _patterns(args, "member")
    at_least = arg_int(args, "at_least", 1)
    archives = env.files.glob(archive_patterns)
    if not archives:
        return _out(
            Verdict.FAIL,
            f"no archive matches {' or '.join(archive_patterns)}",
            Evidence(f"expected an archive named like {' or '.join(archive_patterns)}"),
        )
    regexes = [glob_regex_ci(p) for p in member_patterns]
    evidence: list[Evidence] = []
    for rel in archives:
        try:
            names = _archive_members(env.repo / rel)
        except (OSError, tarfile.TarError, zipfile.BadZipFile, EOFError) as exc:
            evidence.append(Evidence(f"cannot read archive: {exc}", path=rel))
            continue
        cleaned = [re.sub(r"^(\./)+", "", n).rstrip("/") for n in names]
        hits = [n for n in cleaned if any(r.match(n) for r in regexes)]
        numbers = (("members", len(names)), ("matching", len(hits)))
        if len(hits) >= at_least:
            return _out(
                Verdict.PASS,
                f"{rel} holds {len(hits)} member(s) matching {' or '.join(member_patterns)}",
                Evidence(_listing(hits), path=rel, numbers=numbers),
            )
        evidence.append(
            Evidence(
                f"{len(hits)} of {len(names)} members match; first members: {_listing(cleaned)}",
                path=rel,
                numbers=numbers,
            )
        )
    return _out(
        Verdict.FAIL,
        f"no archive holds at least {at_least} member(s) matching {' or '.join(member_patterns)}",
        *evidence,
    )


def op_text_matches(env: OpEnv, args: Args) -> CheckOutcome:
    patterns = _patterns(args, "files")
    regex = re.compile(arg_text(args, "pattern"), re.IGNORECASE if args["ignore_case"] else 0)
    files = env.files.glob(patterns)
    if not files:
        return _out(Verdict.FAIL, f"no file matches {' or '.join(patterns)}", Evidence("nothing to search"))
    hits: list[Evidence] = []
    for rel in files:
        text = _read_text(env.repo / rel, env.repo)
        if text is None:
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if regex.search(line):
                hits.append(Evidence("matching line", path=rel, line=number, excerpt=line.strip()[:200]))
    if len(hits) >= arg_int(args, "at_least", 1):
        return _out(Verdict.PASS, f"{len(hits)} line(s) match /{args['pattern']}/", *hits[:MAX_LISTED])
    return _out(
        Verdict.FAIL,
        f"{len(hits)} line(s) match /{args['pattern']}/ in {_listing(files)}; "
        f"expected at least {args['at_least']}",
        *hits[:MAX_LISTED],
    )


# --- markdown ----------------------------------------------------------------------------------------


def _markdown_docs(env: OpEnv, patterns: tuple[str, ...]) -> list[tuple[str, markdown.MarkdownDoc]]:
    docs = []
    for rel in env.files.glob(patterns):
        text = _read_text(env.repo / rel, env.repo)
        if text is not None:
            docs.append((rel, markdown.parse(text)))
    return docs


def op_markdown_has_section(env: OpEnv, args: Args) -> CheckOutcome:
    patterns = _patterns(args, "files")
    regex = re.compile(arg_text(args, "heading"), re.IGNORECASE if args["ignore_case"] else 0)
    docs = _markdown_docs(env, patterns)
    if not docs:
        return _out(
            Verdict.FAIL, f"no Markdown file matches {' or '.join(patterns)}", Evidence("no document to read")
        )
    for rel, doc in docs:
        for heading in doc.headings:
            if regex.search(heading.text):
                return _out(
                    Verdict.PASS,
                    f"section '{heading.text}' found",
                    Evidence(
                        "heading",
                        path=rel,
                        line=heading.line,
                        excerpt="#" * heading.level + " " + heading.text,
                    ),
                )
    return _out(
        Verdict.FAIL,
        f"no heading matches /{args['heading']}/ in {_listing([rel for rel, _ in docs])}",
        *(
            Evidence(f"{len(doc.headings)} headings, none matching", path=rel)
            for rel, doc in docs[:MAX_LISTED]
        ),
    )


def op_markdown_has_command(env: OpEnv, args: Args) -> CheckOutcome:
    patterns = _patterns(args, "files")
    regex = re.compile(arg_text(args, "command"), re.IGNORECASE if args["ignore_case"] else 0)
    docs = _markdown_docs(env, patterns)
    if not docs:
        return _out(
            Verdict.FAIL, f"no Markdown file matches {' or '.join(patterns)}", Evidence("no document to read")
        )
    for rel, doc in docs:
        for code in doc.code:
            if regex.search(code.text):
                kind = "code block" if code.fenced else "inline code"
                return _out(
                    Verdict.PASS,
                    f"command /{args['command']}/ documented in {'a ' if code.fenced else ''}{kind}",
                    Evidence(kind, path=rel, line=code.line, excerpt=code.text.strip()[:200]),
                )
    return _out(
        Verdict.FAIL,
        f"no code block or inline code matches /{args['command']}/ in {_listing([rel for rel, _ in docs])}",
        Evidence("documented commands must appear in code (``` fences or `inline`)"),
    )


def op_markdown_has_image(env: OpEnv, args: Args) -> CheckOutcome:
    patterns = _patterns(args, "files")
    docs = _markdown_docs(env, patterns)
    if not docs:
        return _out(
            Verdict.FAIL, f"no Markdown file matches {' or '.join(patterns)}", Evidence("no document to read")
        )
    broken: list[Evidence] = []
    for rel, doc in docs:
        for image in doc.images:
            target = image.target.split("#", 1)[0].split("?", 1)[0]
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                if args["local_only"]:
                    continue
                return _out(
                    Verdict.PASS,
                    "document shows an image",
                    Evidence("remote image", path=rel, line=image.line, excerpt=image.target),
                )
            local = (
                (env.repo / rel).parent / target
                if not target.startswith("/")
                else env.repo / target.lstrip("/")
            )
            if local.is_file():
                return _out(
                    Verdict.PASS,
                    "document shows an image",
                    Evidence("image", path=rel, line=image.line, excerpt=image.target),
                )
            broken.append(
                Evidence("image file does not exist", path=rel, line=image.line, excerpt=image.target)
            )
    return _out(
        Verdict.FAIL,
        f"no usable image in {_listing([rel for rel, _ in docs])}"
        + (" (broken links only)" if broken else ""),
        *broken[:MAX_LISTED],
    )


# --- the run -----------------------------------------------------------------------------------------


def _tail(path: Path, repo: Path, lines: int = 15) -> str | None:
    text = _read_text(path, repo)
    if text is None:
        return None
    return "\n".join(text.splitlines()[-lines:])


def _record_of_chain(ctx: CheckContext, chain: str | None) -> RunRecord | None:
    """The run record of `chain` (CheckContext.records, or the main record when it is that chain)."""
    if chain is None:
        return ctx.record
    found = ctx.records.get(chain)
    if found is None and ctx.record is not None and getattr(ctx.record.plan, "chain", None) == chain:
        found = ctx.record
    return found


def _not_applicable(result: StepResult | None) -> bool:
    return (
        result is not None and result.status.value == "skipped" and "not applicable" in (result.reason or "")
    )


@dataclass(frozen=True)
class _StepSelector:
    """step_passed's selector: which chain's record, and which of its steps."""

    chain: str | None
    stage: str | None
    trainer: str | None
    step: str | None

    def selects(self, step: Step) -> bool:
        return (
            (self.stage is None or step.stage.value == self.stage)
            and (self.trainer is None or step.trainer == self.trainer)
            and (self.step is None or re.search(self.step, step.id) is not None)
            and step.stage.value != "prepare"  # the repo's prepare.sh is not a step of the chain it checks
        )

    def narrows(self) -> bool:
        """Whether any step selector is given (the chain alone selects every step)."""
        return self.stage is not None or self.trainer is not None or self.step is not None

    def label(self) -> str:
        parts = (
            f"chain={self.chain}" if self.chain else "",
            f"stage={self.stage}" if self.stage else "",
            f"trainer={self.trainer}" if self.trainer else "",
            f"step~{self.step}" if self.step else "",
        )
        return " ".join(x for x in parts if x) or "all steps"


def _unselected(plan: Plan, selector: _StepSelector, not_applicable: list[str]) -> CheckOutcome:
    """The outcome when no applicable step matches the selector."""
    what = selector.label()
    if not_applicable:
        return _out(Verdict.NA, f"every step for {what} is not applicable here ({', '.join(not_applicable)})")
    if not selector.narrows():
        # An empty chain verifies nothing; passing it would be a check that cannot fail.
        return _out(Verdict.FAIL, f"the plan has no steps in mode {plan.mode}: nothing was verified")
    return _out(Verdict.NA, f"no step planned for {what} in mode {plan.mode}")


def _unpassed_step(env: OpEnv, step: Step, result: StepResult) -> Evidence:
    """Evidence for a step that did not pass, with its log's tail when it ran."""
    ran = result.status.value in ("failed", "timeout", "interrupted")
    log = (result.log or step.log) if ran else None
    excerpt = _tail(env.repo / log, env.repo) if log else None
    return Evidence(
        f"{step.id}: {result.status.value}" + (f" ({result.reason})" if result.reason else ""),
        path=log,
        excerpt=excerpt,
        numbers=(("exit_code", result.exit_code), ("duration_s", result.duration_s)),
    )


def _step_results(env: OpEnv, record: RunRecord, selected: list[Step]) -> tuple[list[Evidence], int, float]:
    """(evidence for each step that did not pass, how many were skipped, total seconds)."""
    bad: list[Evidence] = []
    skipped = 0
    total_s = 0.0
    for step in selected:
        result = record.result(step.id)
        if result is None:
            bad.append(Evidence(f"{step.id}: no result recorded (the run stopped before it)"))
            continue
        total_s += result.duration_s or 0.0
        if result.status.value == "passed":
            continue
        if result.status.value == "skipped":
            skipped += 1
        bad.append(_unpassed_step(env, step, result))
    # Root causes first: a failed step explains the blocked ones after it.
    bad.sort(key=lambda e: 0 if any(k == "exit_code" and v is not None for k, v in e.numbers) else 1)
    return bad, skipped, total_s


def op_step_passed(env: OpEnv, args: Args) -> CheckOutcome:
    selector = _StepSelector(*(arg_str(args, k) for k in ("chain", "stage", "trainer", "step")))
    record = _record_of_chain(env.ctx, selector.chain)
    if record is None:
        if selector.chain is not None:
            return _out(Verdict.SKIP, f"the {selector.chain} chain was not run (no run record of it)")
        return _out(Verdict.SKIP, "the chain was not run (no run record)")
    plan = record.plan
    if args.get("mode") and plan.mode != args["mode"]:
        return _out(Verdict.SKIP, f"the run used mode {plan.mode}; this rule needs {args['mode']}")
    selected = [s for s in plan.steps if selector.selects(s)]
    # Steps planned but not applicable on this machine (a multi-GPU launch with --device cpu), and the
    # steps after them, are neither passed nor failed: they leave the verdict to the steps that ran.
    not_applicable = [s.id for s in selected if _not_applicable(record.result(s.id))]
    selected = [s for s in selected if s.id not in not_applicable]
    if not selected:
        return _unselected(plan, selector, not_applicable)
    what = selector.label()
    bad, skipped, total_s = _step_results(env, record, selected)
    numbers = (("steps", len(selected)), ("failed", len(bad)), ("seconds", round(total_s, 3)))
    if not bad:
        return _out(
            Verdict.PASS,
            f"{len(selected)} step(s) passed ({what})",
            Evidence(f"{len(selected)} step(s) passed", numbers=numbers),
        )
    if skipped == len(selected):
        return _out(Verdict.SKIP, f"every step for {what} was skipped", *bad[:MAX_LISTED])
    return _out(
        Verdict.FAIL, f"{len(bad)} of {len(selected)} step(s) did not pass ({what})", *bad[:MAX_LISTED]
    )


def delegate(env: OpEnv, name: str, args: Args) -> CheckOutcome:
    fn = env.checks.get(name)
    if fn is None:
        return _out(Verdict.SKIP, f"{name} check not available")
    outcome = fn(env.ctx, **args)
    if not isinstance(outcome, CheckOutcome):
        raise TypeError(f"check {name!r} returned {type(outcome).__name__}, not CheckOutcome")
    return outcome


def _given(args: Args, names: tuple[str, ...]) -> dict[str, object]:
    return {k: args[k] for k in names if args.get(k) is not None}


def op_log_has_fields(env: OpEnv, args: Args) -> CheckOutcome:
    return delegate(env, "log_fields", _given(args, ("fields", "require_eval", "step")))


def op_check(env: OpEnv, args: Args) -> CheckOutcome:
    given = args.get("args")
    return delegate(
        env,
        arg_text(args, "name"),
        {str(k): v for k, v in given.items()} if isinstance(given, Mapping) else {},
    )


def op_agreement_within(env: OpEnv, args: Args) -> CheckOutcome:
    return delegate(env, "agreement", _given(args, ("atol", "rtol", "cosine_min", "engines")))


def op_script_matches_template(env: OpEnv, args: Args) -> CheckOutcome:
    from tipc.judge.rules.templates import check_scripts

    return check_scripts(env.repo, arg_text(args, "template"), env.templates_dir)


# --- combinators -------------------------------------------------------------------------------------


def _combined(outcomes: list[CheckOutcome]) -> tuple[tuple[Evidence, ...], dict[str, object]]:
    evidence: list[Evidence] = []
    data: dict[str, object] = {}
    for o in outcomes:
        evidence.extend(o.evidence or (Evidence(f"{o.verdict.value}: {o.summary}"),))
        for k, v in o.data.items():
            data.setdefault(k, v)
    return tuple(evidence), data


def op_all_of(env: OpEnv, args: Args) -> CheckOutcome:
    outcomes = [env.evaluate(spec) for spec in child_specs(args)]
    verdicts = [o.verdict for o in outcomes]
    failing = [o for o in outcomes if o.verdict is Verdict.FAIL]
    if failing:
        evidence, data = _combined(failing)
        return CheckOutcome(Verdict.FAIL, "; ".join(o.summary for o in failing), evidence, data)
    evidence, data = _combined(outcomes)
    summary = "; ".join(o.summary for o in outcomes)
    if Verdict.WARN in verdicts:
        return CheckOutcome(Verdict.WARN, summary, evidence, data)
    if all(v is Verdict.NA for v in verdicts):
        return CheckOutcome(Verdict.NA, summary, evidence, data)
    if Verdict.SKIP in verdicts:
        return CheckOutcome(Verdict.SKIP, summary, evidence, data)
    return CheckOutcome(Verdict.PASS, summary, evidence, data)


def op_any_of(env: OpEnv, args: Args) -> CheckOutcome:
    outcomes = []
    for spec in child_specs(args):
        outcome = env.evaluate(spec)
        if outcome.verdict is Verdict.PASS:
            return outcome
        outcomes.append(outcome)
    verdicts = [o.verdict for o in outcomes]
    evidence, data = _combined(outcomes)
    summary = " / ".join(o.summary for o in outcomes)
    for verdict in (Verdict.WARN, Verdict.SKIP):
        if verdict in verdicts:
            return CheckOutcome(verdict, summary, evidence, data)
    if all(v is Verdict.NA for v in verdicts):
        return CheckOutcome(Verdict.NA, summary, evidence, data)
    return CheckOutcome(Verdict.FAIL, "none of the alternatives holds: " + summary, evidence, data)


def op_baseline(env: OpEnv, args: Args) -> CheckOutcome:
    """The run against its model CI baseline (tipc.judge.baseline): FAIL on a regression or missing metric."""
    from tipc.core.errors import ConfigError
    from tipc.judge.baseline.judge import judge_record, to_outcome

    if env.ctx.record is None:
        return _out(Verdict.SKIP, "no run record to compare with a baseline")
    given = arg_str(args, "dir") or ""
    directory = Path(given) if Path(given).is_absolute() else env.repo / (given or "test_tipc/baselines")
    try:
        outcome: CheckOutcome = to_outcome(judge_record(env.ctx.record, env.repo, directory))
    except ConfigError as exc:
        where = Evidence(exc.message, exc.path, exc.line)
        return _out(Verdict.FAIL, f"unreadable baseline: {exc.render()}", where)
    return outcome


# --- submission artefacts (seed 001 artefact 6) ---------------------------------------------------------


def op_imports_resolve(env: OpEnv, args: Args) -> CheckOutcome:
    from tipc.judge.rules.imports import missing_imports

    patterns = _patterns(args, "files")
    targets = env.files.glob(patterns)
    if not targets:
        return _out(Verdict.NA, f"no file matches {' or '.join(patterns)}", Evidence("nothing to read"))
    missing = missing_imports(env.repo, targets, env.files.files, env.files.dirs)
    if not missing:
        return _out(
            Verdict.PASS,
            f"every repo-local import and script of {len(targets)} file(s) resolves",
            Evidence(_listing(targets), numbers=(("files", len(targets)),)),
        )
    evidence = [Evidence(f"needs {m.what}, which the repo lacks", path=m.path, line=m.line) for m in missing]
    return _out(
        Verdict.FAIL,
        f"{len(missing)} import(s) or script(s) the notebooks/scripts need are missing: "
        + _listing(sorted({m.what for m in missing})),
        *evidence[:MAX_LISTED],
    )


_COUNTS = {
    "at_least": Param("int", doc="minimum number of matches"),
    "exactly": Param("int", doc="exact number of matches"),
    "at_most": Param("int", doc="maximum number of matches"),
}

OPERATORS: dict[str, Operator] = {
    op.name: op
    for op in (
        Operator(
            "file_exists",
            {"path": Param("path", required=True), "kind": Param("choice:any|file|dir", default="any")},
            op_file_exists,
            "a repo-relative path exists (kind: file, dir or any)",
        ),
        Operator(
            "glob_matches",
            {"pattern": Param("glob", required=True), "dirs": Param("bool", default=False), **_COUNTS},
            op_glob_matches,
            "the number of repo files matching a glob meets at_least/exactly/at_most (default at_least 1)",
        ),
        Operator(
            "archive_contains",
            {
                "archive": Param("glob", required=True),
                "member": Param("glob", required=True),
                "at_least": Param("int", default=1),
            },
            op_archive_contains,
            "a tar/zip archive matching `archive` lists members matching `member` (names only)",
        ),
        Operator(
            "text_matches",
            {
                "files": Param("glob", required=True),
                "pattern": Param("regex", required=True),
                "ignore_case": Param("bool", default=True),
                "at_least": Param("int", default=1),
            },
            op_text_matches,
            "lines of the matching files match a regex",
        ),
        Operator(
            "markdown_has_section",
            {
                "files": Param("glob", required=True),
                "heading": Param("regex", required=True),
                "ignore_case": Param("bool", default=True),
            },
            op_markdown_has_section,
            "a Markdown heading's text matches a regex",
        ),
        Operator(
            "markdown_has_command",
            {
                "files": Param("glob", required=True),
                "command": Param("regex", required=True),
                "ignore_case": Param("bool", default=False),
            },
            op_markdown_has_command,
            "a fenced code block line or an inline code span matches a command regex",
        ),
        Operator(
            "markdown_has_image",
            {"files": Param("glob", required=True), "local_only": Param("bool", default=False)},
            op_markdown_has_image,
            "a Markdown file shows an image (a local file that exists, or a URL unless local_only)",
        ),
        Operator(
            "log_has_fields",
            {
                "fields": Param("str_list"),
                "require_eval": Param("bool"),
                "step": Param("str", doc="substring of the train step id whose log is read"),
            },
            op_log_has_fields,
            'the training log has the required per-iteration fields (delegates to CHECKS["log_fields"])',
        ),
        Operator(
            "step_passed",
            {
                "stage": Param("choice:train|eval|export|infer|quant|serve|client|other"),
                "trainer": Param("str"),
                "step": Param("regex"),
                "mode": Param("str"),
                "chain": Param("str"),
            },
            op_step_passed,
            "every planned step matching the selector passed (N-A when none is planned, SKIP without a run);"
            " `chain` (e.g. serving) selects that chain's run record",
        ),
        Operator(
            "check",
            {"name": Param("str", required=True), "args": Param("mapping", default=None)},
            op_check,
            "delegates to CHECKS[name](ctx, **args); SKIP with '<name> check not available' when absent",
        ),
        Operator(
            "baseline",
            {"dir": Param("str", doc="baseline folder (default test_tipc/baselines)")},
            op_baseline,
            "every metric of the run is within its baseline's margin; a missing metric or stage FAILs",
        ),
        Operator(
            "agreement_within",
            {
                "atol": Param("float"),
                "rtol": Param("float"),
                "cosine_min": Param("float"),
                "engines": Param("str_list"),
            },
            op_agreement_within,
            'engines agree within tolerances (delegates to CHECKS["agreement"]; defaults: tipc.yaml)',
        ),
        Operator(
            "script_matches_template",
            {"template": Param("str", default="train_infer_python")},
            op_script_matches_template,
            "the repo's TIPC scripts equal a canonical template (normalised sha256, see specs/templates)",
        ),
        Operator(
            "imports_resolve",
            {"files": Param("glob", required=True)},
            op_imports_resolve,
            "the repo-local modules the matching scripts/notebooks import, and the scripts they run, exist "
            "(N-A when no file matches)",
        ),
        Operator("all_of", {"checks": Param("checks", required=True)}, op_all_of, "every sub-check holds"),
        Operator(
            "any_of", {"checks": Param("checks", required=True)}, op_any_of, "at least one sub-check holds"
        ),
    )
}

# Combinators take their sub-checks as a plain list: `all_of: [ {file_exists: {...}}, ... ]`.
LIST_OPERATORS = frozenset({"all_of", "any_of"})
