"""The code the injectors plant into a repo's entry scripts, as source text.

Each prelude is top-level code that runs in the repo's own interpreter before the script's work starts, and
changes one thing the way a real bug does (weights loaded from elsewhere, a log field printed wrong, a loader
that yields nothing). It imports only the standard library and paddle, keeps its names under
`_silent_bench_`, and records how often it acted in `<repo>/.silent_bench/<kind>.<script>.json` (inside
tipc's sandbox that lands in the run's upper layer), so the benchmark tells a plant that took effect from one
that never ran: a kind tipc "missed" must have been there to miss.

Values are filled in with repr(), never by formatting code. A prelude acts only where its script runs as
the program (`if __name__ == "__main__":`), never where another script imports it.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

# The probe and the repo root, shared by every prelude. __UP__: how many folders the script lies below the
# repo root.
_COMMON = r"""
def _silent_bench_root():
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.abspath(os.path.join(here, *([".."] * __UP__)))


_SILENT_BENCH_ROOT = _silent_bench_root()  # now: __file__ may be gone by the time atexit runs


def _silent_bench_write_probe(kind, counts):
    import json
    import os
    try:
        folder = os.path.join(_SILENT_BENCH_ROOT, ".silent_bench")
        if not os.path.isdir(folder):
            os.makedirs(folder)
        with open(os.path.join(folder, kind + "." + __SCRIPT__ + ".json"), "w") as out:
            json.dump(counts, out)
    except (OSError, ValueError):
        pass


def _silent_bench_probe(kind, counts):
    import atexit
    atexit.register(_silent_bench_write_probe, kind, counts)


def _silent_bench_rebind(old, new):
    # `from paddle import load` in the script or one of the repo's modules: rebind those names too
    import sys
    root = _SILENT_BENCH_ROOT
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None) or ""
        if not path.startswith(root):
            continue
        for name, value in list(vars(module).items()):
            if value is old:
                setattr(module, name, new)
"""

# A filter over the script's stdout and stderr (and the logging handlers already writing to them): each
# complete line goes through `rewrite(line) -> text` (the text carries its own line ending).
_FILTER = r"""
def _silent_bench_filter(kind, rewrite, final=None):
    import atexit
    import logging
    import sys
    counts = {"lines": 0, "rewritten": 0}
    _silent_bench_probe(kind, counts)

    class _Filtered(object):
        def __init__(self, stream):
            self._stream = stream
            self._pending = ""

        def write(self, text):
            if not isinstance(text, str):
                return self._stream.write(text)
            self._pending += text
            if "\n" in self._pending:
                done, self._pending = self._pending.rsplit("\n", 1)
                out = []
                for line in done.split("\n"):
                    counts["lines"] += 1
                    new = rewrite(line)
                    if line + "\n" not in new:  # a bar closed before a line is not a rewrite
                        counts["rewritten"] += 1
                    out.append(new)
                self._stream.write("".join(out))
            return len(text)

        def flush(self):
            self._stream.flush()

        def close_pending(self):
            if self._pending:
                self._stream.write(self._pending)
                self._pending = ""
            self._stream.flush()

        def __getattr__(self, name):
            return getattr(self._stream, name)

    old = {id(sys.stdout): None, id(sys.stderr): None}
    out, err = _Filtered(sys.stdout), _Filtered(sys.stderr)
    old[id(sys.stdout)], old[id(sys.stderr)] = out, err
    sys.stdout, sys.stderr = out, err
    loggers = [logging.getLogger()] + [
        lg for lg in logging.Logger.manager.loggerDict.values() if isinstance(lg, logging.Logger)
    ]
    for lg in loggers:
        for handler in lg.handlers:
            stream = getattr(handler, "stream", None)
            if not isinstance(handler, logging.FileHandler) and id(stream) in old:
                handler.stream = old[id(stream)]

    def _close():
        out.close_pending()
        err.close_pending()
        if final is not None:
            tail = final()
            if tail:
                out._stream.write(tail)
                out._stream.flush()

    atexit.register(_close)
"""

_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"

PRINT_BATCH_TIME_AS_IPS = r"""
def _silent_bench_ips():
    import re
    ips = re.compile(r"(\bavg_ips\s*[:=]\s*)(__NUM__)")
    cost = re.compile(r"\bavg_batch_cost\s*[:=]\s*(__NUM__)")

    def rewrite(line):
        c = cost.search(line)
        if c is not None and ips.search(line) is not None:
            line = ips.sub(lambda m: m.group(1) + c.group(1), line, count=1)
        return line + "\n"

    _silent_bench_filter(__KIND__, rewrite)


_silent_bench_ips()
"""

DROP_FIELD = r"""
def _silent_bench_drop():
    import re
    field = re.compile(r"\b" + __FIELD__ + r"\s*[:=]\s*__NUM__(\s*(sec|s|ms)\b)?\s*[,;|]?\s*")

    def rewrite(line):
        return field.sub("", line) + "\n"

    _silent_bench_filter(__KIND__, rewrite)


_silent_bench_drop()
"""

# The loss goes into a progress bar's description, rewritten in place with '\r' (as tqdm's
# set_description does); the iteration line and its other fields are gone.
LOSS_TO_PROGRESS_BAR = r"""
def _silent_bench_bar():
    import re
    loss = re.compile(r"\bloss\b['\"]?\s*[:=]\s*(__NUM__)", re.IGNORECASE)
    where = re.compile(r"\b(?:iter|step|batch)\w*\s*[:\[]?\s*\[?\s*(\d+)\s*/\s*(\d+)", re.IGNORECASE)
    state = {"open": False, "i": 0}

    def rewrite(line):
        m = loss.search(line)
        if m is None:
            if state["open"]:
                state["open"] = False
                return "\n" + line + "\n"
            return line + "\n"
        state["i"] += 1
        w = where.search(line)
        i, n = (int(w.group(1)), int(w.group(2))) if w else (state["i"], state["i"])
        pct = int(100 * i / max(n, 1))
        bar = "#" * (pct // 10) + " " * (10 - pct // 10)
        state["open"] = True
        return "\rtrain loss:%s: %3d%%|%s| %d/%d [00:%02d<00:%02d,  2.50it/s]" % (
            m.group(1), pct, bar, i, n, i % 60, max(n - i, 0) % 60)

    _silent_bench_filter(__KIND__, rewrite, final=lambda: "\n" if state["open"] else "")


_silent_bench_bar()
"""

# A sign error in the loss: every backward() differentiates the negated loss, so the optimizer climbs.
ASCEND_THE_LOSS = r"""
def _silent_bench_ascend():
    import paddle
    counts = {"backward": 0}
    _silent_bench_probe(__KIND__, counts)
    original = paddle.Tensor.backward

    def backward(self, *args, **kwargs):
        counts["backward"] += 1
        return original(self * -1.0, *args, **kwargs)

    paddle.Tensor.backward = backward


_silent_bench_ascend()
"""

# paddle.load of the weights this run's train wrote reads the committed copy instead.
LOAD_COMMITTED_WEIGHTS = r"""
def _silent_bench_committed():
    import os
    import paddle
    counts = {"redirected": 0, "loads": 0}
    _silent_bench_probe(__KIND__, counts)
    root = _SILENT_BENCH_ROOT
    trained = set(__TRAINED__)
    committed = os.path.join(root, __COMMITTED__)
    original = paddle.load

    def load(path, *args, **kwargs):
        counts["loads"] += 1
        try:
            rel = os.path.relpath(os.path.realpath(str(path)), root).replace(os.sep, "/")
        except (TypeError, ValueError):
            rel = None
        if rel in trained:
            counts["redirected"] += 1
            path = committed
        return original(path, *args, **kwargs)

    paddle.load = load
    _silent_bench_rebind(original, load)


_silent_bench_committed()
"""

# The script reads its weights from where train wrote them, whatever the flag says: the phantom name on
# the command line is swapped back before argparse sees it.
SWAP_ARGV = r"""
def _silent_bench_argv():
    import sys
    counts = {"swapped": 0}
    _silent_bench_probe(__KIND__, counts)
    new = []
    for arg in sys.argv:
        if __PHANTOM__ in arg:
            counts["swapped"] += 1
            arg = arg.replace(__PHANTOM__, __REAL__)
        new.append(arg)
    sys.argv[:] = new


_silent_bench_argv()
"""

# Paddle Inference opens the stale program file instead of the one this run's export wrote (the
# parameters stay this run's), as an infer.py that opens `<name>.pdmodel` beside a fresh `<name>.json` does.
OPEN_STALE_MODEL = r"""
def _silent_bench_stale():
    import os
    import paddle.inference as inference
    counts = {"redirected": 0, "configs": 0}
    _silent_bench_probe(__KIND__, counts)
    root = _SILENT_BENCH_ROOT
    fresh = set(__FRESH__)
    stale = os.path.join(root, __STALE__)
    params_name = __PARAMS__
    original = inference.Config

    def fix(args):
        args = list(args)
        if not args or not isinstance(args[0], str):
            return args
        rel = os.path.relpath(os.path.realpath(args[0]), root).replace(os.sep, "/")
        if rel in fresh:
            counts["redirected"] += 1
            args[0] = stale
        elif len(args) == 1 and any(os.path.dirname(f) == rel for f in fresh):
            counts["redirected"] += 1
            args = [stale, os.path.join(args[0], params_name)]
        return args

    class Config(original):
        def __init__(self, *args):
            counts["configs"] += 1
            original.__init__(self, *fix(args))

        def set_model(self, *args):
            return original.set_model(self, *fix(args))

        def set_prog_file(self, path):
            return original.set_prog_file(self, fix([path])[0])

    inference.Config = Config
    _silent_bench_rebind(original, Config)


_silent_bench_stale()
"""

# Evaluation over a loader that yields no batch: the metric is computed on nothing.
EMPTY_LOADER = r"""
def _silent_bench_empty():
    import paddle
    counts = {"loaders": 0}
    _silent_bench_probe(__KIND__, counts)

    def _iter(self):
        counts["loaders"] += 1
        return iter(())

    paddle.io.DataLoader.__iter__ = _iter
    paddle.io.DataLoader.__len__ = lambda self: 0


_silent_bench_empty()
"""

EXIT_BEFORE_MAIN = r"""
_silent_bench_write_probe(__KIND__, {"exited": 1})
raise SystemExit(0)
"""

# Saving fails (a full disk) and the failure is printed, not raised: the script exits 0.
FAIL_QUIETLY = r"""
def _silent_bench_fail():
    import os
    import sys
    import traceback
    import paddle
    counts = {"saves_refused": 0}
    original = paddle.save

    def save(obj, path, *args, **kwargs):
        counts["saves_refused"] += 1
        raise OSError(28, "No space left on device", str(path))

    def hook(kind, value, tb):
        traceback.print_exception(kind, value, tb)
        sys.stdout.flush()
        sys.stderr.flush()
        _silent_bench_write_probe(__KIND__, counts)
        os._exit(0)

    paddle.save = save
    _silent_bench_rebind(original, save)
    sys.excepthook = hook


_silent_bench_fail()
"""

# The training engine's prediction sees a differently normalised input than Paddle Inference does.
SHIFT_INPUT = r"""
def _silent_bench_shift():
    import paddle
    counts = {"shifted": 0}
    _silent_bench_probe(__KIND__, counts)
    original = paddle.nn.Layer.__call__
    depth = [0]

    def call(self, *args, **kwargs):
        if depth[0] == 0 and args and isinstance(args[0], paddle.Tensor) and "float" in str(args[0].dtype):
            args = (args[0] * 0.9 + 0.05,) + tuple(args[1:])
            counts["shifted"] += 1
        depth[0] += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    paddle.nn.Layer.__call__ = call


_silent_bench_shift()
"""


def render(
    template: str, kind: str, script: PurePosixPath, up: int, needs_filter: bool = False, **values: object
) -> str:
    """The prelude's source: the shared helpers, the filter when it uses one, then `template`, with every
    `__NAME__` replaced by repr(value)."""
    parts = [_COMMON, _FILTER if needs_filter else "", template]
    code = "\n".join(parts)
    fills: dict[str, object] = {
        "KIND": kind,
        "SCRIPT": script.as_posix().replace("/", "_"),
        **{k.upper(): v for k, v in values.items()},
    }
    code = code.replace("__NUM__", _NUM).replace("__UP__", str(up))
    for name, value in fills.items():
        code = code.replace(f"__{name}__", repr(value))
    leftover = sorted(set(re.findall(r"__([A-Z][A-Z_]*)__", code)))
    if leftover:
        raise ValueError(f"unfilled placeholder(s) in the prelude: {leftover}")
    # Only where the script runs as the step's program: another script that imports it (train.py doing
    # `from eval import evaluate`) must not get the plant too.
    body = "\n".join(f"    {line}" if line.strip() else "" for line in code.strip("\n").splitlines())
    return f'if __name__ == "__main__":\n{body}\n'
