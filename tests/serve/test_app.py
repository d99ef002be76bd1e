"""The ASGI app over a numpy stand-in model (the unit seam); the real Paddle server is in test_server.py."""

import warnings
from collections.abc import Mapping

import numpy as np
import pytest

with warnings.catch_warnings():
    # starlette 1.x nudges towards `httpx2` for its TestClient; plain httpx still works.
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from tipc.serve.app import build_app
from tipc.serve.service import LocalBackend
from tipc.serve.spec import RequestError, TensorSpec


class DoubleIt:
    """y = 2 * x, with the same validation contract as PredictorPool."""

    def __init__(self) -> None:
        self.size = 2
        self.inputs = [TensorSpec("x", "float32", (-1, 3))]
        self.outputs = [TensorSpec("y", "float32", (-1, 3))]

    def validate(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        array = feeds["x"]
        if array.dtype != np.float32:
            raise RequestError(400, f"dtype {array.dtype}")
        if array.ndim != 2 or array.shape[1] != 3:
            raise RequestError(400, f"shape {list(array.shape)}")
        return dict(feeds)

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {"y": feeds["x"] * 2}


@pytest.fixture
def client() -> TestClient:
    return TestClient(build_app(LocalBackend(DoubleIt(), name="double"), name="double", max_body_bytes=2048))


def test_health_and_metadata(client: TestClient) -> None:
    assert client.get("/v2/health/live").json() == {"live": True}
    assert client.get("/v2/health/ready").status_code == 200
    meta = client.get("/v2/models/double").json()
    assert meta["inputs"] == [{"name": "x", "datatype": "FP32", "shape": [-1, 3]}]
    assert meta["outputs"] == [{"name": "y", "datatype": "FP32", "shape": [-1, 3]}]
    assert client.get("/v2/models/double/ready").json()["ready"] is True
    assert client.get("/v2/models/other").status_code == 404
    assert client.get("/v2/models/other/ready").status_code == 404


def test_v2_infer(client: TestClient) -> None:
    body = {"id": "r1", "inputs": [{"name": "x", "shape": [1, 3], "datatype": "FP32", "data": [1, 2, 3]}]}
    reply = client.post("/v2/models/double/infer", json=body)
    assert reply.status_code == 200
    assert reply.json() == {
        "model_name": "double",
        "model_version": "1",
        "id": "r1",
        "outputs": [{"name": "y", "datatype": "FP32", "shape": [1, 3], "data": [2.0, 4.0, 6.0]}],
    }


def test_pipeline_predict(client: TestClient) -> None:
    reply = client.post("/double/prediction", json={"key": ["x"], "value": ["[[1, 2, 3]]"], "logid": 7})
    assert reply.status_code == 200
    assert reply.json() == {
        "err_no": 0,
        "err_msg": "",
        "key": ["y"],
        "value": ["[[2.0, 4.0, 6.0]]"],
        "tensors": [],
    }


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/v2/models/double/infer", b"{oops", 400),
        (
            "/v2/models/double/infer",
            b'{"inputs": [{"name": "x", "shape": [1, 2], "datatype": "FP32", "data": [1, 2]}]}',
            400,
        ),
        (
            "/v2/models/double/infer",
            b'{"inputs": [{"name": "x", "shape": [1, 3], "datatype": "INT64", "data": [1, 2, 3]}]}',
            400,
        ),
        ("/v2/models/nope/infer", b"{}", 404),
        ("/double/prediction", b"[1, 2]", 400),
        ("/nope/prediction", b"{}", 404),
        ("/v2/models/double/infer", b"[" + b"1," * 2000 + b"1]", 413),
        ("/double/prediction", b"x" * 4096, 413),
    ],
)
def test_client_mistakes_are_4xx_json_and_the_app_keeps_serving(
    client: TestClient, path: str, body: bytes, status: int
) -> None:
    reply = client.post(path, content=body, headers={"content-type": "application/json"})
    assert reply.status_code == status
    payload = reply.json()
    assert payload.get("error") or payload.get("err_msg")
    if path.endswith("/prediction"):
        assert payload["err_no"] != 0
    assert client.post("/double/prediction", json={"key": ["x"], "value": ["[[1, 1, 1]]"]}).status_code == 200


def test_unknown_route_and_method_are_json(client: TestClient) -> None:
    assert client.get("/nowhere").status_code == 404
    assert client.get("/v2/models/double/infer").status_code == 405
    assert "error" in client.get("/nowhere").json()


class Explodes(DoubleIt):
    """The model itself fails on some inputs validation cannot foresee (e.g. a kernel error)."""

    def run(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        if float(feeds["x"].sum()) < 0:
            raise ValueError("kernel error")
        return super().run(feeds)


def test_a_model_failure_is_a_json_500_and_the_app_keeps_serving() -> None:
    client = TestClient(build_app(LocalBackend(Explodes(), name="double"), name="double"))
    bad = client.post("/double/prediction", json={"key": ["x"], "value": ["[[-1, -1, -1]]"]})
    assert bad.status_code == 500 and bad.json()["err_no"] == 9000 and "kernel error" in bad.json()["err_msg"]
    v2 = client.post(
        "/v2/models/double/infer",
        json={"inputs": [{"name": "x", "shape": [1, 3], "datatype": "FP32", "data": [-1, -1, -1]}]},
    )
    assert v2.status_code == 500 and "kernel error" in v2.json()["error"]
    assert client.post("/double/prediction", json={"key": ["x"], "value": ["[[1, 1, 1]]"]}).status_code == 200
