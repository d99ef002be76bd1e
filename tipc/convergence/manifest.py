"""Seed 003's JSON manifest: `{"ckpt_logs": {"<start step>": {"checkpoint", "start_step", "results"}}}`.

`results` maps a step to `{metric: {label: value}}`, values as the captured strings (numbers are read too).
The checkpoint path: the format's README calls it relative to the manifest's folder, while the original
harness's code joins it to `<storage>/ckpts` (its recorder stores it relative to that folder). tipc writes
it the way the code reads it, so the original's run finds tipc's checkpoints, and reads both: under
`<storage>/ckpts` first, then beside the manifest. tipc adds two keys the original ignores: `envelope` per
segment (per step, metric and label: min, max, mean, std, n over `gather --seeds K`) and a top-level `tipc`
block (envelope mode, seeds).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tipc.core.errors import ConfigError
from tipc.core.fs import atomic_write_text

CKPTS = "ckpts"  # checkpoints live under <storage>/ckpts, as in the original


@dataclass(frozen=True)
class Band:
    lo: float
    hi: float
    mean: float
    std: float
    n: int


@dataclass
class Segment:
    key: str
    checkpoint: str
    start_step: int
    results: dict[int, dict[str, dict[str, str]]]  # step -> metric -> label -> raw value text
    envelope: dict[int, dict[str, dict[str, Band]]] = field(default_factory=dict)

    def value(self, step: int, metric: str, label: str) -> float | None:
        raw = self.results.get(step, {}).get(metric, {}).get(label)
        try:
            return float(raw) if raw is not None else None
        except ValueError:
            return None


@dataclass
class Manifest:
    path: str
    segments: list[Segment]
    envelope_mode: str = "minmax"  # or "std"
    envelope_k: float = 3.0
    seeds: int = 1

    def checkpoint_path(self, seg: Segment) -> Path:
        """Where the segment's checkpoint lies: relative to `<storage>/ckpts` (the original's code, and what
        tipc writes), else to the manifest's folder (the format's README)."""
        raw = Path(seg.checkpoint)
        if raw.is_absolute():
            return raw
        base = Path(self.path).resolve().parent
        first = base / CKPTS / raw
        if exists_checkpoint(first):
            return first
        second = base / raw
        return second if exists_checkpoint(second) else first


def exists_checkpoint(path: Path) -> bool:
    """A checkpoint is a file, a folder, or a prefix whose files share its name (`step_8.pdparams`)."""
    if path.exists():
        return True
    parent = path.parent
    if not parent.is_dir():
        return False
    prefix = path.name + "."
    return any(child.name.startswith(prefix) for child in parent.iterdir())


def _line_of(text: str, keys: list[str]) -> int | None:
    """The line of the last of `keys`, each searched after the previous one ("ckpt_logs" > "4" > ...)."""
    pos = 0
    for key in keys:
        found = text.find(json.dumps(key), pos)
        if found < 0:
            break
        pos = found
    return text.count("\n", 0, pos) + 1 if pos else None


def _int_key(raw: object) -> int | None:
    try:
        return int(str(raw))
    except ValueError:
        return None


@dataclass(frozen=True)
class _Errors:
    """Builds a ConfigError at the line of a key path in the manifest's text."""

    text: str
    path: str

    def __call__(self, keys: list[str], message: str) -> ConfigError:
        return ConfigError(self.path, _line_of(self.text, keys), message)


def _metric_values(
    step_key: str, metric: str, labelled: object, sw: list[str], err: _Errors
) -> dict[str, str]:
    """One metric's {label: value} at one step, the values kept as the text of numbers."""
    if not isinstance(labelled, dict):
        raise err([*sw, metric], f"results[{step_key!r}][{metric!r}] must map labels to values")
    vals: dict[str, str] = {}
    for label, value in labelled.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise err(
                [*sw, metric, label],
                f"results[{step_key!r}][{metric!r}][{label!r}] must be a number",
            )
        try:
            float(value)
        except ValueError:
            raise err([*sw, metric, label], f"value {value!r} is not a number") from None
        vals[str(label)] = str(value)
    return vals


def _results(
    key: str, results_raw: object, where: list[str], err: _Errors
) -> dict[int, dict[str, dict[str, str]]]:
    """A segment's recorded results: step -> metric -> label -> value."""
    if not isinstance(results_raw, dict):
        raise err([*where, "results"], f"ckpt_logs[{key!r}].results must be an object")
    results: dict[int, dict[str, dict[str, str]]] = {}
    for step_key, metrics in results_raw.items():
        step = _int_key(step_key)
        sw = [*where, "results", step_key]
        if step is None:
            raise err(sw, f"ckpt_logs[{key!r}].results: step {step_key!r} is not an integer")
        if not isinstance(metrics, dict):
            raise err(sw, f"ckpt_logs[{key!r}].results[{step_key!r}] must map metrics to values")
        results[step] = {
            str(metric): _metric_values(step_key, metric, labelled, sw, err)
            for metric, labelled in metrics.items()
            # the original recorded a metric its regex missed as null: nothing to compare
            if labelled is not None
        }
    return results


def _envelope(
    key: str, env_raw: object, where: list[str], err: _Errors
) -> dict[int, dict[str, dict[str, Band]]]:
    """A segment's per-seed bands (step -> metric -> label -> Band); none when it has no envelope object."""
    envelope: dict[int, dict[str, dict[str, Band]]] = {}
    if not isinstance(env_raw, dict):
        return envelope
    try:
        for step_key, metrics in env_raw.items():
            envelope[int(step_key)] = {
                m: {
                    lab: Band(
                        float(b["min"]),
                        float(b["max"]),
                        float(b["mean"]),
                        float(b["std"]),
                        int(b["n"]),
                    )
                    for lab, b in labs.items()
                }
                for m, labs in metrics.items()
            }
    except (KeyError, TypeError, ValueError, AttributeError):
        raise err([*where, "envelope"], f"ckpt_logs[{key!r}].envelope is malformed") from None
    return envelope


def _segment(key: str, entry: object, err: _Errors) -> Segment:
    """One ckpt_logs entry: the checkpoint a segment starts from, its start step, results and envelope."""
    where = ["ckpt_logs", key]
    if not isinstance(entry, dict):
        raise err(where, f"ckpt_logs[{key!r}] must be an object")
    for must in ("checkpoint", "results"):
        if must not in entry:
            raise err(where, f"ckpt_logs[{key!r}]: missing {must!r}")
    if not isinstance(entry["checkpoint"], str) or not entry["checkpoint"]:
        raise err([*where, "checkpoint"], f"ckpt_logs[{key!r}].checkpoint must be a path")
    start = _int_key(entry.get("start_step", key))
    if start is None or isinstance(entry.get("start_step"), bool):
        raise err([*where, "start_step"], f"ckpt_logs[{key!r}].start_step must be an integer")
    results = _results(key, entry["results"], where, err)
    envelope = _envelope(key, entry.get("envelope"), where, err)
    return Segment(str(key), entry["checkpoint"], start, results, envelope)


def parse(text: str, path: str) -> Manifest:
    err = _Errors(text, path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(path, exc.lineno, f"invalid JSON: {exc.msg}", exc.colno) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("ckpt_logs"), dict):
        raise ConfigError(path, 1, 'a convergence manifest needs a "ckpt_logs" object')
    segments = [_segment(key, entry, err) for key, entry in doc["ckpt_logs"].items()]
    segments.sort(key=lambda s: s.start_step)
    meta_raw = doc.get("tipc")
    meta: dict[str, Any] = meta_raw if isinstance(meta_raw, dict) else {}
    mode = str(meta.get("envelope_mode", "minmax"))
    if mode not in ("minmax", "std"):
        raise err(["tipc", "envelope_mode"], "tipc.envelope_mode must be minmax or std")
    return Manifest(path, segments, mode, float(meta.get("envelope_k", 3.0)), int(meta.get("seeds", 1)))


MAX_MANIFEST_BYTES = 256 * 1024 * 1024  # a manifest of a long training is large; /dev/zero is not


def load(path: str | Path) -> Manifest:
    from tipc.convergence.config import read_text_bounded

    p = Path(path)
    if not p.exists():
        raise ConfigError(str(p), None, "no manifest here: gather first, or check -s and --manifest-name")
    return parse(read_text_bounded(p, MAX_MANIFEST_BYTES, "a convergence manifest"), str(p))


def to_json(manifest: Manifest) -> dict[str, object]:
    logs: dict[str, object] = {}
    for seg in manifest.segments:
        entry: dict[str, object] = {
            "checkpoint": seg.checkpoint,
            "start_step": seg.start_step,
            "results": {str(step): metrics for step, metrics in sorted(seg.results.items())},
        }
        if seg.envelope:
            entry["envelope"] = {
                str(step): {
                    m: {
                        lab: {"min": b.lo, "max": b.hi, "mean": b.mean, "std": b.std, "n": b.n}
                        for lab, b in labs.items()
                    }
                    for m, labs in metrics.items()
                }
                for step, metrics in sorted(seg.envelope.items())
            }
        logs[str(seg.start_step)] = entry
    doc: dict[str, object] = {"ckpt_logs": logs}
    if manifest.seeds > 1:
        doc["tipc"] = {
            "seeds": manifest.seeds,
            "envelope_mode": manifest.envelope_mode,
            "envelope_k": manifest.envelope_k,
        }
    return doc


def save(manifest: Manifest) -> None:
    atomic_write_text(manifest.path, json.dumps(to_json(manifest), indent=4) + "\n")
