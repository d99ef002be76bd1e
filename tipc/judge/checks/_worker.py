"""Start the model-side worker (`python -m tipc.judge.engines.worker`) through tipc.execute.proc; read its
answer."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tipc.core.jsontypes import JSONObject, as_object
from tipc.core.resources import package_parent

PROTOCOL = "tipc.engines/1"


@dataclass(frozen=True)
class WorkerRun:
    response: JSONObject | None
    error: str | None  # why there is no usable response
    log: Path
    exit_code: int | None


def tipc_pythonpath(env: dict[str, str]) -> dict[str, str]:
    """Make this tipc importable by another interpreter (the run's python may not have tipc installed)."""
    root = str(package_parent())
    parts = [root, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != root]]
    env = dict(env)
    env["PYTHONPATH"] = os.pathsep.join(parts)
    return env


# The modules the worker needs for each engine (tipc.judge.engines), beside numpy.
ENGINE_MODULES: dict[str, tuple[str, ...]] = {
    "paddle_inference": ("paddle",),
    "paddle_jit": ("paddle",),
    "onnxruntime": ("paddle", "onnxruntime", "paddle2onnx", "onnx"),
}


def worker_modules(request: Mapping[str, object]) -> tuple[str, ...]:
    given = request.get("engines")
    engines = given if isinstance(given, list | tuple) and given else list(ENGINE_MODULES)
    wanted = ["numpy"]
    for name in engines:
        wanted += [m for m in ENGINE_MODULES.get(str(name), ()) if m not in wanted]
    return tuple(wanted)


def crash_summary(log_tail: str) -> str:
    """One line for a report: the exception line of a Python traceback (the traceback stays in the log)."""
    lines = [line.strip() for line in log_tail.splitlines() if line.strip()]
    if not lines:
        return "(empty log)"
    if any(line.startswith("Traceback (most recent call last)") for line in lines):
        return f"{lines[-1]} (traceback in the worker log)"
    return " | ".join(lines[-3:])


# (interpreter, model folder, model files' stamps, inputs digest, engine)
_Key = tuple[str, str, tuple[tuple[object, ...], ...], str, str]
# Engine outputs the workers of this process computed, so a later check on the same model and inputs reuses
# them rather than starting Paddle again: key -> (engine's response entry, its outputs .npz, the npz's stamp).
_OUTPUTS: dict[_Key, tuple[JSONObject, Path, tuple[int, int]]] = {}


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def _outputs_key(python: str, model_dir: str, inputs: str | None, engine: str) -> _Key | None:
    """Model files by path + size + mtime, inputs by content; None when there is nothing stable to key on."""
    if inputs is None:
        return None  # random inputs: the worker's seeded batch is not a file another check can hand over
    folder = Path(model_dir)
    try:
        model = tuple(sorted((p.name, *(_stamp(p) or (0, 0))) for p in folder.iterdir() if p.is_file()))
        digest = hashlib.sha256(Path(inputs).read_bytes()).hexdigest()
    except OSError:
        return None
    return (os.path.realpath(python), str(folder.resolve()), model, digest, engine)


def _remember(python: str, request: Mapping[str, object], response: JSONObject, work_dir: Path) -> None:
    model_dir, inputs = request.get("model_dir"), request.get("inputs")
    if request.get("op") != "agreement" or not isinstance(model_dir, str):
        return
    options = request.get("engine_options")
    options = options if isinstance(options, dict) else {}
    for engine, info in as_object(response.get("engines")).items():
        if not isinstance(info, dict) or not info.get("ok") or options.get(engine):
            continue  # an engine run with options of its own is not the default reference
        npz = work_dir / f"outputs_{engine}.npz"
        key = _outputs_key(python, model_dir, inputs if isinstance(inputs, str) else None, engine)
        stamp = _stamp(npz)
        if key is not None and stamp is not None:
            _OUTPUTS[key] = (info, npz, stamp)


def earlier_outputs(python: str, model_dir: str, inputs: str, engine: str) -> tuple[JSONObject, Path] | None:
    """(engine's response entry, outputs .npz) an earlier worker of this process computed for this model and
    these inputs with default options, while its .npz is still the one it wrote; else None."""
    key = _outputs_key(python, model_dir, inputs, engine)
    hit = _OUTPUTS.get(key) if key is not None else None
    if hit is None or _stamp(hit[1]) != hit[2]:
        return None
    return hit[0], hit[1]


def run_worker(python: str, request: Mapping[str, object], work_dir: Path, timeout_s: float) -> WorkerRun:
    from tipc.execute import proc
    from tipc.execute.sandbox import for_commands

    for_commands(work_dir)  # the worker writes its answer there
    req_path = work_dir / "request.json"
    resp_path = work_dir / "response.json"
    log_path = work_dir / "worker.log"
    if resp_path.exists():
        resp_path.unlink()
    req_path.write_text(json.dumps({"protocol": PROTOCOL, **request}, indent=2), encoding="utf-8")
    from tipc.execute import own_parts

    # the repo's interpreter when it can run the worker, else where it can (PartsMissing: exit 3, no FAIL)
    model_dir = request.get("model_dir")
    placed = own_parts.tell(
        own_parts.place(
            "agreement/ONNX worker",
            python,
            worker_modules(request),
            model_dir=Path(model_dir) if isinstance(model_dir, str) else None,
        )
    )
    env = tipc_pythonpath(
        proc.build_env(None, {"GLOG_minloglevel": "2", "PYTHONUNBUFFERED": "1", **placed.env})
    )
    try:
        res = proc.run(
            placed.argv(
                "tipc.judge.engines.worker", "--request", str(req_path), "--response", str(resp_path)
            ),
            cwd=work_dir,
            env=env,
            timeout_s=timeout_s,
            log_path=log_path,
        )
    except OSError as exc:
        return WorkerRun(None, f"cannot start worker with {python}: {exc}", log_path, None)
    if res.timed_out:
        return WorkerRun(None, f"worker timed out after {timeout_s:g} s", log_path, None)
    if not resp_path.is_file():
        tail = log_path.read_text(encoding="utf-8", errors="replace")[-800:] if log_path.is_file() else ""
        return WorkerRun(
            None,
            f"worker exited {res.exit_code} without a response: {crash_summary(tail)}",
            log_path,
            res.exit_code,
        )
    try:
        data = json.loads(resp_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # ValueError: bad JSON or not UTF-8
        return WorkerRun(None, f"unreadable worker response: {exc}", log_path, res.exit_code)
    if not isinstance(data, dict):
        return WorkerRun(None, "unreadable worker response: not a JSON object", log_path, res.exit_code)
    given_dir = request.get("work_dir")
    _remember(
        python, request, data, Path(given_dir) if isinstance(given_dir, str) and given_dir else work_dir
    )
    return WorkerRun(data, None, log_path, res.exit_code)
