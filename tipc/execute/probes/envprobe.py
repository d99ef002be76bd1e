"""Print one JSON line describing the Python environment a chain will run in (tipc's environment header).

Standalone: no tipc imports, runs under any Python >= 3.6 as `python envprobe.py`, and never fails: every fact
it cannot find is null. Paddle's facts come from its generated version file, read as text (importing paddle
takes about a second of CPU; it is the fallback when that file is missing); other packages' versions come
from their installed metadata. The result is the last stdout line, after MARKER, so anything
paddle prints while importing cannot be mistaken for it.
"""

import json
import os
import re
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


class _Installed:
    """importlib.metadata.version as Python >= 3.10 finds it (its path finder's lookup of `<name>-*.dist-info`
    and `.egg-info` entries, in sys.path order; the Version header of METADATA, PKG-INFO or the file itself),
    without importing importlib.metadata (email, zipfile, csv: most of this probe's CPU) and listing each
    folder once for every name asked. Used only where that finder is the only one that finds distributions
    and the path has no zip archive; importlib.metadata answers otherwise."""

    def __init__(self, path):  # type: (list[str]) -> None
        self.path = path
        self._listed = {}  # type: dict[str, dict[str, list[str]]]

    @staticmethod
    def usable(path):  # type: (list[str]) -> bool
        if tuple(sys.version_info[:2]) < (3, 10):  # the finder it follows is 3.10's
            return False
        finders = [f for f in sys.meta_path if getattr(f, "find_distributions", None) is not None]
        if [getattr(f, "__name__", None) for f in finders] != ["PathFinder"]:
            return False
        return not any(os.path.isfile(entry) for entry in path if entry)

    def _infos(self, root):  # type: (str) -> dict[str, list[str]]
        if root not in self._listed:
            infos = {}  # type: dict[str, list[str]]
            try:
                children = os.listdir(root or ".")
            except OSError:  # importlib.metadata's FastPath: an unreadable entry has no children
                children = []
            egg = os.path.basename(root).lower().endswith(".egg")
            for child in children:
                low = child.lower()
                if low.endswith((".dist-info", ".egg-info")):
                    name = low.rpartition(".")[0].partition("-")[0]
                    infos.setdefault(re.sub(r"[-_.]+", "-", name).lower().replace("-", "_"), []).append(
                        os.path.join(root, child)
                    )
                elif egg and low == "egg-info":
                    name = os.path.basename(root).lower().rpartition(".")[0].partition("-")[0]
                    infos.setdefault("egg " + name.lower().replace("-", "_"), []).append(
                        os.path.join(root, "EGG-INFO")
                    )
            self._listed[root] = infos
        return self._listed[root]

    def version(self, dist):  # type: (str) -> object
        """The version, None where the first match has no Version header; LookupError where none matches."""
        normalized = re.sub(r"[-_.]+", "-", dist).lower().replace("-", "_")
        legacy = dist.lower().replace("-", "_")
        for root in self.path:
            infos = self._infos(root)
            for found in infos.get(normalized, []) + infos.get("egg " + legacy, []):
                return _version_header(_metadata_text(found))
        raise LookupError(dist)


def _metadata_text(found):  # type: (str) -> str
    for name in ("METADATA", "PKG-INFO", ""):
        try:
            with open(os.path.join(found, name) if name else found, encoding="utf-8") as fh:
                text = fh.read()
        except OSError:  # missing, a folder, not a folder, no permission: as importlib's read_text
            continue
        if text:
            return text
    return ""


def _version_header(text):  # type: (str) -> object
    """The first Version header of an email-style header block, as email's compat32 parser reads it."""
    value = None  # type: typing.Optional[str]
    # line by line with their ends (\r\n, \r or \n), lazily: the headers end long before a long description
    for found in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z", text):
        line = found.group()
        if line[0] in " \t":  # a folded header's next line
            if value is not None:
                value += line
            continue
        if value is not None or not re.match(r"[\041-\071\073-\176]*:", line):
            break  # the first Version header is complete, or the headers ended
        head, _, rest = line.partition(":")
        if head.lower() == "version":
            value = rest.lstrip(" \t")
    return value.rstrip("\r\n") if value is not None else None


def dist_version(names, installed=None):  # type: (tuple[str, ...], typing.Optional[_Installed]) -> object
    try:
        if installed is not None:
            raise ImportError  # not needed
        from importlib import metadata  # Python >= 3.8
    except ImportError:
        metadata = None  # type: ignore[assignment]
    for dist in names:
        if installed is not None:
            try:
                return installed.version(dist)
            except Exception:
                pass
        elif metadata is not None:
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
    path = list(sys.path)
    path[0] = ""
    if _Installed.usable(path):
        installed = _Installed(path)
        for dist in ("paddlepaddle-gpu", "paddlepaddle"):
            try:
                return str(installed.version(dist))
            except LookupError:
                pass
        return None
    try:
        from importlib import metadata  # Python >= 3.8
    except ImportError:
        return None
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
    import platform

    return platform.processor() or None


def platform_string():  # type: () -> str
    """What platform.platform() says on Linux where `uname -p` names no processor
    (`Linux-6.1.0-x86_64-with-glibc2.36`), without its cost: it starts `uname -p` and scans the interpreter's
    binary for its libc, about 20 ms of CPU in a probe whose budget is a run's fixed cost (issue 27)."""
    if not sys.platform.startswith("linux"):
        import platform

        return platform.platform()
    uname = os.uname()
    text = "-".join((uname.sysname, uname.release, uname.machine))
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""  # "glibc 2.36"
    except (ValueError, OSError):
        libc = ""
    name, _, version = libc.partition(" ")
    return text + ("-with-" + name + version if name and version else "")


def python_version():  # type: () -> str
    """platform.python_version() without importing platform: the version word of sys.version."""
    return sys.version.split()[0]


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
    import subprocess  # only where nvidia-smi is there to run: its import is a tenth of the probe's CPU

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
    facts["python_version"] = _safe(python_version)
    facts["python_executable"] = _safe(lambda: sys.executable)
    facts["platform"] = _safe(platform_string)
    facts.update(paddle_facts())
    facts["paddle_dist_version"] = _safe(paddle_dist_version)
    installed = _Installed(sys.path) if _Installed.usable(sys.path) else None
    facts["packages"] = {key: _safe(dist_version, names, installed) for key, names in PACKAGES.items()}
    facts["cpu_model"] = _safe(cpu_model)
    facts["cpu_count"] = _safe(os.cpu_count)
    facts["memory_total_bytes"] = _safe(memory_total)
    facts["gpus"] = _safe(gpus)
    sys.stdout.flush()
    sys.stdout.write("\n" + MARKER + json.dumps(facts, sort_keys=True, default=str) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
