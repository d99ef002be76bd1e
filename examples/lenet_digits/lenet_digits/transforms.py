"""Pre- and post-processing shared by train/eval/predict (training engine) and infer (Paddle Inference).

Kept free of paddle so both engines run byte-identical preprocessing.
"""

from __future__ import annotations

import os

import numpy as np
from PIL import Image

IMAGE_SIZE = 8
MEAN = 0.5
STD = 0.5
IMAGE_EXTS = (".png", ".jpg", ".jpeg", ".bmp")


def preprocess(img: Image.Image) -> np.ndarray:
    """PIL image -> float32 array [1, IMAGE_SIZE, IMAGE_SIZE], normalised to about [-1, 1]."""
    img = img.convert("L")
    if img.size != (IMAGE_SIZE, IMAGE_SIZE):
        img = img.resize((IMAGE_SIZE, IMAGE_SIZE), Image.Resampling.BILINEAR)
    arr = np.asarray(img, dtype=np.float32) / 255.0
    arr = (arr - MEAN) / STD
    return arr[np.newaxis, :, :]


def load_image(path: str) -> np.ndarray:
    with Image.open(path) as img:
        return preprocess(img)


def list_images(img_path: str) -> list[str]:
    """A single file, or every image file in a folder (sorted, so runs are reproducible)."""
    if os.path.isdir(img_path):
        names = sorted(n for n in os.listdir(img_path) if n.lower().endswith(IMAGE_EXTS))
        return [os.path.join(img_path, n) for n in names]
    if os.path.isfile(img_path):
        return [img_path]
    raise FileNotFoundError(f"no image file or folder at {img_path}")


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    probs: np.ndarray = exp / exp.sum(axis=-1, keepdims=True)
    return probs


def postprocess(probs: np.ndarray) -> list[tuple[int, float]]:
    """[N, 10] class probabilities -> (class_id, prob) of the top class per row."""
    class_ids = probs.argmax(axis=-1)
    return [(int(c), float(probs[i, c])) for i, c in enumerate(class_ids)]


def format_result(image_path: str, class_id: int, prob: float) -> str:
    return f"image_name: {image_path}, class_id: {class_id}, prob: {prob:.6f}"
