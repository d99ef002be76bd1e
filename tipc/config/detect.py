"""Which dialect a config is read with: what the repo's script says about itself, then config shape.

Order of evidence, from the repo's `test_tipc/test_train_inference_python.sh`:
1. an explicit `--dialect` (handled by the callers);
2. a `# tipc-dialect: NAME` marker line (the wrapper `tipc init` writes);
3. the sha256 of the exact bytes (official scripts, from the corpus), then the sha256 of the normalised text
   (`tipc.config.known_scripts.script_hash`) of scripts recorded with a dialect in `specs/templates/*.yaml`
   (our own canonical scripts, e.g. the demo's);
4. cues in the script's text (launcher flag, read limit, helper file), and for other 51-line scripts how they
   name inference logs and what their status_check writes (read from common_func.sh too);
then the config's shape. Every decision returns its reason so `plan` and `lint` can show why.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tipc.config.parse import (
    MAX_SOURCE_BYTES,
    ParsedFile,
    read_bytes_bounded,
    read_repo_text,
    split_key_value,
)
from tipc.core.errors import ConfigError

# sha256 of test_tipc/test_train_inference_python.sh -> dialect (from the corpus' expected.json files).
FINGERPRINTS: dict[str, str] = {
    "9d709bad477f2bbde15d911149e2418d19862dcc37ae6e32ac0dbcc9be0b6863": "ocr",
    "54da8a848c08470851a511b0149ff560d3213612ba53eba12b9986be98e62b24": "clas",
    "7539bfa0dfb0e7d9144b97aa55a0c3a64547842329c1c7ea32abc32c25a27f98": "det",
    "8c492e314236d665cf42d3b04bd7f75d7b17f44e97fde39191a3579b01070e9a": "seg",
    "8d76e63f50ccf59a153012212d21b4877d15702c1067d1aa5389364576ba6da7": "compact",
    "a21316a1426d1e4f603bf06dda6a7f585393d1f06b68029dfa490a9c4f5e3f39": "video",
    "4978967d0aeca0010cc96dcd4668c65f6fed865004c6afce6991cdeb85b90d43": "gan",
    "6e2d1ef692b6538e7e2313042b2e26c03578491d6efefd132fe90888caf1d278": "rec",
    "ae7f0007c1bc88c861d49f9d72ab8385d013e23f6edf37598e2ec434724489fc": "3d",
    "41b0c794b25603408119c3554949c17d9d263ba24b7fdea0576d61ffcb8df337": "speech",
    "1240f8214fb3a1e0478db94c4895aa150e43ef5699c3779f361da1003c8f35c7": "compact_v1",
    "eaaf50605278fa7bc2de5024edc1bd48099d2af59f759e07b9aabae72d490572": "compact_noweights",
    "177476a617b52e150a5716b20b52695f93e759eae16a1df5492db1390f74b673": "compact_nafnet",
    "890fe908754620e207209cdbbc8b6c2b23d4fa514e1013a85f56160c8da0f25c": "compact_fastflow",
    "814d7d0325ee3fe46eca382566d008837b25e6d3e8b18fcfbf4bf012f0e590a9": "template_rd4ad",
    "2939c3ef1d580d0ea67bebb8bdf243e5e4a4bb4804cfafa096fe89b3036de76e": "template_c3d",
    "1eaec006f9dfecc6ff4c5359ee53972d8a725576826410707320f031305ab8c2": "template_dmnet",
}

SCRIPT = Path("test_tipc") / "test_train_inference_python.sh"
HELPER = Path("test_tipc") / "common_func.sh"
MARKER = re.compile(r"^#\s*tipc-dialect:\s*([A-Za-z0-9_]+)", re.MULTILINE)
# The text a status_check echoes after `Run successfully with command - `, up to the colour reset.
_STATUS_ECHO = re.compile(r"Run successfully with command - (.*?)(?:\\033\[0m|\\e\[0m|\\x1b\[0m)")
_SHELL_VAR = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")

# Weak last-resort cues from the checkout's folder name, used only when the config's shape is generic.
_REPO_NAME_CUES: tuple[tuple[str, str], ...] = (
    ("paddleclas", "clas"),
    ("paddledetection", "det"),
    ("paddleseg", "seg"),
    ("paddlevideo", "video"),
    ("paddlegan", "gan"),
    ("paddlerec", "rec"),
    ("paddle3d", "3d"),
    ("paddlespeech", "speech"),
)


@dataclass(frozen=True)
class Detection:
    dialect: str
    reason: str


@lru_cache(maxsize=4)
def _known_scripts(directory: Path) -> dict[str, tuple[str, str]]:
    """normalised sha256 -> (dialect, origin) of the scripts recorded with a dialect in `directory`."""
    from tipc.config.known_scripts import load_template
    from tipc.core.errors import TipcError

    known: dict[str, tuple[str, str]] = {}
    for path in sorted(directory.glob("*.yaml")):
        try:
            template = load_template(path)
        except TipcError:
            continue  # a broken data file is reported by `tipc check`; detection falls back to cues
        for entry in template.files.get(SCRIPT.as_posix(), ()):
            if entry.sha256 and entry.dialect:
                known.setdefault(entry.sha256, (entry.dialect, f"{entry.origin}, {path.name}"))
    return known


def known_script_dialect(text: str, directory: Path | None = None) -> tuple[str, str] | None:
    """(dialect, origin) of a script whose normalised text is recorded with a dialect; None if unknown."""
    from tipc.config.known_scripts import script_hash, templates_dir

    try:
        where = directory or templates_dir()
    except FileNotFoundError:
        return None
    return _known_scripts(where).get(script_hash(text))


def _marker(text: str) -> Detection | None:
    from tipc.config.dialects import names

    for match in MARKER.finditer(text):
        if match.group(1) in names():
            return Detection(match.group(1), f"{SCRIPT} declares `# tipc-dialect: {match.group(1)}`")
    return None


def status_format_of(text: str) -> str | None:
    """The status-line format a status_check in `text` writes (tipc.core.results names), or None."""
    from tipc.core.results import parse_status_line

    match = _STATUS_ECHO.search(text)
    if match is None:
        return None
    body = _SHELL_VAR.sub("X", match.group(1))
    parsed = parse_status_line(f" Run successfully with command - {body}")
    return parsed.format if parsed is not None else None


def _from_51_line_cues(text: str, helper: str) -> Detection | None:
    """Template or newest PaddleOCR for a 51-line script no fingerprint knows: log names and status lines."""
    if "python_infer_cpu_batchsize_" in text:
        return None  # compact-family log names: a 32-line script, left to the config's shape
    if "python_infer_cpu_gpus_" in text:
        logs = "ocr"
    elif "python_infer_cpu_usemkldnn_" in text:
        logs = "template"
    else:
        logs = None
    status = status_format_of(text) or status_format_of(helper)
    log_cue = {
        "ocr": "names CPU inference logs python_infer_cpu_gpus_<gpu>_...",
        "template": "names CPU inference logs python_infer_cpu_usemkldnn_...",
    }
    if status == "template" and logs in ("template", None):
        cue = f"{log_cue[logs]}, " if logs else ""
        return Detection("template", f"{SCRIPT} {cue}status lines `Run ... with command - <cmd>!` (template)")
    if status in ("ocr", None) and logs == "ocr":
        cue = ", status lines `<model> - <cmd> - <log>`" if status else ""
        return Detection("ocr", f"{SCRIPT} {log_cue['ocr']}{cue} (newest PaddleOCR)")
    return None


def _from_script(repo: Path) -> Detection | None:
    # `tipc lint REPO` detects once per config of one repo: read and hash its script once per version.
    try:
        info = (repo / SCRIPT).stat()
    except OSError:
        return None
    try:
        helper = (repo / HELPER).stat()
        helper_version = (helper.st_mtime_ns, helper.st_size, helper.st_ino)
    except OSError:
        helper_version = (0, 0, 0)
    return _from_script_version(str(repo), (info.st_mtime_ns, info.st_size, info.st_ino), helper_version)


@lru_cache(maxsize=64)
def _from_script_version(
    repo_str: str, _script: tuple[int, int, int], _helper: tuple[int, int, int]
) -> Detection | None:
    repo = Path(repo_str)
    try:
        data = read_bytes_bounded(repo / SCRIPT, MAX_SOURCE_BYTES, "the test script", within=repo)
    except ConfigError:
        return None
    text = data.decode("utf-8", errors="replace")
    found = _identified_script(text, data) or _from_script_cues(text)
    if found is not None:
        return found
    try:
        helper = read_repo_text(repo / HELPER, repo, "the helper script")
    except ConfigError:
        helper = ""
    return _from_51_line_cues(text, helper)


def _identified_script(text: str, data: bytes) -> Detection | None:
    """A script that names its dialect: the marker comment, its fingerprint or its normalised fingerprint."""
    marked = _marker(text)
    if marked is not None:
        return marked
    digest = hashlib.sha256(data).hexdigest()
    if digest in FINGERPRINTS:
        return Detection(FINGERPRINTS[digest], f"script fingerprint {digest[:10]} ({SCRIPT})")
    known = known_script_dialect(text)
    if known is not None:
        return Detection(known[0], f"normalised script fingerprint of {SCRIPT} ({known[1]})")
    return None


# (strings the script contains, a string it must not contain or "", dialect, reason after the script name);
# tried in order, the 32-line compact family between the two tables.
_CUES_BEFORE_COMPACT: tuple[tuple[tuple[str, ...], str, str, str], ...] = (
    (("utils_func.sh",), "", "det", "sources utils_func.sh (PaddleDetection)"),
    (("cd deploy", "--devices="), "", "clas", "runs inference from deploy/ (PaddleClas)"),
)
_CUES_AFTER_COMPACT: tuple[tuple[tuple[str, ...], str, str, str], ...] = (
    (("deploy.yaml",), "", "seg", "passes <dir>/deploy.yaml (PaddleSeg)"),
    (("max_iters",), "", "video", "appends --max_iters (PaddleVideo)"),
    (("results.log",), "results_python.log", "rec", "logs to results.log (PaddleRec)"),
    (("_export_${Count}.log",), "", "ocr", "writes <LOG_PATH>_export_<n>.log (PaddleOCR)"),
)


def _first_cue(text: str, cues: tuple[tuple[tuple[str, ...], str, str, str], ...]) -> Detection | None:
    for needles, absent, name, reason in cues:
        if all(n in text for n in needles) and not (absent and absent in text):
            return Detection(name, f"{SCRIPT} {reason}")
    return None


def _from_script_cues(text: str) -> Detection | None:
    """The dialect a script's distinctive lines point to (None: none of them)."""
    return (
        _first_cue(text, _CUES_BEFORE_COMPACT)
        or _compact_family(text)
        or _first_cue(text, _CUES_AFTER_COMPACT)
    )


def _compact_family(text: str) -> Detection | None:
    """A script reading at most 35 config lines: which copy of the compact script it is."""
    match = re.search(r"NR==1,\s*NR==(\d+)", text)
    if not (match and int(match.group(1)) <= 35):
        return None
    reason = f"{SCRIPT} reads {match.group(1)} lines"
    if "clean_dir_key" in text:
        return Detection("compact_nafnet", f"{reason}, clean/noisy image dirs (NAFNet copy)")
    if 'eval_cmd="${python} ${eval_py}"' in text:
        return Detection("compact_noweights", f"{reason}, eval/export without trained weights")
    if '_gpus_${gpu}"' in text and "autocast" not in text:
        return Detection("compact_v1", f"{reason}, save_log <trainer>_gpus_<gpu> (older Step6 copy)")
    return Detection("compact", f"{reason} (compact)")


@dataclass(frozen=True)
class _ConfigKeys:
    """A config's physical lines and their keys, as the dialect cues read them."""

    lines: list[str]
    keys: list[str]
    text: str

    def key(self, n: int) -> str:
        return self.keys[n - 1] if 0 < n <= len(self.keys) else ""


def _from_config(parsed: ParsedFile, path: Path) -> Detection:
    lines = [line.rstrip("\r") for line in parsed.physical]
    keys = [split_key_value(line, "every_colon")[0] for line in lines]
    cfg = _ConfigKeys(lines, keys, "\n".join(lines))
    return (
        _from_config_headers(cfg)
        or _from_config_slots(cfg, path)
        or _from_folder_name(path)
        or Detection("ocr", "51-line layout (template / PaddleOCR family)")
    )


def _from_config_headers(cfg: _ConfigKeys) -> Detection | None:
    """Det, Seg, compact, Clas: an infer_mode line, an export_params header, the trainer line, `-o` keys."""
    keys, key = cfg.keys, cfg.key
    if any(k == "infer_mode" for k in keys[30:45]):
        return Detection("det", "config has an infer_mode line (PaddleDetection)")
    if "export_params" in cfg.text and re.search(r"^=+export_params=+", cfg.text, re.M):
        return Detection("seg", "config has an export_params header (PaddleSeg)")
    if key(13) == "trainer" or (len(cfg.lines) <= 40 and "trainer" in keys[10:14]):
        return Detection("compact", f"trainer list on line {keys.index('trainer') + 1} (32-line compact)")
    if key(5).startswith("-o ") and (key(20).startswith("to_static") or key(34) == "kl_quant"):
        return Detection("clas", "`-o` keys and a to_static/kl_quant slot (PaddleClas)")
    return None


def _from_config_slots(cfg: _ConfigKeys, path: Path) -> Detection | None:
    """Video, Rec, Speech, GAN and 3D: keys at known line numbers (or Speech's folder layout)."""
    key = cfg.key
    if key(20) == "amp_train" or key(25) == "-w" or key(51) == "--params_file":
        return Detection("video", "amp_train/-w/--params_file slots (PaddleVideo)")
    if key(8).startswith("runner.") or key(5).startswith("runner."):
        return Detection("rec", "runner.* keys (PaddleRec)")
    if "tests/test_tipc" in path.as_posix() or key(7).startswith("--benchmark-"):
        return Detection("speech", "tests/test_tipc layout / --benchmark-* keys (PaddleSpeech)")
    if key(5) == "##":
        if key(29) == "load" or "--load" in cfg.text:
            return Detection("gan", "no train use_gpu line and a load export key (PaddleGAN)")
        return Detection("3d", "no train use_gpu line (Paddle3D)")
    return None


def _from_folder_name(path: Path) -> Detection | None:
    """A 51-line layout inside a folder whose name points to a repo family."""
    for part in reversed(path.resolve().parts[:-1]):
        lowered = part.lower()
        for cue, name in _REPO_NAME_CUES:
            if cue in lowered:
                return Detection(name, f"51-line layout inside a folder named {part!r}")
    return None


def from_fingerprint(digest: str | None) -> str | None:
    """The dialect of a known script sha256 (None: unknown)."""
    return FINGERPRINTS.get(digest or "")


def detect(parsed: ParsedFile, path: Path, repo: Path | None) -> Detection:
    if repo is not None:
        found = _from_script(repo)
        if found is not None:
            return found
    return _from_config(parsed, path)
