"""A tiny repo with a serving chain and no Paddle: a converter that does nothing, a web service that binds the
port its config.yml names (and fails with `address already in use` when it cannot), and a client that posts
one request and checks the answer is pipeline-shaped. Whatever answers on that port makes the client pass,
which is what a foreign server on the port exploits."""

from __future__ import annotations

import http.server
import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.config.fixtures import COMPACT, make_repo

CONFIG = "test_tipc/configs/m/serving_infer_python.txt"
SERVING = """\
===========================serving_params===========================
model_name:m
python:python
trans_model:export_model.py
--model_dir:./inference/m_infer/
null:null
null:null
null:null
null:null
serving_dir:./deploy/serving
web_service:web_service.py
pipline:pipeline_http_client.py
--image_dir:./images/
"""
WEB_SERVICE = """\
import http.server, json, re
port = int(re.search(r"http_port:\\s*(\\d+)", open("config.yml").read()).group(1))
class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps({"err_no": 0, "err_msg": "", "key": ["prob"], "value": ["0.9"]}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_GET = do_POST
http.server.HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""
CLIENT = """\
import json, re, sys, urllib.request
port = int(re.search(r"http_port:\\s*(\\d+)", open("config.yml").read()).group(1))
req = urllib.request.Request(f"http://127.0.0.1:{port}/m/prediction", data=b'{"key": [], "value": []}')
reply = json.loads(urllib.request.urlopen(req, timeout=10).read())
print("image_name: x.png, reply:", reply, flush=True)
sys.exit(0 if reply.get("err_no") == 0 else 1)
"""


def fake_serving_repo(root: Path, port: int) -> Path:
    return make_repo(
        root,
        {
            "test_tipc/configs/m/train_infer_python.txt": COMPACT.replace("model_name:mnv3", "model_name:m"),
            CONFIG: SERVING,
            "export_model.py": "print('exported')\n",
            "deploy/serving/config.yml": f"http_port: {port}\n",
            "deploy/serving/web_service.py": WEB_SERVICE,
            "deploy/serving/pipeline_http_client.py": CLIENT,
        },
    )


class _Plausible(http.server.BaseHTTPRequestHandler):
    """Answers every request as a healthy pipeline service would (0.1 for every class)."""

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0) or 0)
        self.rfile.read(length)
        body = json.dumps({"err_no": 0, "err_msg": "", "key": ["prob"], "value": ["0.1"] * 10}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST

    def log_message(self, format: str, *args: object) -> None:
        return


@contextmanager
def foreign_server(port: int) -> Iterator[http.server.HTTPServer]:
    """An unrelated HTTP server on loopback `port`, in this (test) process, answering plausibly."""
    server = http.server.HTTPServer(("127.0.0.1", port), _Plausible)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def stdlib_python(folder: Path) -> str:
    """An interpreter that sees no site-packages (the fake repos need none): the run's probes of Paddle and
    the environment then take milliseconds, not seconds."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "python"
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n', encoding="utf-8")
    path.chmod(0o755)
    return str(path)
