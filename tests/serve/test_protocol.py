import base64
import json

import numpy as np
import pytest

from tipc.execute.serving.client import tensor_value
from tipc.serve import protocol
from tipc.serve.model import RequestError, TensorSpec

X = TensorSpec("x", "float32", (-1, 1, 2, 2))


def test_pipeline_value_as_json_list_takes_the_model_dtype() -> None:
    array = protocol.decode_pipeline_value(json.dumps([[[[1, 2], [3, 4]]]]), X)
    assert array.dtype == np.float32
    assert array.shape == (1, 1, 2, 2)


def test_pipeline_value_as_raw_base64_infers_the_batch_dimension() -> None:
    data = np.arange(8, dtype="<f4")
    array = protocol.decode_pipeline_value(base64.b64encode(data.tobytes()).decode(), X)
    assert array.shape == (2, 1, 2, 2)
    np.testing.assert_array_equal(array.reshape(-1), data)


def test_pipeline_value_as_tensor_object_round_trips_exactly() -> None:
    data = np.random.default_rng(0).standard_normal((3, 1, 2, 2)).astype(np.float32)
    array = protocol.decode_pipeline_value(tensor_value(data), X)
    np.testing.assert_array_equal(array, data)


@pytest.mark.parametrize(
    "value",
    [
        "[[1, 2], [3]]",
        "not base64 !!",
        base64.b64encode(b"abc").decode(),
        '{"shape": [2], "data": [1]}',
        '[1, "a"]',
    ],
)
def test_bad_pipeline_values_are_400(value: str) -> None:
    with pytest.raises(RequestError) as info:
        protocol.decode_pipeline_value(value, X)
    assert info.value.status == 400


def test_pipeline_request_maps_a_single_free_key_to_the_single_input() -> None:
    feeds = protocol.decode_pipeline_request({"key": ["image"], "value": ["[[[[1,2],[3,4]]]]"]}, [X])
    assert list(feeds) == ["x"]


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"key": ["x"]},
        {"key": ["x", "y"], "value": ["[1]"]},
        {"key": [], "value": []},
        {"key": [1], "value": ["[1]"]},
    ],
)
def test_malformed_pipeline_requests_are_400(body: object) -> None:
    with pytest.raises(RequestError) as info:
        protocol.decode_pipeline_request(body, [X])
    assert info.value.status == 400


def test_pipeline_response_has_paddle_serving_shape() -> None:
    response = protocol.encode_pipeline_response({"prob": np.array([[0.25, 0.75]], dtype=np.float32)})
    assert response == {
        "err_no": 0,
        "err_msg": "",
        "key": ["prob"],
        "value": ["[[0.25, 0.75]]"],
        "tensors": [],
    }


def test_v2_request_decodes_flat_data_with_shape_and_datatype() -> None:
    body = {"inputs": [{"name": "x", "shape": [1, 1, 2, 2], "datatype": "FP32", "data": [1, 2, 3, 4]}]}
    feeds, wanted = protocol.decode_v2_request(body, [X])
    assert feeds["x"].shape == (1, 1, 2, 2) and feeds["x"].dtype == np.float32
    assert wanted is None


@pytest.mark.parametrize(
    "item",
    [
        {"name": "y", "shape": [1], "datatype": "FP32", "data": [1]},
        {"name": "x", "shape": [2, 2], "datatype": "FP32", "data": [1, 2, 3]},
        {"name": "x", "shape": [4], "datatype": "FLOAT", "data": [1, 2, 3, 4]},
        {"name": "x", "shape": [-4], "datatype": "FP32", "data": []},
        {"name": "x", "shape": [4], "datatype": "FP32"},
    ],
)
def test_bad_v2_inputs_are_400(item: dict[str, object]) -> None:
    with pytest.raises(RequestError) as info:
        protocol.decode_v2_request({"inputs": [item]}, [X])
    assert info.value.status == 400


def test_invalid_json_is_400() -> None:
    with pytest.raises(RequestError) as info:
        protocol.parse_json(b"{not json")
    assert info.value.status == 400


@pytest.mark.parametrize(
    "body",
    [
        b"[" + b"7" * 5000 + b"]",  # over Python's 4,300-digit limit for int()
        b"[" * 100_000 + b"]" * 100_000,
        b"[NaN]",
        b"[-Infinity]",
        b"\xff\xfe",
    ],
)
def test_json_that_python_refuses_is_400_not_an_internal_error(body: bytes) -> None:
    with pytest.raises(RequestError) as info:
        protocol.parse_json(body)
    assert info.value.status == 400


@pytest.mark.parametrize(
    "item",
    [
        {"name": "x", "shape": [2**62, 4, 1, 1], "datatype": "FP32", "data": []},
        {"name": "x", "shape": [True, 1, 2, 2], "datatype": "FP32", "data": [1, 2, 3, 4]},
        {"name": "x", "shape": True, "datatype": "FP32", "data": [1]},
        {"name": "x", "shape": [1] * 40, "datatype": "FP32", "data": [1]},
        {"name": "x", "shape": [1, 1, 2, 2], "datatype": "FP32", "data": [1e39, 0, 0, 0]},
        {"name": "x", "shape": [1, 1, 2, 2], "datatype": "FP32", "data": [float("inf"), 0, 0, 0]},
        {"name": "x", "shape": [1, 1, 2, 2], "datatype": "FP64", "data": [float("nan"), 0, 0, 0]},
        {"name": "x", "shape": [1], "datatype": "INT32", "data": [2**40]},
    ],
)
def test_hostile_v2_inputs_are_400(item: dict[str, object]) -> None:
    with pytest.raises(RequestError) as info:
        protocol.decode_v2_request({"inputs": [item]}, [X])
    assert info.value.status == 400


def test_duplicate_inputs_are_400_in_both_protocols() -> None:
    item = {"name": "x", "shape": [1, 1, 2, 2], "datatype": "FP32", "data": [1, 2, 3, 4]}
    with pytest.raises(RequestError, match="given twice"):
        protocol.decode_v2_request({"inputs": [item, item]}, [X])
    with pytest.raises(RequestError, match="given twice"):
        protocol.decode_pipeline_request({"key": ["x", "x"], "value": ["[1]", "[1]"]}, [X])


def test_pipeline_tensor_object_with_overflowing_shape_is_400() -> None:
    with pytest.raises(RequestError) as info:
        protocol.decode_pipeline_value(json.dumps({"shape": [2**62, 4, 1, 1], "data": []}), X)
    assert info.value.status == 400
    with pytest.raises(RequestError):
        protocol.decode_pipeline_value(json.dumps({"shape": [1, 1, 2, 2], "data": [1e39, 0, 0, 0]}), X)
