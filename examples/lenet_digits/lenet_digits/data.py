"""The lite_data list-file dataset: `relative/path.png label` per line, paths relative to the data dir."""

from __future__ import annotations

import os

import numpy as np
import paddle

from .transforms import load_image


def read_list(data_dir: str, list_name: str) -> list[tuple[str, int]]:
    list_path = os.path.join(data_dir, list_name)
    if not os.path.isfile(list_path):
        raise FileNotFoundError(
            f"{list_path} not found: unpack the lite data first (tar -xf lite_data.tar, "
            "or bash test_tipc/prepare.sh <config> lite_train_lite_infer)"
        )
    samples = []
    with open(list_path) as f:
        for line_no, line in enumerate(f, start=1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 2:
                raise ValueError(f"{list_path}:{line_no}: expected 'path label', got {line.strip()!r}")
            samples.append((os.path.join(data_dir, parts[0]), int(parts[1])))
    return samples


class DigitsDataset(paddle.io.Dataset):  # type: ignore[type-arg]
    def __init__(self, data_dir: str, list_name: str) -> None:
        super().__init__()
        self.samples = read_list(data_dir, list_name)

    def __getitem__(self, idx: int) -> tuple[np.ndarray, np.ndarray]:
        path, label = self.samples[idx]
        return load_image(path), np.array(label, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.samples)
