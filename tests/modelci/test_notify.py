"""Alerting: the versioned JSON payload with its Markdown body, posted to a real local HTTP server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tipc.judge.baseline import judge
from tipc.modelci import notify


class _Hook:
    def __init__(self) -> None:
        self.received: list[tuple[str, dict[str, Any]]] = []
        self.status = 200


@pytest.fixture
def webhook() -> Iterator[tuple[str, _Hook]]:
    hook = _Hook()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length", "0"))
            hook.received.append((self.headers.get("Content-Type", ""), json.loads(self.rfile.read(size))))
            self.send_response(hook.status)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook", hook
    finally:
        server.shutdown()
        server.server_close()


def _judgement() -> judge.Judgement:
    rows = (
        judge.Row("train.loss.last", "FAIL", 2.3, 0.07, 0.0035, "5% floor", "<=", "", "2.3 vs 0.07"),
        judge.Row("eval.acc", "PASS", 0.91, 0.91, 0.05, "5% floor", ">=", "", "same"),
        judge.Row(
            "train.avg_ips", "IMPROVED", 9000.0, 7000.0, 1400.0, "20% floor", ">=", "images/sec", "faster"
        ),
    )
    return judge.Judgement(Path("b/cpu.yaml"), "cpu", rows, ("paddle_version: 2.6.2 -> 3.3.1",))


def _record() -> Any:
    plan = SimpleNamespace(model_name="lenet", config_path="c.txt", mode="lite_train_lite_infer")
    return SimpleNamespace(
        plan=plan, environment={"paddle_version": "3.3.1"}, git_commit="abc", started=1.0e9
    )


def test_the_payload_is_versioned_and_carries_the_verdicts() -> None:
    body = notify.payload(_judgement(), _record(), repo="/r", exit_code=1)
    assert body["schema"] == "tipc.notify/1" and body["verdict"] == "FAIL" and body["exit_code"] == 1
    assert [r["metric"] for r in body["regressions"]] == ["train.loss.last"]
    assert [r["metric"] for r in body["improvements"]] == ["train.avg_ips"]
    assert body["counts"] == {"PASS": 1, "FAIL": 1, "IMPROVED": 1, "INCONCLUSIVE": 0, "INFO": 0}
    assert body["inconclusive"] == [] and body["hyperparameters_changed"] == []
    assert body["env_diff"] == ["paddle_version: 2.6.2 -> 3.3.1"]
    md = body["markdown"]
    assert md.startswith("### tipc: FAIL · lenet (lite_train_lite_infer, cpu)")
    assert "repo commit `abc`" in md
    assert "| `train.loss.last` | FAIL | 2.3 | 0.07 | 0.0035 | 5% floor |" in md
    assert "- paddle_version: 2.6.2 -> 3.3.1" in md
    json.dumps(body)  # serialisable as is


def test_posting_to_a_real_local_server(webhook: tuple[str, _Hook]) -> None:
    url, hook = webhook
    body = notify.payload(_judgement(), _record(), repo="/r", exit_code=1)
    assert notify.post(url, body) is None
    assert hook.received == [("application/json", body)]
    hook.status = 500
    assert notify.post(url, body) == f"{url} answered HTTP 500"


def test_an_unreachable_webhook_is_a_message_not_an_exception() -> None:
    problem = notify.post("http://127.0.0.1:9/none", {"schema": notify.SCHEMA})
    assert problem is not None and problem.startswith("cannot post to http://127.0.0.1:9/none")
