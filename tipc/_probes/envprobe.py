"""Print one JSON line describing the Python environment a chain will run in (tipc's environment header).

Standalone: no tipc imports, runs under any Python >= 3.6 as `python envprobe.py`, and never fails: every fact
it cannot find is null. Imports paddle once (it takes seconds) and nothing else heavy: other packages'
versions come from their installed metadata. The result is the last stdout line, after MARKER, so anything
paddle prints while importing cannot be mistaken for it.
"""

import json
import os
import platform
import re
import subprocess
import sys
import typing  # noqa: F401  (named by the type comments: Python 3.6 has no postponed annotations)

MARKER = "TIPC_ENVPROBE "
PACKAGES = {
    "numpy": ("numpy",),
    "pillow": ("Pillow", "pillow"),
    "opencv": (
        "opencv-python",
        "opencv-python-headless",
        "opencv-contrib-python",
        "opencv-contrib-python-headless",
    ),
    "scikit-learn": ("scikit-learn",),
    "scipy": ("scipy",),
    "paddle2onnx": ("paddle2onnx",),
    "onnxruntime": ("onnxruntime", "onnxruntime-gpu"),
}


def _safe(fn, *args):  # type: (typing.Callable[..., typing.Any], *typing.Any) -> typing.Any
    try:
        return fn(*args)
    except Exception:
        return None


def _norm(name):  # type: (str) -> str
    return re.sub(r"[-_.]+", "_", name).lower()


def _scan_version(dist):  # type: (str) -> object
    """The version in a `<name>-<version>.dist-info` / `.egg-info` folder on sys.path (Python < 3.8)."""
    wanted = _norm(dist)
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            for suffix in (".dist-info", ".egg-info"):
                if name.endswith(suffix) and "-" in name:
                    stem, _, version = name[: -len(suffix)].partition("-")
                    if _norm(stem) == wanted and version:
                        return version.split("-")[0]
    return None


def dist_version(names):  # type: (tuple[str, ...]) -> object
    try:
        from importlib import metadata  # Python >= 3.8
    except ImportError:
        metadata = None  # type: ignore[assignment]
    for dist in names:
        if metadata is not None:
            try:
                return metadata.version(dist)
            except Exception:
                pass
        found = _safe(_scan_version, dist)
        if found:
            return found
    return None


def _flag_on(value):  # type: (object) -> object
    if value is None:
        return None
    text = str(value).strip().lower()
    if text in ("1", "true", "on", "yes"):
        return True
    if text in ("0", "false", "off", "no", ""):
        return False
    return None


def paddle_facts():  # type: () -> dict[str, object]
    facts = {
        "paddle_version": None,
        "paddle_commit": None,
        "paddle_build": None,
        "cuda_version": None,
        "pir": None,
        "export_format": None,
        "paddle_error": None,
    }  # type: dict[str, object]
    try:
        import paddle  # type: ignore[import-not-found,unused-ignore]  # the one slow import
    except BaseException as exc:  # SystemExit or a crash in paddle's own import
        facts["paddle_error"] = (type(exc).__name__ + ": " + str(exc))[:300]
        return facts
    pd = paddle  # type: typing.Any  # paddle's stubs do not export what it has
    version = _safe(lambda: str(pd.__version__))
    facts["paddle_version"] = version
    facts["paddle_commit"] = _safe(lambda: str(pd.version.commit))
    cuda = _safe(lambda: bool(pd.is_compiled_with_cuda()))
    if cuda is True:
        facts["paddle_build"] = "gpu"
        cuda_version = _safe(lambda: str(pd.version.cuda()))
        facts["cuda_version"] = None if cuda_version in (None, "False", "") else cuda_version
    elif cuda is False:
        facts["paddle_build"] = "cpu"
    pir = _safe(lambda: pd.get_flags(["FLAGS_enable_pir_api"])["FLAGS_enable_pir_api"])
    pir = _flag_on(pir)
    if pir is None:
        pir = _flag_on(os.environ.get("FLAGS_enable_pir_api"))  # noqa: SIM112  (paddle spells it so)
    major = _safe(lambda: int(str(version).split(".")[0]))
    if pir is None and major is not None and major != 0:
        pir = major >= 3  # Paddle 3 turns PIR on by default, 2.x off
    facts["pir"] = pir
    if major is not None and major != 0 and pir is not None:
        # develop builds report 0.0.0: the format is then unknown
        facts["export_format"] = "json+pdiparams" if (pir and major >= 3) else "pdmodel+pdiparams"
    return facts


def cpu_model():  # type: () -> object
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Processor", "cpu model") and value.strip():
                return value.strip()
    return platform.processor() or None


def memory_total():  # type: () -> object
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return None


def gpus():  # type: () -> object
    """GPU names from nvidia-smi; [] when it is not on PATH (no NVIDIA GPU to speak of), None if it failed."""
    path_dirs = os.environ.get("PATH", "").split(os.pathsep)
    if not any(os.access(os.path.join(d, "nvidia-smi"), os.X_OK) for d in path_dirs if d):
        return []
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        timeout=15,
    )
    if out.returncode != 0:
        return None
    return [line.strip() for line in out.stdout.decode("utf-8", "replace").splitlines() if line.strip()]


def main():  # type: () -> None
    facts = {"probe": 1}  # type: dict[str, object]
    facts["python_version"] = _safe(lambda: platform.python_version())
    facts["python_executable"] = _safe(lambda: sys.executable)
    facts["platform"] = _safe(lambda: platform.platform())
    facts.update(paddle_facts())
    facts["packages"] = {key: _safe(dist_version, names) for key, names in PACKAGES.items()}
    facts["cpu_model"] = _safe(cpu_model)
    facts["cpu_count"] = _safe(os.cpu_count)
    facts["memory_total_bytes"] = _safe(memory_total)
    facts["gpus"] = _safe(gpus)
    sys.stdout.flush()
    sys.stdout.write("\n" + MARKER + json.dumps(facts, sort_keys=True, default=str) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
