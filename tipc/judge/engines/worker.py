"""The model-side worker: `python -m tipc.judge.engines.worker --request REQ.json --response RESP.json`.

Protocol "tipc.engines/1" (JSON files, so a crash never mixes with the engines' own stdout chatter):

request  = {"protocol": "tipc.engines/1", "op": "agreement",
            "model_dir": abs path, "work_dir": abs path (scratch inside the run's output dir),
            "engines": ["paddle_inference", "onnxruntime", ...], "plugins": ["module.registering.engines"],
            "engine_options": {engine name: {keyword arguments for its factory, e.g. a server URL}},
            "inputs": abs path to .npy/.npz or null, "seed": 0,
            "tolerances": {"atol": 1e-5, "rtol": 1e-4, "cosine_min": 0.99999}}
response = {"protocol": ..., "ok": bool, "error": str|null,
            "model": {"dir", "model_file", "params_file", "format"},
            "inputs": {"source": "file"|"random", "path", "seed", "feeds": {name: {"shape", "dtype"}}},
            "engines": {name: {"ok", "error", "unavailable" (packages missing), "seconds", "details",
                               "outputs": [{"name","shape","dtype"}]}},
            "pairs": [{"a", "b", "within": bool, "outputs": [per-output figures: compare.compare_arrays]}]}
Outputs are matched by position (engines name outputs differently). The exit code is 0 whenever a response
was written, whatever the engines did; anything else means the worker itself broke.
Each engine's outputs are also saved to <work_dir>/outputs_<engine>.npz for inspection.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tipc.core.fs import atomic_write_text

if TYPE_CHECKING:
    import numpy as np

    from tipc.judge.engines.base import Engine, InputSpec, ModelFiles
    from tipc.judge.engines.compare import Figures

PROTOCOL = "tipc.engines/1"


def _make_engine(name: str, options: dict[str, Any] | None = None) -> Engine:
    from tipc.judge.engines import engine_factory

    target = engine_factory(name)
    if target is None:
        raise KeyError(f"unknown engine {name!r}")
    module, attr = target.split(":", 1)
    engine: Engine = getattr(importlib.import_module(module), attr)(**(options or {}))
    return engine


IMAGE_SIDE = 224


RANDOM_BATCH = 4  # several inputs, so a model whose output does not depend on its input shows as such


def _concrete(shape: tuple[int | None, ...], dtype: str) -> tuple[int, ...]:
    """A concrete shape for random inputs: a dynamic batch holds RANDOM_BATCH inputs, the spatial dims of an
    image-like float NCHW input (1 or 3 channels) get a usual image side (a 1x1 image breaks most vision
    models), other dynamic dims 1."""
    image = len(shape) == 4 and dtype.startswith("float") and shape[1] in (1, 3)

    def size(i: int) -> int:
        if i == 0 and len(shape) >= 2:
            return RANDOM_BATCH
        return IMAGE_SIDE if image and i >= 2 else 1

    return tuple(d if d is not None else size(i) for i, d in enumerate(shape))


def _input_specs(engines: dict[str, Engine]) -> list[InputSpec]:
    """The model's inputs as the engines report them: the first engine's, unless a later one knows every
    shape where it did not."""
    specs: list[InputSpec] = []
    for eng in engines.values():
        s = eng.input_specs()
        if s and (not specs or (all(x.shape is not None for x in s) and any(x.shape is None for x in specs))):
            specs = s
    return specs


def _file_feeds(path: str, names: list[str]) -> dict[str, np.ndarray]:
    """Inputs from an .npy (one input) or an .npz (by input name, else by position)."""
    import numpy as np

    arrays: dict[str, np.ndarray] = {}
    loaded = np.load(path, allow_pickle=False)
    if isinstance(loaded, np.ndarray):
        if len(names) > 1:
            raise ValueError(f"model has {len(names)} inputs {names}; give an .npz with one array each")
        arrays[names[0] if names else "x"] = loaded
    else:
        keys = list(loaded.files)
        for i, n in enumerate(names or keys):
            arrays[n] = loaded[n] if n in keys else loaded[keys[i]]
    return arrays


def _random_feeds(specs: list[InputSpec], seed: int) -> dict[str, np.ndarray]:
    """Seeded standard-normal floats (0/1 integers) in each input's concrete shape."""
    import numpy as np

    rng = np.random.default_rng(seed)
    if not specs or any(s.shape is None for s in specs):
        raise ValueError("no engine reports the model's input shapes; set agreement.inputs to an .npy file")
    arrays: dict[str, np.ndarray] = {}
    for s in specs:
        shape = _concrete(s.shape or (), s.dtype)
        if s.dtype.startswith("float"):
            arrays[s.name] = rng.standard_normal(shape).astype(s.dtype)
        else:
            arrays[s.name] = rng.integers(0, 2, size=shape).astype(s.dtype)
    return arrays


def _feeds(
    request: dict[str, Any], engines: dict[str, Engine]
) -> tuple[dict[str, np.ndarray], dict[str, object]]:
    specs = _input_specs(engines)
    info: dict[str, object] = {"seed": request.get("seed", 0)}
    path = request.get("inputs")
    if path:
        info.update({"source": "file", "path": path})
        arrays = _file_feeds(path, [s.name for s in specs])
    else:
        arrays = _random_feeds(specs, int(request.get("seed", 0)))
        info.update(
            {
                "source": "random",
                "note": f"seeded standard-normal inputs; a dynamic batch of {RANDOM_BATCH}, other dynamic "
                f"dims 1 ({IMAGE_SIDE} for the height and width of an image-like NCHW input)",
            }
        )
    dtypes = {s.name: s.dtype for s in specs}
    for n, a in list(arrays.items()):
        if n in dtypes and str(a.dtype) != dtypes[n]:
            arrays[n] = a.astype(dtypes[n])
    info["feeds"] = {n: {"shape": list(a.shape), "dtype": str(a.dtype)} for n, a in arrays.items()}
    return arrays, info


def _load_engines(
    request: dict[str, Any], model: ModelFiles, work_dir: Path, entries: dict[str, dict[str, object]]
) -> dict[str, Engine]:
    """Load the model in each requested engine; an entry per engine says how that went."""
    loaded: dict[str, Engine] = {}
    for name in request["engines"]:
        entry: dict[str, object] = {"ok": False, "error": None, "outputs": []}
        entries[name] = entry
        t0 = time.perf_counter()
        try:
            eng = _make_engine(name, request.get("engine_options", {}).get(name))
            entry["details"] = eng.load(model, work_dir / name)
            loaded[name] = eng
        except ModuleNotFoundError as exc:
            # the engine's packages are not installed in this interpreter: not a finding about the model
            entry["unavailable"] = True
            entry["error"] = f"not installed: {exc}"[:2000]
        except Exception as exc:
            entry["error"] = f"load failed: {type(exc).__name__}: {exc}"[:2000]
        entry["seconds"] = time.perf_counter() - t0
    return loaded


def _run_engines(
    loaded: dict[str, Engine],
    feeds: dict[str, np.ndarray],
    work_dir: Path,
    entries: dict[str, dict[str, object]],
) -> dict[str, list[tuple[str, np.ndarray]]]:
    """Each loaded engine's (name, array) outputs on the feeds, also saved to outputs_<engine>.npz."""
    import numpy as np

    results: dict[str, list[tuple[str, np.ndarray]]] = {}
    for name, eng in loaded.items():
        entry = entries[name]
        t0 = time.perf_counter()
        try:
            outs = eng.run(feeds)
            results[name] = outs
            entry["ok"] = True
            entry["outputs"] = [{"name": n, "shape": list(a.shape), "dtype": str(a.dtype)} for n, a in outs]
            # numpy's stubs read a ** mapping as its allow_pickle flag too: the arrays are passed untyped
            saved: dict[str, Any] = {f"out{i}": a for i, (_, a) in enumerate(outs)}
            np.savez(work_dir / f"outputs_{name}.npz", **saved)
        except Exception as exc:
            entry["error"] = f"run failed: {type(exc).__name__}: {exc}"[:2000]
        entry["run_seconds"] = time.perf_counter() - t0
    return results


def _compare_outputs(
    oa: list[tuple[str, np.ndarray]], ob: list[tuple[str, np.ndarray]], atol: float, rtol: float
) -> list[Figures]:
    """Two engines' outputs compared by position; an output only one of them has is missing."""
    from tipc.judge.engines.compare import compare_arrays

    figs: list[Figures] = []
    for k in range(max(len(oa), len(ob))):
        if k >= len(oa) or k >= len(ob):
            figs.append({"index": k, "shape_match": False, "allclose": False, "error": "output missing"})
            continue
        fig = compare_arrays(oa[k][1], ob[k][1], atol, rtol)
        fig.update({"index": k, "name_a": oa[k][0], "name_b": ob[k][0]})
        figs.append(fig)
    return figs


def handle(request: dict[str, Any]) -> dict[str, Any]:
    # No numpy in this interpreter breaks the worker as a whole, not each engine's load.
    importlib.import_module("numpy")
    from tipc.judge.engines.base import find_model
    from tipc.judge.engines.compare import within

    resp: dict[str, Any] = {"protocol": PROTOCOL, "ok": False, "error": None, "engines": {}, "pairs": []}
    if request.get("protocol") != PROTOCOL:
        resp["error"] = f"unsupported protocol {request.get('protocol')!r} (expected {PROTOCOL})"
        return resp
    for plugin in request.get("plugins", []):
        importlib.import_module(plugin)
    model = find_model(Path(request["model_dir"]))
    if model is None:
        resp["error"] = f"no inference.json/.pdmodel + .pdiparams in {request['model_dir']}"
        return resp
    resp["model"] = model.to_json()
    if model.format == "pdmodel":
        # old-program models load through the legacy (non-PIR) loaders; must be set before paddle is imported
        os.environ.setdefault("FLAGS_enable_pir_api", "0")
    work_dir = Path(request["work_dir"])
    work_dir.mkdir(parents=True, exist_ok=True)
    tol = request.get("tolerances", {})
    atol, rtol = float(tol.get("atol", 1e-5)), float(tol.get("rtol", 1e-4))
    cosine_min = float(tol.get("cosine_min", 0.99999))

    loaded = _load_engines(request, model, work_dir, resp["engines"])
    if not loaded:
        resp["error"] = "no engine could load the model"
        return resp
    try:
        feeds, resp["inputs"] = _feeds(request, loaded)
    except Exception as exc:
        resp["error"] = f"cannot build inputs: {type(exc).__name__}: {exc}"
        return resp
    results = _run_engines(loaded, feeds, work_dir, resp["engines"])
    names = [n for n in request["engines"] if n in results]
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            figs = _compare_outputs(results[a], results[b], atol, rtol)
            resp["pairs"].append(
                {"a": a, "b": b, "outputs": figs, "within": all(within(f, cosine_min) for f in figs)}
            )
    resp["ok"] = True
    return resp


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tipc.judge.engines.worker")
    parser.add_argument("--request", required=True)
    parser.add_argument("--response", required=True)
    ns = parser.parse_args(argv)
    try:
        request = json.loads(Path(ns.request).read_text(encoding="utf-8"))
        resp = handle(request)
    except Exception as exc:
        resp = {
            "protocol": PROTOCOL,
            "ok": False,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc()[-4000:],
            "engines": {},
            "pairs": [],
        }
    atomic_write_text(ns.response, json.dumps(resp, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
