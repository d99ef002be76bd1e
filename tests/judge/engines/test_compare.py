import numpy as np

from tipc.judge.engines.compare import compare_arrays, within


def test_identical_outputs_are_within() -> None:
    a = np.linspace(-1, 1, 20, dtype=np.float32).reshape(2, 10)
    f = compare_arrays(a, a.copy(), 1e-5, 1e-4)
    assert f["max_abs"] == 0.0 and f["cosine"] == 1.0 and f["argmax_agree"] == 1.0 and f["allclose"]
    assert within(f, 0.99999)


def test_allclose_semantics_and_argmax() -> None:
    a = np.array([[0.1, 0.9], [0.6, 0.4]], dtype=np.float32)
    b = a + np.array([[0.0, 0.0], [0.0, 2e-4]], dtype=np.float32)
    f = compare_arrays(a, b, 1e-5, 1e-4)
    assert not f["allclose"] and f["mismatched"] == 1 and f["worst_index"] == 3
    assert abs(f["max_abs"] - 2e-4) < 1e-6 and abs(f["max_rel"] - 5e-4) < 1e-5
    assert not within(f, 0.99999)
    swapped = a[:, ::-1].copy()
    f = compare_arrays(a, swapped, 1.0, 0.0)
    assert f["allclose"] and f["argmax_agree"] == 0.0 and not within(f, 0.0)


def test_shape_mismatch_and_non_finite() -> None:
    f = compare_arrays(np.zeros((2, 3)), np.zeros((3, 3)), 1e-5, 1e-4)
    assert f["shape_match"] is False and not within(f, 0.9)
    squeezed = compare_arrays(np.ones((1, 4)), np.ones(4), 1e-5, 1e-4)
    assert squeezed["shape_match"] and squeezed["allclose"]
    nan = compare_arrays(np.ones(3), np.array([1.0, np.nan, 1.0]), 1e-5, 1e-4)
    assert not nan["allclose"] and not nan["finite"]


def test_the_absolute_tolerance_scales_with_the_outputs_magnitude() -> None:
    # logits reaching 1000: an element near 0 that differs by 0.05 is float32 noise at that scale
    a = np.array([[1000.0, 0.001, -3.0]], dtype=np.float32)
    b = a + np.array([[0.0, 0.05, 0.0]], dtype=np.float32)
    f = compare_arrays(a, b, 1e-5, 1e-4)
    assert f["allclose"] and f["atol_used"] == 1e-4 * 1000.0
    small = np.array([[1.0, 0.001, -0.3]], dtype=np.float32)
    f = compare_arrays(small, small + np.array([[0.0, 0.05, 0.0]], dtype=np.float32), 1e-5, 1e-4)
    assert not f["allclose"]  # at a scale of 1 the same difference is a disagreement
