"""Gather and run: the application runs through tipc.execute.proc (argv list, own process group, timeout), its
log
is watched line by line, and every segment ends as a value; nothing here raises on a failing application."""

from __future__ import annotations

import functools
import os
import re
import shutil
import statistics
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from tipc.convergence import compare
from tipc.convergence.config import Metric, TestConfig
from tipc.convergence.manifest import CKPTS, Band, Manifest, Segment, exists_checkpoint
from tipc.convergence.manifest import load as load_manifest
from tipc.convergence.manifest import save as save_manifest
from tipc.convergence.result import FAIL, PASS, Check, SegmentResult, TestResult
from tipc.convergence.watch import Recorder, observe
from tipc.core.errors import ConfigError
from tipc.execute import proc

DEFAULT_MANIFEST = "convergence_harness_manifest.json"
DEFAULT_TIMEOUT_S = 3600.0
_PYTHON_NAME = re.compile(r"python[\d.]*")  # python, python3, python3.7: what --python replaces

Runner = Callable[..., proc.ProcResult]  # the proc.run seam
T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Options:
    storage: Path
    manifest_name: str = DEFAULT_MANIFEST
    jobs: int = 1
    timeout_s: float | None = None  # per segment / per gather run; None: the config's, else the default
    output: Path | None = None  # logs and scratch; default <storage>/tipc-converge/<test>/<mode>
    python: str | None = None  # replaces a leading python/python3 of `executable`
    seeds: int = 1
    envelope_mode: str = "minmax"
    envelope_k: float = 3.0
    margins: str = compare.TIPC  # or compare.ORIGINAL: the original harness's math.isclose semantics


def manifest_file(storage: Path, test: str, manifest_name: str) -> Path:
    """Manifests are prefixed with their test's name, as the original does."""
    return storage / f"{test}_{manifest_name}"


def _out_dir(opts: Options, cfg: TestConfig, mode: str) -> Path:
    base = opts.output / cfg.name if opts.output is not None else opts.storage / "tipc-converge" / cfg.name
    return (base / mode).resolve()


def _timeout(opts: Options, cfg: TestConfig) -> float:
    return opts.timeout_s or cfg.timeout_s or DEFAULT_TIMEOUT_S


def _argv(opts: Options, argv: list[str], values: dict[str, str]) -> list[str]:
    """`${STORAGE}` and `${WORK}` in flag values (tipc's addition: keeps the app's own output out of the
    repo and apart between parallel segments); the interpreter from --python."""
    out = []
    for word in argv:
        for key, value in values.items():
            word = word.replace("${" + key + "}", value)
        out.append(word)
    if opts.python and out and _PYTHON_NAME.fullmatch(Path(out[0]).name):
        out[0] = opts.python
    return out


class _Live:
    """Process groups started by worker threads: Ctrl-C reaches only the main thread, which stops them."""

    def __init__(self) -> None:
        self._pids: set[int] = set()
        self._lock = threading.Lock()

    def started(self, pid: int) -> None:
        with self._lock:
            self._pids.add(pid)

    def finished(self, pid: int) -> None:
        with self._lock:
            self._pids.discard(pid)

    def stop_all(self) -> None:
        with self._lock:
            pids = list(self._pids)
        for pid in pids:
            proc.kill_group(pid, grace_s=1.0)


_LIVE = _Live()


def _in_pool(jobs: int, fn: Callable[[T], R], items: list[T]) -> list[R]:
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(fn, item) for item in items]
        try:
            return [f.result() for f in futures]
        except KeyboardInterrupt:
            for f in futures:
                f.cancel()
            with proc.shielded():
                _LIVE.stop_all()
            raise


def _env() -> dict[str, str]:
    return proc.build_env(None, {"PYTHONUNBUFFERED": "1"})


def _tail(lines: list[str], n: int = 15) -> list[str]:
    return lines[-n:]


# --- the application's folder ----------------------------------------------------------------------------

_SNAPSHOT_LIMIT = 20000  # files; a bigger tree is not watched (the walk would cost more than it tells)


def snapshot(root: Path) -> dict[str, tuple[int, int]] | None:
    """(mtime_ns, size) of every file under `root` (no .git), to tell afterwards what the application wrote
    into its own folder: runs are not sandboxed, so this is said, not prevented."""
    out: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            out[os.path.relpath(path, root)] = (st.st_mtime_ns, st.st_size)
            if len(out) > _SNAPSHOT_LIMIT:
                return None
    return out


def written(before: dict[str, tuple[int, int]] | None, root: Path) -> list[str]:
    if before is None:
        return []
    after = snapshot(root) or {}
    return sorted(p for p, sig in after.items() if before.get(p) != sig)


def _note_writes(result: TestResult, before: dict[str, tuple[int, int]] | None, root: Path) -> None:
    changed = written(before, root)
    if changed:
        shown = ", ".join(changed[:8]) + (f", ... ({len(changed)} files)" if len(changed) > 8 else "")
        result.notes.append(f"the application wrote into {root}: {shown} (point its outputs at ${{WORK}})")


# --- gather ---------------------------------------------------------------------------------------------


def _store_checkpoint(logged: str, step: int, app_dir: Path, storage: Path, ckpt_dir: Path) -> str:
    """The checkpoint's path relative to `<storage>/ckpts`, where the original harness's run looks (it
    joins the manifest's path to that folder); copied into storage when the app wrote it elsewhere
    (together with files sharing its name as prefix: `step_8.pdparams`, `step_8.pdopt`)."""
    root = storage / CKPTS
    src = Path(logged)
    if not src.is_absolute():
        src = app_dir / src
    src = src.resolve()
    if src.is_relative_to(storage):
        return Path(os.path.relpath(src, root)).as_posix()
    dest_dir = ckpt_dir / f"step_{step}"
    dest_dir.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dest_dir / src.name, dirs_exist_ok=True)
    else:
        if src.is_file():
            shutil.copy2(src, dest_dir / src.name)
        if src.parent.is_dir():
            for sib in src.parent.iterdir():
                if sib.is_file() and sib.name.startswith(src.name + "."):
                    shutil.copy2(sib, dest_dir / sib.name)
    if not exists_checkpoint(dest_dir / src.name):
        raise OSError(f"nothing found at {src}")
    return Path(os.path.relpath(dest_dir / src.name, root)).as_posix()


def _gather_one(
    cfg: TestConfig, opts: Options, seed_index: int, storage: Path, runner: Runner
) -> tuple[Recorder, proc.ProcResult | str, list[str], Path]:
    app_dir = cfg.resolve_directory()
    # Run 1 is the configuration as written (its checkpoints are the segments' starting points); runs 2..K
    # differ only by the seed flag (1..K-1) and give the spread of the curve.
    ckpt_dir = storage / "ckpts" if opts.seeds == 1 else storage / "ckpts" / f"run_{seed_index + 1}"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    out = _out_dir(opts, cfg, "gather")
    work = out / "work" / f"run_{seed_index + 1}"
    work.mkdir(parents=True, exist_ok=True)
    rec = Recorder(cfg, lambda logged, step: _store_checkpoint(logged, step, app_dir, storage, ckpt_dir))
    argv = cfg.gather_argv(str(ckpt_dir), seed=seed_index if seed_index > 0 else None)
    argv = _argv(opts, argv, {"STORAGE": str(storage), "WORK": str(work)})
    lines: list[str] = []

    def on_line(line: str) -> None:
        lines.append(line)
        rec.feed(line)

    log = out / f"gather_run_{seed_index + 1}.log"
    try:
        res = runner(
            argv,
            cwd=app_dir,
            env=_env(),
            timeout_s=_timeout(opts, cfg),
            log_path=log,
            on_line=on_line,
            on_start=_LIVE.started,
        )
    except OSError as exc:
        return rec, f"could not start {argv[0]!r}: {exc}", lines, log
    _LIVE.finished(res.pid)
    return rec, res, lines, log


def gather(cfg: TestConfig, opts: Options, runner: Runner = proc.run) -> TestResult:
    storage = opts.storage.resolve()
    mpath = manifest_file(storage, cfg.name, opts.manifest_name)
    result = TestResult(cfg.name, "gather", cfg.path, str(mpath))
    if opts.seeds > 1 and "seed" not in cfg.gather.script:
        raise ConfigError(
            cfg.path,
            cfg.line,
            f"{cfg.name}: gather --seeds needs flags.gather.seed (key, set_in_script: true)",
        )
    storage.mkdir(parents=True, exist_ok=True)
    app_dir = cfg.resolve_directory()
    before = snapshot(app_dir)
    runs = _in_pool(
        min(opts.jobs, opts.seeds),
        lambda i: _gather_one(cfg, opts, i, storage, runner),
        list(range(opts.seeds)),
    )
    _note_writes(result, before, app_dir)
    for i, (rec, res, lines, log) in enumerate(runs):
        who = (
            f"gather run {i + 1} ({f'seed {i}' if i else 'as configured'})"
            if opts.seeds > 1
            else "gather run"
        )
        result.notes += rec.notes
        if isinstance(res, str):
            result.errors.append(f"{who}: {res}")
        elif res.timed_out:
            result.errors.append(f"{who} timed out after {_timeout(opts, cfg):g}s; log {log}")
        elif res.exit_code != 0:
            tail = "\n    ".join(_tail(lines, 8))
            result.errors.append(f"{who} exited with code {res.exit_code}; log {log}\n    {tail}")
    first = runs[0][0]
    segments: list[Segment] = []
    for r in first.recordings:
        if not r.results:
            result.notes.append(
                f"checkpoint at step {r.start_step} ({r.checkpoint}): no metrics logged after it"
            )
            continue
        segments.append(Segment(str(r.start_step), r.stored, r.start_step, r.results))
    if not segments:
        result.errors.append(
            f"no segment recorded: no {cfg.save_parser.regex.pattern!r} line followed by "
            f"{cfg.step_parser.regex.pattern!r} lines with metrics"
        )
    if opts.seeds > 1:
        _envelopes(segments, [run[0] for run in runs], result)
    for seg in segments:
        sr = SegmentResult(
            cfg.name, seg.start_step, seg.checkpoint, PASS, [f"recorded steps {sorted(seg.results)}"]
        )
        sr.recorded = _curves(seg.results)
        result.segments.append(sr)
    if result.status == PASS:
        save_manifest(Manifest(str(mpath), segments, opts.envelope_mode, opts.envelope_k, opts.seeds))
    return result


def _envelopes(segments: list[Segment], recorders: list[Recorder], result: TestResult) -> None:
    for seg in segments:
        per_run = []
        for n, rec in enumerate(recorders):
            match = next((r for r in rec.recordings if r.start_step == seg.start_step and r.results), None)
            if match is None:
                result.errors.append(f"gather run {n + 1} recorded no segment at step {seg.start_step}")
                continue
            per_run.append(match.results)
        for step, metrics in seg.results.items():
            for metric, labels in metrics.items():
                for label in labels:
                    vals = []
                    for res in per_run:
                        raw = res.get(step, {}).get(metric, {}).get(label)
                        if raw is not None:
                            vals.append(float(raw))
                    if len(vals) < len(recorders):
                        result.errors.append(
                            f"segment {seg.start_step} step {step} {metric}[{label}]: recorded by "
                            f"{len(vals)} of {len(recorders)} gather runs"
                        )
                    if not vals:
                        continue
                    band = Band(
                        min(vals),
                        max(vals),
                        statistics.fmean(vals),
                        statistics.pstdev(vals) if len(vals) > 1 else 0.0,
                        len(vals),
                    )
                    seg.envelope.setdefault(step, {}).setdefault(metric, {})[label] = band


# --- run ------------------------------------------------------------------------------------------------


def _curves(results: dict[int, dict[str, dict[str, str]]]) -> dict[str, list[tuple[int, float]]]:
    out: dict[str, list[tuple[int, float]]] = {}
    for step in sorted(results):
        for metric, labels in results[step].items():
            for label, raw in labels.items():
                try:
                    out.setdefault(f"{metric}[{label}]", []).append((step, float(raw)))
                except ValueError:
                    continue
    return out


def _judged(
    metric: Metric, actual: float, target: float | Band, b: compare.Bounds, margins: str
) -> tuple[bool, compare.Bounds]:
    """Whether `actual` passes, and the bounds to report, under tipc's or the original's semantics."""
    if margins == compare.ORIGINAL:
        expected = target.mean if isinstance(target, Band) else target
        return compare.passes_original(metric.comparison, actual, expected, metric.margin), (
            compare.original_bounds(expected, metric.margin)
        )
    return compare.passes(metric.comparison, actual, b), b


def evaluate(
    cfg: TestConfig,
    manifest: Manifest,
    seg: Segment,
    observed: dict[int, dict[str, dict[str, str]]],
    margins: str = compare.TIPC,
) -> list[Check]:
    """Every recorded (step, metric, label) of the config's metrics against the run's log; a recorded one
    the run did not report is a failure, never a skip."""
    checks: list[Check] = []
    for step in sorted(seg.results):
        seen = observed.get(step)
        for metric_name, labels in seg.results[step].items():
            metric = cfg.metrics.get(metric_name)
            if metric is None:
                continue
            got = seen.get(metric_name) if seen is not None else None
            for label in labels:
                expected = seg.value(step, metric_name, label)
                band_v = seg.envelope.get(step, {}).get(metric_name, {}).get(label)
                target: float | Band = band_v if band_v is not None else (expected or 0.0)
                mode, k = manifest.envelope_mode, manifest.envelope_k
                b = compare.bounds(target, metric.margin, metric.abs_margin, mode, k)
                band = None
                if band_v is not None:
                    raw = compare.bounds(band_v, 0.0, 0.0, mode, k)
                    band = (raw.lo, raw.hi)
                    expected = b.centre

                base = (step, metric_name, label, metric.comparison, metric.margin, metric.abs_margin)
                check = functools.partial(Check, *base, expected, b.lo, b.hi)
                if seen is None:
                    checks.append(check(None, False, "step not observed in the run's log", band))
                elif got is None:
                    checks.append(check(None, False, f"{metric_name} not observed at this step", band))
                elif label not in got:
                    checks.append(
                        check(
                            None,
                            False,
                            f"label not observed (recorded {sorted(labels)}, observed {sorted(got)})",
                            band,
                        )
                    )
                else:
                    try:
                        actual = float(got[label])
                    except ValueError:
                        checks.append(check(None, False, f"observed {got[label]!r} is not a number", band))
                        continue
                    if expected is None:
                        checks.append(check(actual, False, "recorded value is not a number", band))
                    else:
                        ok, shown = _judged(metric, actual, target, b, margins)
                        checks.append(Check(*base, expected, shown.lo, shown.hi, actual, ok, "", band))
    return checks


def run_segment(
    cfg: TestConfig, opts: Options, manifest: Manifest, seg: Segment, runner: Runner = proc.run
) -> SegmentResult:
    """Restart the application from one segment's checkpoint and check its recorded steps."""
    sr = SegmentResult(cfg.name, seg.start_step, seg.checkpoint)
    sr.recorded = _curves(seg.results)
    ckpt = manifest.checkpoint_path(seg)
    if not exists_checkpoint(ckpt):
        sr.status = FAIL
        sr.reasons.append(f"checkpoint not found: {ckpt}")
        sr.checks = evaluate(cfg, manifest, seg, {})
        return sr
    out = _out_dir(opts, cfg, "run")
    work = out / "work" / f"segment_{seg.start_step}"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    run_for = max([seg.start_step + cfg.steps_to_record, *seg.results])
    argv = cfg.run_argv(str(ckpt), seg.start_step, run_for)
    sr.argv = _argv(opts, argv, {"STORAGE": str(opts.storage.resolve()), "WORK": str(work)})
    lines: list[str] = []
    log = out / f"segment_{seg.start_step}.log"
    sr.log_path = str(log)
    try:
        res = runner(
            sr.argv,
            cwd=cfg.resolve_directory(),
            env=_env(),
            timeout_s=_timeout(opts, cfg),
            log_path=log,
            on_line=lines.append,
            on_start=_LIVE.started,
        )
        _LIVE.finished(res.pid)
    except OSError as exc:
        sr.status = FAIL
        sr.reasons.append(f"could not start {sr.argv[0]!r}: {exc}")
        sr.checks = evaluate(cfg, manifest, seg, {})
        return sr
    sr.exit_code, sr.timed_out, sr.duration_s = res.exit_code, res.timed_out, res.duration_s
    sr.log_tail = _tail(lines)
    observed = observe(cfg, lines)
    sr.observed = _curves(observed)
    sr.checks = evaluate(cfg, manifest, seg, observed, opts.margins)
    if res.timed_out:
        sr.reasons.append(f"timed out after {_timeout(opts, cfg):g}s (process group stopped)")
    elif res.interrupted:
        sr.reasons.append("interrupted")
    elif res.exit_code != 0:
        sr.reasons.append(f"application exited with code {res.exit_code}")
    if not sr.checks:
        sr.reasons.append("the manifest records no value of the config's metrics for this segment")
    if sr.reasons or sr.failed_checks:
        sr.status = FAIL
    return sr


def run(cfg: TestConfig, opts: Options, runner: Runner = proc.run) -> TestResult:
    storage = opts.storage.resolve()
    mpath = manifest_file(storage, cfg.name, opts.manifest_name)
    manifest = load_manifest(mpath)
    result = TestResult(cfg.name, "run", cfg.path, str(mpath))
    # A segment that recorded no step (the original's recorder keeps the save at the last step of its
    # run, which nothing follows) has nothing to compare: skipped with a note, as the original's run does.
    segments = [s for s in manifest.segments if s.results]
    for s in manifest.segments:
        if not s.results:
            result.notes.append(
                f"segment at step {s.start_step} ({s.checkpoint}) recorded no step (a checkpoint saved at "
                "the end of the gather run): skipped, as the original harness does"
            )
    if not segments:
        result.errors.append("the manifest has no segment with recorded steps")
        return result
    app_dir = cfg.resolve_directory()  # a bad directory is a config error before anything starts
    before = snapshot(app_dir)
    result.segments = _in_pool(opts.jobs, lambda s: run_segment(cfg, opts, manifest, s, runner), segments)
    _note_writes(result, before, app_dir)
    return result
