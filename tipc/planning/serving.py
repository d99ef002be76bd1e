"""Plan the Python serving chain (`test_serving_infer_python.sh`) from a repo's unchanged serving config.

Two layouts, read by position like the scripts do (common_func.sh splitting: key = field 0 of a split on every
`:`, value = field 1; blank lines vanish from the line array):

* models tutorial `serving_infer_python.txt` (13-18 lines): trans_model + 5 conversion args, serving_dir,
  web_service, optional `...devices` / option lines, `pipline:` client, image argument.
* PaddleOCR `model_linux_gpu_normal_normal_serving_python_linux_gpu_cpu.txt` (23 lines): det/rec conversions,
  serving_dir, web_service with `--opt`, devices (gpu|null) x mkldnn x threads / trt x precision, model_config
  keys, `pipline:` client, image argument.

What tipc does differently from the scripts, on purpose (tipc-format.md §11): the server is a background step
polled for readiness (never a fixed sleep, never `ps | grep | kill -9`); logs land under the plan's output dir
even though the script changes directory first; steps that need Paddle Serving carry `requires_modules`, so a
runner without it records them SKIPPED with `PADDLE_SERVING_REASON` instead of failing.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tipc.core.errors import ConfigError, UserError
from tipc.core.findings import Finding, Level
from tipc.core.steps import Mode, Overrides, Plan, Stage, Step

PADDLE_SERVING_REASON = (
    "Paddle Serving is not installable with Paddle >= 2.5 / Python >= 3.10 (needs paddle.fluid)"
)
CHAIN = "serving"
DEFAULT_MODE = Mode.SERVING_INFER
_SERVING_IMPORT = re.compile(r"^\s*(?:from|import)\s+(paddle_serving_\w+)", re.MULTILINE)
_HTTP_PORT = re.compile(r"^http_port:\s*(\d+)", re.MULTILINE)
TIPC_SERVE_DEFAULT_PORT = 9998
_NO_OVERRIDES = Overrides()


@dataclass(frozen=True)
class Line:
    """One entry of the script's line array: 0-based index there, 1-based physical line in the file."""

    index: int
    lineno: int
    text: str

    @property
    def key(self) -> str:
        return self.text.split(":")[0]

    @property
    def value(self) -> str:
        fields = self.text.split(":")
        return fields[1] if len(fields) > 1 else ""


def _set_param(key: str, value: str) -> list[str]:
    """common_func `func_set_params`: nothing for a null/empty key or value, else `key=value`."""
    if key.strip() in ("", "null") or value.strip() in ("", "null"):
        return []
    return [f"{key}={value}"]


def _read_lines(path: Path, overrides: Overrides) -> tuple[list[Line], list[Finding]]:
    """The line array, read through tipc.config's parser (size, file kind, NUL and UTF-8 checks with a
    located error; BOM dropped; physical lines). Unlike a train config's array, `\\r` is stripped and a line
    of blanks dropped (tipc.serve's reading since it began; the findings say where that departs)."""
    from tipc.config.parse import parse_text, read_text

    physical = parse_text(read_text(path), str(path)).physical
    findings: list[Finding] = []
    lines: list[Line] = []
    last_filled = max((n for n, t in enumerate(physical, 1) if t.strip()), default=0)
    for lineno, text in enumerate(physical, start=1):
        if text.endswith("\r"):
            findings.append(
                Finding(
                    str(path),
                    lineno,
                    1,
                    Level.WARNING,
                    "TIPC-CRLF",
                    "CRLF line ending: the bash script keeps '\\r' in this value; tipc strips it",
                )
            )
            text = text[:-1]
        if text.strip() == "":
            if lineno < last_filled:  # only a blank before a later entry moves that entry's slot
                findings.append(
                    Finding(
                        str(path),
                        lineno,
                        1,
                        Level.WARNING,
                        "TIPC-BLANK",
                        "blank line: the script drops it and reads every later slot one line early",
                    )
                )
            continue
        lines.append(Line(len(lines), lineno, text))
    for key, value in overrides.sets:
        hits = [ln for ln in lines if ln.key == key]
        if not hits:
            raise UserError(f"--set {key}={value}: {path} has no line with key {key!r}")
        for ln in hits:
            lines[ln.index] = Line(ln.index, ln.lineno, f"{key}:{value}")
    return lines, findings


def _expect(path: Path, lines: list[Line], index: int, what: str, *, key: str | None = None) -> Line:
    if index >= len(lines):
        last = lines[-1].lineno if lines else 1
        raise ConfigError(str(path), last, f"serving config ends early: expected {what} on entry {index + 1}")
    line = lines[index]
    if key is not None and not (line.key == key or line.key.startswith(key)):
        raise ConfigError(str(path), line.lineno, f"expected {what} ({key}:...), found {line.text!r}")
    return line


def _find_repo(config: Path) -> Path:
    for parent in config.resolve().parents:
        if parent.name == "test_tipc":
            return parent.parent
    return Path.cwd().resolve()


def _module_requirements(argv: list[str], cwd: Path) -> tuple[str, ...]:
    """paddle_serving_* modules a command needs: its `-m` module, or what its script imports."""
    if "-m" in argv[1:]:
        module = argv[argv.index("-m", 1) + 1] if argv.index("-m", 1) + 1 < len(argv) else ""
        top = module.split(".")[0]
        return (top,) if top.startswith("paddle_serving_") else ()
    script = next((a for a in argv[1:] if a.endswith(".py")), None)
    if script is None:
        return ()
    try:
        source = (cwd / script).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    return tuple(sorted(set(_SERVING_IMPORT.findall(source))))


def _ready_url(argv: list[str], serving_dir: Path) -> str | None:
    """tipc serve: its v2 readiness URL; a Paddle Serving web service: tcp on config.yml's http_port."""
    if argv[1:3] == ["-m", "tipc"] and "serve" in argv:
        port = TIPC_SERVE_DEFAULT_PORT
        for i, token in enumerate(argv):
            if token == "--port" and i + 1 < len(argv) and argv[i + 1].isdigit():
                port = int(argv[i + 1])
            elif token.startswith("--port=") and token[7:].isdigit():
                port = int(token[7:])
        return f"http://127.0.0.1:{port}/v2/health/ready"
    for token in argv:
        if token.startswith("--config="):
            name = token.split("=", 1)[1]
            break
    else:
        name = "config.yml"
    try:
        match = _HTTP_PORT.search((serving_dir / name).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None
    return f"tcp://127.0.0.1:{match.group(1)}" if match else None


def _rel(*parts: str) -> str:
    """A repo-relative path, joined and normalised (scripts write `../../log/...` from the serving dir)."""
    joined = posixpath.normpath(posixpath.join(*parts))
    return joined[2:] if joined.startswith("./") else joined


def _split(value: str, path: Path, line: Line) -> list[str]:
    try:
        return shlex.split(value)
    except ValueError as exc:
        raise ConfigError(
            str(path), line.lineno, f"cannot split {value!r} like the shell does: {exc}"
        ) from None


def _requirements(modules: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    return (modules, PADDLE_SERVING_REASON) if modules else ((), "")


def _status(argv: list[str], log: str | None) -> str:
    text = " ".join(argv)
    return f"{text} > {log} 2>&1 " if log else text


def plan_serving(
    config: Path, *, repo: Path | None = None, overrides: Overrides = _NO_OVERRIDES, mode: Mode = DEFAULT_MODE
) -> Plan:
    lines, findings = _read_lines(config, overrides)
    if not lines or "serving" not in lines[0].text or not lines[0].text.startswith("="):
        raise ConfigError(
            str(config),
            lines[0].lineno if lines else 1,
            "not a Python serving config: expected a '===...serving_params...===' header first",
        )
    if "serving_infer_python_params" in lines[0].text:
        raise ConfigError(
            str(config),
            lines[0].lineno,
            "PaddleDetection serving layout (serving_infer_python_params) is not supported yet",
        )
    if "cpp" in config.name.lower() or any(ln.key.strip() in ("cpp_client", "--op") for ln in lines):
        raise ConfigError(
            str(config),
            lines[0].lineno,
            "C++ serving config (test_serving_infer_cpp.sh): only the Python serving chain is planned",
        )
    root = (repo or _find_repo(config)).resolve()
    model = _expect(config, lines, 1, "the model name", key="model_name").value.strip()
    python_line = _expect(config, lines, 2, "the interpreter", key="python")
    python = overrides.python or python_line.value.split("|")[0].strip()
    if not python:
        raise ConfigError(str(config), python_line.lineno, "empty python: value")
    _expect(config, lines, 3, "the conversion command", key="trans_model")
    is_ocr = len(lines) > 4 and "det_dirname" in lines[4].key
    build = _plan_ocr if is_ocr else _plan_models
    steps, output_dir, results_log, dialect, more = build(config, lines, root, python, model, mode, overrides)
    return Plan(
        config_path=str(config),
        repo=str(root),
        mode=mode,
        dialect=dialect,
        model_name=model,
        output_dir=output_dir,
        results_log=results_log,
        # status_check gets the model name: compact (models) / ocr lines (tipc.core.results.STATUS_FORMATS).
        status_format="ocr" if is_ocr else "compact",
        steps=tuple(steps),
        findings=tuple(dict.fromkeys(findings + more)),  # one finding per line, not one per variant
        overrides=overrides,
        chain=CHAIN,
    )


_Built = tuple[list[Step], str, str, str, list[Finding]]


def _server_client(
    *,
    config: Path,
    root: Path,
    python: str,
    serving_dir: str,
    server_args: list[str],
    server_line: Line,
    client_line: Line,
    image_line: Line | None,
    label: str,
    server_log: str,
    client_log: str,
    client_log_shown: str,
    depends_on: tuple[str, ...],
    env: tuple[tuple[str, str], ...] = (),
) -> tuple[list[Step], list[Finding]]:
    findings: list[Finding] = []
    cwd = root / serving_dir
    server_argv = [python, *server_args]
    server_needs = _module_requirements(server_argv, cwd)
    ready = _ready_url(server_argv, cwd)
    if ready is None:
        findings.append(
            Finding(
                str(config),
                server_line.lineno,
                1,
                Level.WARNING,
                "TIPC-SERVE-READY",
                f"no http_port found in {serving_dir}/config.yml: the server's readiness cannot be"
                " polled; tipc waits for its port to open only if it finds one",
            )
        )
    server_id = f"serving/server/{label}"
    server = Step(
        id=server_id,
        stage=Stage.SERVE,
        argv=tuple(server_argv),
        cwd=serving_dir,
        env=env,
        log=server_log,
        depends_on=depends_on,
        status_command=_status(server_argv, None) + " &",
        background=True,
        ready_url=ready,
        source_lines=(server_line.lineno,),
        requires_modules=_requirements(server_needs)[0],
        requires_reason=_requirements(server_needs)[1],
    )
    steps = [server]
    for script in client_line.value.split("|"):
        script = script.strip()
        if script in ("", "null"):
            continue
        client_argv = [python, script]
        lines_used = [client_line.lineno]
        if image_line is not None:
            client_argv += _set_param(image_line.key, image_line.value)
            lines_used.append(image_line.lineno)
        needs = tuple(sorted(set(server_needs) | set(_module_requirements(client_argv, cwd))))
        steps.append(
            Step(
                id=f"serving/client/{label}/{script}",
                stage=Stage.CLIENT,
                argv=tuple(client_argv),
                cwd=serving_dir,
                env=env,
                log=client_log.replace("{client}", script.split("_client")[0]),
                depends_on=(server_id,),
                status_command=_status(
                    client_argv, client_log_shown.replace("{client}", script.split("_client")[0])
                ),
                source_lines=tuple(lines_used),
                requires_modules=_requirements(needs)[0],
                requires_reason=_requirements(needs)[1],
            )
        )
    return steps, findings


def _convert_step(
    step_id: str,
    python: str,
    trans: list[str],
    args: list[str],
    log: str,
    lines_used: tuple[int, ...],
    root: Path,
) -> Step:
    argv = [python, *trans, *args]
    needs = _module_requirements(argv, root)
    return Step(
        id=step_id,
        stage=Stage.EXPORT,
        argv=tuple(argv),
        log=log,
        status_command=_status(argv, log),
        source_lines=lines_used,
        requires_modules=_requirements(needs)[0],
        requires_reason=_requirements(needs)[1],
    )


@dataclass(frozen=True)
class _ModelsChain:
    """What every server/client pair of the models layout shares."""

    config: Path
    root: Path
    python: str
    serving_dir: str
    web_line: Line
    client_line: Line
    image_line: Line | None
    depends_on: tuple[str, ...]

    def pair(
        self, server_args: list[str], label: str, server_log: str, client_log: str, client_log_shown: str
    ) -> tuple[list[Step], list[Finding]]:
        return _server_client(
            config=self.config,
            root=self.root,
            python=self.python,
            serving_dir=self.serving_dir,
            server_args=server_args,
            server_line=self.web_line,
            client_line=self.client_line,
            image_line=self.image_line,
            label=label,
            server_log=server_log,
            client_log=client_log,
            client_log_shown=client_log_shown,
            depends_on=self.depends_on,
        )


def _plan_models(
    config: Path, lines: list[Line], root: Path, python: str, model: str, mode: Mode, overrides: Overrides
) -> _Built:
    output_dir = f"log/{model}/{mode}"
    trans_line = lines[3]
    conv = [
        _expect(config, lines, i, what)
        for i, what in enumerate(
            (
                "the model dir",
                "the model filename",
                "the params filename",
                "the serving server dir",
                "the serving client dir",
            ),
            start=4,
        )
    ]
    serving_dir = _rel(_expect(config, lines, 9, "the serving dir", key="serving_dir").value.strip())
    web_line = _expect(config, lines, 10, "the web service", key="web_service")
    convert = _models_convert(
        config, trans_line, conv, root, python, f"{output_dir}/python_trans_model_{model}.log"
    )
    steps = [convert] if convert is not None else []
    options, client_line, image_line = _models_options(config, lines, web_line)
    device_line = next((ln for ln in options if "devices" in ln.key), None)
    fixed = [a for ln in options if ln is not device_line for a in _set_param(ln.key.strip(), ln.value)]
    web_args = _split(web_line.value, config, web_line)
    depends = (convert.id,) if convert is not None else ()
    chain = _ModelsChain(config, root, python, serving_dir, web_line, client_line, image_line, depends)
    if device_line is None:
        built, more = chain.pair(
            [*web_args, *fixed],
            "default",
            f"{output_dir}/python_server.log",
            f"{output_dir}/server_infer_gpu_batchsize_1.log",
            f"../../log/{model}/{mode}/server_infer_gpu_batchsize_1.log",
        )
        return [*steps, *built], output_dir, f"{output_dir}/results_serving.log", "models_serving", more
    built, findings = _models_per_device(chain, [*web_args, *fixed], device_line, overrides, output_dir)
    return [*steps, *built], output_dir, f"{output_dir}/serving_infer_python.log", "models_serving", findings


def _models_convert(
    config: Path, trans_line: Line, conv: list[Line], root: Path, python: str, log: str
) -> Step | None:
    """The model conversion step, unless the trans_model slot is empty."""
    if trans_line.value.strip() in ("", "null"):
        return None
    args = [p for ln in conv for p in _set_param(ln.key, ln.value)]
    return _convert_step(
        "serving/convert",
        python,
        _split(trans_line.value, config, trans_line),
        args,
        log,
        (trans_line.lineno, *(ln.lineno for ln in conv)),
        root,
    )


def _models_options(config: Path, lines: list[Line], web_line: Line) -> tuple[list[Line], Line, Line | None]:
    """The option lines after web_service, the client line and the image line after it."""
    # Between web_service and the client line: option lines; the one whose key names `devices` is the loop.
    index = 11
    options: list[Line] = []
    while index < len(lines) and not lines[index].key.startswith(("pipline", "pipeline")):
        options.append(lines[index])
        index += 1
    if index >= len(lines):
        raise ConfigError(
            str(config),
            web_line.lineno,
            "no client line (pipline:<script>) after web_service: the serving chain has no client",
        )
    image_line = lines[index + 1] if index + 1 < len(lines) else None
    return options, lines[index], image_line


def _models_per_device(
    chain: _ModelsChain, args: list[str], device_line: Line, overrides: Overrides, output_dir: str
) -> tuple[list[Step], list[Finding]]:
    """A server/client pair per value of the devices line (--device cpu: the slot's CPU form, once)."""
    device_key = device_line.key.strip()
    devices = [d.strip().strip('"') for d in device_line.value.split("|")]
    if overrides.device == "cpu":
        devices = ["null"]  # --device cpu: the slot's CPU form, once
    steps: list[Step] = []
    findings: list[Finding] = []
    for device in devices:
        on_cpu = device in ("null", "", "cpu")
        label = "cpu" if on_cpu else "gpu"
        setting = f"{device_key}=" if on_cpu else f"{device_key}={device}"
        # `--opt key:value` lines: the key carries `--opt `; shlex keeps the pieces apart like bash would.
        built, more = chain.pair(
            [*args, *_split(setting, chain.config, device_line)],
            label,
            f"{output_dir}/python_server_{label}.log",
            f"{output_dir}/python_client_{label}.log",
            f"{output_dir}/python_client_{label}.log",
        )
        steps += built
        findings += more
    return steps, findings


def _ocr_variants(
    device: str, option_lines: list[Line], model_cfg: list[str]
) -> list[tuple[str, list[str], str]] | None:
    """(label, server args, log stem) of each server the PaddleOCR script starts on `device` ("null": CPU
    with mkldnn x threads; "gpu": trt x precision); None for any other device (the script runs nothing)."""
    gpu_line, mkldnn_line, threads_line, trt_line, precision_line = option_lines
    variants: list[tuple[str, list[str], str]] = []
    if device == "null":
        for mkldnn in mkldnn_line.value.split("|"):
            for threads in threads_line.value.split("|"):
                label = f"cpu/usemkldnn_{mkldnn}/threads_{threads}"
                args = [
                    f"{gpu_line.key}=",
                    f"{mkldnn_line.key}={mkldnn}",
                    *_set_param(threads_line.key, threads),
                    *model_cfg,
                ]
                variants.append((label, args, f"cpu_{{client}}_usemkldnn_{mkldnn}_threads_{threads}"))
    elif device == "gpu":
        for trt in trt_line.value.split("|"):
            for precision in precision_line.value.split("|"):
                if precision in ("fp16", "int8") and trt == "False":
                    continue  # the script's only skip rule that fires (its _flag_quant is never set)
                label = f"gpu/usetrt_{trt}/precision_{precision}"
                args = [
                    *_set_param(trt_line.key, trt),
                    *_set_param(precision_line.key, precision),
                    *model_cfg,
                ]
                variants.append((label, args, f"gpu_{{client}}_usetrt_{trt}_precision_{precision}"))
    else:
        return None
    return variants


def _plan_ocr(
    config: Path, lines: list[Line], root: Path, python: str, model: str, mode: Mode, overrides: Overrides
) -> _Built:
    output_dir = f"test_tipc/output/{model}/{mode}/python"
    need = [_expect(config, lines, i, f"entry {i + 1} of the PaddleOCR serving layout") for i in range(23)]
    trans = need[3]
    model_file, params_file = need[5], need[6]
    det = {"dirname": need[4], "server": need[7], "client": need[8]}
    rec = {"dirname": need[9], "server": need[10], "client": need[11]}
    serving_dir = _rel(_expect(config, lines, 12, "the serving dir", key="serving_dir").value.strip())
    web_line = _expect(config, lines, 13, "the web service", key="web_service")
    gpu_line = need[14]
    det_cfg_line, rec_cfg_line = need[19], need[20]
    client_line = _expect(config, lines, 21, "the client script", key="pipline")
    image_line = need[22]

    def basename(line: Line) -> str:
        parts = [p for p in line.value.split("/") if p]
        return parts[-1] if parts else ""

    both = model in ("ch_PP-OCRv2", "ch_PP-OCRv3", "ch_ppocr_mobile_v2.0", "ch_ppocr_server_v2.0")
    use_det = both or "det" in model
    use_rec = both or (not use_det and "rec" in model)
    steps: list[Step] = []
    trans_argv = _split(trans.value, config, trans)
    file_args = [
        *_set_param(model_file.key, model_file.value),
        *_set_param(params_file.key, params_file.value),
    ]
    for part, use in (("det", use_det), ("rec", use_rec)):
        if not use:
            continue
        src = det if part == "det" else rec
        args = [
            *_set_param("--dirname", src["dirname"].value),
            *file_args,
            *_set_param("--serving_server", src["server"].value),
            *_set_param("--serving_client", src["client"].value),
        ]
        used = (
            trans.lineno,
            src["dirname"].lineno,
            model_file.lineno,
            params_file.lineno,
            src["server"].lineno,
            src["client"].lineno,
        )
        steps.append(
            _convert_step(
                f"serving/convert_{part}",
                python,
                trans_argv,
                args,
                f"{output_dir}/python_trans_model_{part}.log",
                used,
                root,
            )
        )
    depends = tuple(s.id for s in steps)
    model_cfg: list[str] = []
    if use_det:
        model_cfg += _set_param(det_cfg_line.key, basename(det["server"]))
    if use_rec:
        model_cfg += _set_param(rec_cfg_line.key, basename(rec["server"]))
    web_args = _split(web_line.value, config, web_line)
    findings: list[Finding] = []
    devices = [d.strip() for d in gpu_line.value.split("|")]
    if overrides.device == "cpu":
        devices = ["null"]
    for device in devices:
        variants = _ocr_variants(device, need[14:19], model_cfg)
        if variants is None:
            variants = []
            findings.append(
                Finding(
                    str(config),
                    gpu_line.lineno,
                    1,
                    Level.WARNING,
                    "TIPC-SERVE-DEVICE",
                    f"device {device!r} is neither 'gpu' nor 'null': the script runs nothing for it",
                )
            )
        for label, args, log_stem in variants:
            server_log = f"{output_dir}/python_server_{log_stem.replace('_{client}', '')}.log"
            client_log = f"{output_dir}/python_client_{log_stem}_batchsize_1.log"
            built, more = _server_client(
                config=config,
                root=root,
                python=python,
                serving_dir=serving_dir,
                server_args=[*web_args, *args],
                server_line=web_line,
                client_line=client_line,
                image_line=image_line,
                label=label,
                server_log=server_log,
                client_log=client_log,
                client_log_shown=client_log,
                depends_on=depends,
            )
            steps += built
            findings += more
    return steps, output_dir, f"{output_dir}/results_python_serving.log", "ocr_serving", findings


# --- isolation: `tipc run` writes only under test_tipc/output -----------------------------------------------

# Keys of conversion arguments that name a folder the conversion writes (Paddle Serving's converter, export
# scripts standing in for it). Inputs (--dirname, --model_dir, --pretrained) are never moved.
_OUTPUT_KEY = re.compile(
    r"(serving_server|serving_client|save_inference_dir|save_dir|output_dir|output_path|save_path)$"
)
ISOLATED_ROOT = "test_tipc/output"


def _norm(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/"))


def _inside(path: str, folder: str) -> bool:
    return path == folder or folder == "." or path.startswith(folder.rstrip("/") + "/")


def _within_repo(rel: str) -> bool:
    return not posixpath.isabs(rel) and rel != ".." and not rel.startswith("../")


def _moved(path: str | None, old: str, new: str) -> str | None:
    """A repo-relative path under `old` moved under `new`; other paths unchanged."""
    if path is None:
        return None
    norm = _norm(path)
    if not _inside(norm, old):
        return path
    return new + norm[len(old) :]


def _split_token(token: str) -> tuple[str, str]:
    """(prefix, value) of an argv token: `--k=v` / `k=v` -> ("--k=", "v"); a bare word -> ("", word)."""
    key, sep, value = token.partition("=")
    if sep and not key.startswith(("/", ".")):
        return key + sep, value
    return "", token


def _move_outputs(
    step: Step, new_out: str, moves: dict[str, str], client_side: set[str], note: Callable[..., None]
) -> tuple[str, ...]:
    """A conversion step's argv with every output folder inside the repo moved under `new_out` (recorded
    in `moves`, old -> new, repo-relative; client-side copies also in `client_side`)."""
    argv = list(step.argv)
    for i, token in enumerate(argv):
        prefix, value = _split_token(token)
        key = prefix.rstrip("=").lstrip("-").lower()
        if not key and i > 0 and argv[i - 1].startswith("-") and "=" not in argv[i - 1]:
            key = argv[i - 1].lstrip("-").lower()  # `--serving_server DIR`
        if not _OUTPUT_KEY.search(key) or value.strip() in ("", "null"):
            continue
        rel = _norm(posixpath.join(step.cwd, value))
        if rel == "." or not _within_repo(rel) or _inside(rel, new_out):
            continue
        target = f"{new_out}/{rel}"
        moves[rel] = target
        if "client" in key:
            client_side.add(rel)  # the client's own copy of the model config: no server reads it
        trailing = "/" if value.endswith("/") else ""
        new_value = posixpath.relpath(target, _norm(step.cwd)) + trailing
        argv[i] = prefix + new_value
        note(step, f"{step.id}: {key} {value} -> {new_value} (a folder the conversion writes)")
    return tuple(argv)


def _follow_moves(
    step: Step, argv: list[str], status: str, moves: dict[str, str], read: set[str], note: Callable[..., None]
) -> str:
    """Rewrite (in place) every argument of `argv` naming a moved folder, from the step's cwd; the moved
    folders it reads go into `read`. Returns the status command with the same rewrites."""
    for i, token in enumerate(argv):
        prefix, value = _split_token(token)
        if value.strip() in ("", "null") or "://" in value:
            continue
        rel = _norm(posixpath.join(step.cwd, value))
        hit = next((old for old in moves if _inside(rel, old)), None)
        if hit is None:
            continue
        read.add(hit)
        target = moves[hit] + rel[len(hit) :]
        trailing = "/" if value.endswith("/") else ""
        new_value = posixpath.relpath(target, _norm(step.cwd)) + trailing
        argv[i] = prefix + new_value
        status = status.replace(value, new_value)
        note(step, f"{step.id}: {value} -> {new_value} (reads what the conversion wrote)")
    return status


def isolate_serving(plan: Plan) -> Plan:
    """The same serving chain writing only under `test_tipc/output/<model>/<mode>/`.

    `tipc plan` shows the faithful commands (the models tutorial script logs to `log/<model>/<mode>/` and
    converts into folders of the repo); `tipc run` and `tipc check` run this plan instead: its output dir,
    results log and logs move under test_tipc/output, each conversion output folder inside the repo moves
    under the output dir (keeping its relative path), and every server/client argument that reads such a
    folder (resolved from the step's cwd) is rewritten to the new place. One WARNING finding (TIPC-ISOLATE)
    per rewrite says what moved. Pure: no I/O. Plans of other chains are returned unchanged.
    """
    from dataclasses import replace

    if plan.chain != CHAIN:
        return plan
    findings: list[Finding] = []
    config = plan.config_path

    def note(step: Step | None, message: str, level: Level = Level.INFO) -> None:
        # INFO: a deliberate difference of tipc's, not a problem of the config (lint and run stay quiet).
        line = step.source_lines[0] if step is not None and step.source_lines else 1
        findings.append(Finding(config, line, 1, level, "TIPC-ISOLATE", message))

    old_out = _norm(plan.output_dir)
    new_out = old_out
    if not _inside(old_out, ISOLATED_ROOT):
        new_out = f"{ISOLATED_ROOT}/{plan.model_name}/{plan.mode}"
        note(None, f"logs: {old_out}/ -> {new_out}/ (tipc writes only under {ISOLATED_ROOT})")
    results_log = _moved(plan.results_log, old_out, new_out) or plan.results_log

    # 1. Conversion outputs inside the repo -> under the output dir, same relative path.
    moves: dict[str, str] = {}  # repo-relative old folder -> repo-relative new folder
    client_side: set[str] = set()
    steps: list[Step] = []
    for step in plan.steps:
        if step.stage is not Stage.EXPORT:
            steps.append(step)
        else:
            steps.append(replace(step, argv=_move_outputs(step, new_out, moves, client_side, note)))

    # 2. Every later reference to a moved folder (server model dir, client paths), from the step's cwd.
    rewritten: list[Step] = []
    read: set[str] = set()
    for original, step in zip(plan.steps, steps, strict=True):
        argv = list(step.argv)
        status = step.status_command
        if step.stage is not Stage.EXPORT:
            status = _follow_moves(step, argv, status, moves, read, note)
        for old_token, new_token in zip(original.argv, argv, strict=True):
            if old_token != new_token and step.stage is Stage.EXPORT:
                status = status.replace(old_token, new_token)
        log = _moved(step.log, old_out, new_out)
        if log != step.log and step.log is not None and log is not None:
            status = status.replace(step.log, log)
        if old_out != new_out:
            # Status lines written relative to the step's cwd (`../../log/<model>/<mode>/...`).
            shown_old = posixpath.relpath(old_out, _norm(step.cwd))
            shown_new = posixpath.relpath(new_out, _norm(step.cwd))
            status = status.replace(shown_old + "/", shown_new + "/")
        rewritten.append(
            replace(
                step,
                argv=tuple(argv),
                log=log,
                status_log=_moved(step.status_log, old_out, new_out),
                status_command=status,
            )
        )
    for old in moves:
        if old not in read and old not in client_side:
            note(
                None,
                f"{old} (a conversion output) now goes to {moves[old]}, and no server or client argument"
                " names it: a server that finds it through its own config file (config.yml) will not see it",
                Level.WARNING,
            )
    return replace(
        plan,
        output_dir=new_out,
        results_log=results_log,
        steps=tuple(rewritten),
        findings=tuple(dict.fromkeys((*plan.findings, *findings))),
    )


def find_serving_config(repo: Path, near: Path | None = None) -> Path | None:
    """The repo's Python serving config (`serving` chain, not C++), preferring the one beside `near`.

    `tipc check` runs it after the train chain when a rule asks for the serving chain's record.
    """
    from tipc.config.discover import classify_chain, iter_config_files
    from tipc.config.parse import parse_text, read_text

    found: list[Path] = []
    unreadable: list[UserError] = []
    for path in iter_config_files(repo):
        if path.suffix != ".txt" or "cpp" in path.name.lower():
            continue
        try:
            parsed = parse_text(read_text(path), str(path))
        except UserError as exc:
            if "serving" in path.name.lower():
                unreadable.append(exc)
            continue  # unreadable: `tipc lint` reports it
        if classify_chain(path, parsed) == CHAIN:
            found.append(path)
    if not found and unreadable:
        # The serving config is there but cannot be read: say so rather than check as if it were absent.
        raise unreadable[0]
    if near is not None:
        beside = [p for p in found if p.parent.resolve() == near.resolve().parent]
        found = beside or found
    return found[0] if found else None
