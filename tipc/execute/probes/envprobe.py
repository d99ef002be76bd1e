"""Print one JSON line describing the Python environment a chain will run in (tipc's environment header).

Standalone: no tipc imports, runs under any Python >= 3.6 as `python envprobe.py`, and never fails: every fact
it cannot find is null. Paddle's facts come from its generated version file, read as text (importing paddle
takes about a second of CPU; it is the fallback when that file is missing); other packages' versions come
from their installed metadata. The result is the last stdout line, after MARKER, so anything
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


def paddle_dist_version():  # type: () -> object
    """Paddle's version from its installed metadata, looked up as paddleversion.py looks it up (the working
    folder first, as under `python -c`), so that a run asks its interpreter once for both: that probe's
    answer, or None where it would import paddle (no metadata, or Python < 3.8)."""
    try:
        from importlib import metadata  # Python >= 3.8
    except ImportError:
        return None
    path = list(sys.path)
    path[0] = ""
    for dist in ("paddlepaddle-gpu", "paddlepaddle"):
        for found in metadata.distributions(name=dist, path=path):
            return str(found.version)
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


def _version_file():  # type: () -> object
    """The assignments in paddle/version/__init__.py (Paddle's setup.py writes `name = 'literal'` lines), read
    as text without importing paddle; None when paddle or that file is not there."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec("paddle")  # a top-level package: found, not imported
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = os.path.join(folder, "version", "__init__.py")
        if not os.path.isfile(path):
            continue
        values = {}  # type: dict[str, object]
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                match = re.match(r"^([A-Za-z_]\w*)\s*=\s*(.+?)\s*$", line)
                if match:
                    value = _safe(ast.literal_eval, match.group(2))
                    if value is not None:
                        values[match.group(1)] = value
        if isinstance(values.get("full_version"), str):
            return values
    return None


def _pir_and_format(facts, flag):  # type: (dict[str, object], object) -> None
    pir = _flag_on(flag)
    if pir is None:
        # paddle reads an empty value as unset (its default)
        pir = _flag_on(os.environ.get("FLAGS_enable_pir_api") or None)  # noqa: SIM112  (paddle spells it so)
    major = _safe(lambda: int(str(facts["paddle_version"]).split(".")[0]))
    if pir is None and major is not None and major != 0:
        pir = major >= 3  # Paddle 3 turns PIR on by default, 2.x off
    facts["pir"] = pir
    if major is not None and major != 0 and pir is not None:
        # develop builds report 0.0.0: the format is then unknown
        facts["export_format"] = "json+pdiparams" if (pir and major >= 3) else "pdmodel+pdiparams"


def paddle_facts():  # type: () -> dict[str, object]
    """Paddle's version, commit, build, PIR and export format. From paddle's generated version file when it is
    there (milliseconds: importing paddle costs about a second of CPU per run, paid again by every check
    that runs beside another); by importing paddle otherwise."""
    written = _safe(_version_file)
    if isinstance(written, dict):
        cuda = written.get("cuda_version")
        cuda_text = None if cuda in (None, False, "False", "", "None") else str(cuda)
        facts = {
            "paddle_version": str(written["full_version"]),
            "paddle_commit": str(written["commit"]) if written.get("commit") else None,
            "paddle_build": "gpu" if cuda_text else "cpu",
            "cuda_version": cuda_text,
            "pir": None,
            "export_format": None,
            "paddle_error": None,
        }  # type: dict[str, object]
        _pir_and_format(facts, None)
        return facts
    return imported_paddle_facts()


def imported_paddle_facts():  # type: () -> dict[str, object]
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
    _pir_and_format(facts, _safe(lambda: pd.get_flags(["FLAGS_enable_pir_api"])["FLAGS_enable_pir_api"]))
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
    facts["paddle_dist_version"] = _safe(paddle_dist_version)
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
