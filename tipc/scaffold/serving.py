"""The Python serving chain for `tipc init`: find a repo's serving deployment and fill its config.

Static only, like detect.py: a `deploy/*serving*/` folder holding a client script (`*client*.py`) is a Python
serving deployment. Its client's flags are read with infer_flags (never run); the URL it posts to (a `--url`
default, or a literal `http://host:port/name/prediction` in its source) gives the port and service name that
`tipc serve` must use. The config follows the models-tutorial `serving_infer_python.txt` layout that
tipc/planning/serving.py plans: export (the repo's export script + pretrained weights) -> `python -m tipc
serve
<export dir>` in the serving folder -> the client with its image flag pointed at the lite data.
"""

from __future__ import annotations

import ast
import posixpath
import re
from pathlib import Path

from tipc.config.script_flags import Flag, ScriptFlags, read_flags
from tipc.scaffold.detect import RepoScan
from tipc.scaffold.fill.context import SYNONYMS
from tipc.scaffold.filled import DEFAULT_PORT, Filled, ServingDeploy, ServingFilled

CONFIG_NAME = "serving_infer_python.txt"
# Client script names, most conventional first (Paddle Serving's pipeline clients, then anything *client*).
CLIENT_NAMES = ("pipeline_http_client.py", "pipeline_rpc_client.py", "web_service_client.py", "client.py")
# A pipeline URL: http://host:port/<service>/prediction (the service name is what `tipc serve --name` takes).
_URL = re.compile(r"^https?://[^/:\s]+:(?P<port>\d{1,5})(?:/(?P<name>[A-Za-z0-9_.+-]+)/prediction)?/?$")
# The slots of the models-tutorial layout, 1-based line numbers (tipc/planning/serving.py `_plan_models`).
SERVING_SLOTS: dict[str, int] = {
    "model_name": 2,
    "python": 3,
    "trans_model": 4,
    "trans_weights": 5,
    "trans_save_dir": 6,
    "trans_arg3": 7,
    "trans_arg4": 8,
    "trans_arg5": 9,
    "serving_dir": 10,
    "web_service": 11,
    "pipline": 12,
    "image": 13,
}


def _client_in(folder: Path) -> Path | None:
    for name in CLIENT_NAMES:
        if (folder / name).is_file():
            return folder / name
    clients = sorted(p for p in folder.glob("*client*.py") if p.is_file())
    return clients[0] if clients else None


def find_serving(root: Path) -> ServingDeploy | None:
    """The repo's Python serving deployment: `deploy/*serving*/` (or `deploy/serving/`) with a client script.

    C++ serving folders (`*cpp*`) are left out: tipc plans only the Python serving chain.
    """
    deploy = root / "deploy"
    if not deploy.is_dir():
        return None
    folders = sorted(p for p in deploy.iterdir() if p.is_dir() and "serving" in p.name.lower())
    # Python first: `serving_python` over a bare `serving`, never a C++ one.
    folders.sort(key=lambda p: ("python" not in p.name.lower(), p.name))
    for folder in folders:
        if "cpp" in folder.name.lower():
            continue
        client = _client_in(folder)
        if client is not None:
            return ServingDeploy(folder.relative_to(root).as_posix(), client.name)
    return None


def _url_of(text: object) -> tuple[int, str | None] | None:
    if not isinstance(text, str):
        return None
    match = _URL.match(text.strip())
    if match is None or not 0 < int(match.group("port")) <= 65535:
        return None
    return int(match.group("port")), match.group("name")


def client_url(client: Path, flags: ScriptFlags) -> tuple[tuple[int, str | None], str] | None:
    """(port, service name) the client posts to, and where that was read; None when it cannot be told.

    A `--url`-like flag's default wins; else a `--port` flag's default (no service name); else the first
    string literal in the source that is a pipeline URL.
    """
    for flag in flags.flags:
        if any("url" in n for n in flag.names):
            found = _url_of(flag.default)
            if found is not None:
                return found, f"{flags.path}:{flag.line} ({flag.flag} default)"
    port_flag = flags.find(("port", "http_port", "server_port"))
    if port_flag is not None and isinstance(port_flag.default, int) and 0 < port_flag.default <= 65535:
        return (port_flag.default, None), f"{flags.path}:{port_flag.line} ({port_flag.flag} default)"
    try:
        tree = ast.parse(client.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            found = _url_of(node.value)
            if found is not None:
                return found, f"{flags.path}:{node.lineno} (literal URL)"
    return None


def _dir_value(path: str) -> str:
    return path if path.endswith("/") else path + "/"


def _from_serving_dir(serving_dir: str, repo_rel: str) -> str:
    """`repo_rel` as seen from the serving folder (the server and client run there)."""
    rel = posixpath.relpath(posixpath.normpath(repo_rel), posixpath.normpath(serving_dir))
    return rel if rel.startswith("../") or rel == ".." else "./" + rel


def fill_serving(scan: RepoScan, filled: Filled, deploy: ServingDeploy) -> ServingFilled:
    """Fill the serving config's slots from the repo scan and the train-chain fill (its export flags)."""
    model = filled.model
    out = ServingFilled(deploy=deploy, service=model)
    s = out.slots
    root = scan.root
    s["model_name"] = ("model_name", model)
    s["python"] = ("python", "python")
    out.notes.append(f"serving deployment: {deploy.dir}/ with client {deploy.client}")

    # ---- conversion: the repo's export of the shipped weights (Paddle Serving's convert does not install)
    out.export_dir = f"inference/{model}_infer"
    export_script = filled.scripts.get("export")
    weight_key = filled.slots.get("export_weight", ("null", "null"))[0]
    save_key = filled.slots.get("save_inference", ("null", "null"))[0]
    weights = scan.weights[0] if scan.weights else None
    if export_script is None:
        s["trans_model"] = ("trans_model", "null")
        out.todo("trans_model", "no export script found: nothing writes the inference model tipc serve loads")
    else:
        s["trans_model"] = ("trans_model", export_script)
    if weights is None or weight_key == "null":
        s["trans_weights"] = ("null", "null")
        if export_script is not None:
            out.todo(
                "trans_weights",
                "no pretrained *.pdparams (or no weights flag on the export script): nothing to export",
            )
    else:
        s["trans_weights"] = (weight_key, "./" + weights.removeprefix("./"))
        out.notes.append(f"serving export weights: {weight_key}=./{weights.removeprefix('./')}")
    if save_key == "null":
        s["trans_save_dir"] = ("null", "null")
        if export_script is not None:
            out.todo("trans_save_dir", f"{export_script}: no output-dir flag for the exported model")
    else:
        s["trans_save_dir"] = (save_key, f"./{out.export_dir}/")
    for slot in ("trans_arg3", "trans_arg4", "trans_arg5"):
        s[slot] = ("null", "null")
    s["serving_dir"] = ("serving_dir", f"./{deploy.dir}")

    # ---- client: its URL decides the server's port and service name; its image flag gets the lite data ----
    client_path = root / deploy.dir / deploy.client
    flags = read_flags(client_path, root)
    if flags.error:
        out.todo("pipline", f"{deploy.dir}/{deploy.client}: {flags.error}")
    found = client_url(client_path, flags)
    if found is None:
        out.todo(
            "web_service",
            f"could not tell which port {deploy.client} posts to; tipc serve listens on {DEFAULT_PORT} "
            f"as /{model}/prediction: make the client's URL match (or edit --port/--name)",
        )
    else:
        (port, name), where = found
        out.port = port
        if name is not None:
            out.service = name
        out.notes.append(
            f"serving port {port}" + (f" and service name {name}" if name else "") + f" from {where}"
        )
    server_dir = _from_serving_dir(deploy.dir, out.export_dir)
    s["web_service"] = (
        "web_service",
        f"-m tipc serve {server_dir} --port {out.port} --name {out.service}",
    )
    s["pipline"] = ("pipline", deploy.client)
    s["image"] = _image_slot(out, flags, scan, deploy)

    # Required client flags the config cannot pass (only the image argument reaches the client).
    image_flag = flags.find(SYNONYMS["image"])
    for flag in flags.flags:
        if flag.required and flag is not image_flag:
            what = f"positional argument {flag.dest}" if flag.positional else f"required flag {flag.flag}"
            out.todo(
                "pipline",
                f"{deploy.dir}/{deploy.client}: {what} ({flag.path}:{flag.line}) is not passed by the "
                "serving config; give it a default",
            )
    for name, (key, value) in s.items():
        if ":" in key + value:
            out.todo(name, f"{key}:{value!r} holds ':', which the serving script splits apart")
            s[name] = ("null", "null")
    return out


def _image_slot(
    out: ServingFilled, flags: ScriptFlags, scan: RepoScan, deploy: ServingDeploy
) -> tuple[str, str]:
    flag: Flag | None = flags.find(SYNONYMS["image"])
    if flag is None:
        out.notes.append(f"serving client: {deploy.client} has no image flag; it sends its own input")
        return ("null", "null")
    root = scan.root
    lite = scan.lite
    default = flag.default if isinstance(flag.default, str) and flag.default.strip() else None
    if default is not None and lite is not None and lite.dir is not None:
        # The client runs in the serving folder: its default is relative to it.
        resolved = posixpath.normpath(posixpath.join(deploy.dir, default))
        inside = resolved == lite.dir or resolved.startswith(posixpath.normpath(lite.dir) + "/")
        if inside and (root / resolved).exists():
            out.notes.append(
                f"serving image: {flag.flag}={default} (the client's default, inside the lite data)"
            )
            return (flag.flag, default)
    images = lite.images if lite else ()
    if images:
        wants_dir = "dir" in flag.flag or flag.flag.endswith(("imgs", "images"))
        target = _dir_value(posixpath.dirname(images[0])) if wants_dir else images[0]
        value = _from_serving_dir(deploy.dir, target.rstrip("/"))
        value = _dir_value(value) if wants_dir else value
        out.notes.append(f"serving image: {flag.flag}={value} (from the lite data)")
        return (flag.flag, value)
    out.todo("image", f"no lite-data image for the client's {flag.flag}; it sends its default ({default!r})")
    return (flag.flag, "null")


def config_text(filled: ServingFilled) -> str:
    header = "===========================serving_params==========================="
    ordered = sorted(filled.slots.items(), key=lambda item: SERVING_SLOTS[item[0]])
    return "\n".join([header, *(f"{key}:{value}" for _, (key, value) in ordered)]) + "\n"
