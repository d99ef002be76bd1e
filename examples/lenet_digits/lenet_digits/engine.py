"""Evaluation loop shared by train.py (end of every epoch) and eval.py."""

from __future__ import annotations

import paddle

from .data import DigitsDataset


def make_eval_loader(data_dir: str, batch_size: int) -> paddle.io.DataLoader:
    dataset = DigitsDataset(data_dir, "test_list.txt")
    return paddle.io.DataLoader(dataset, batch_size=batch_size, shuffle=False, drop_last=False, num_workers=0)


@paddle.no_grad()
def evaluate(model: paddle.nn.Layer, loader: paddle.io.DataLoader) -> tuple[float, float]:
    """Top-1 accuracy and mean cross-entropy over the whole loader."""
    model.eval()
    correct = 0
    seen = 0
    loss_sum = 0.0
    for images, labels in loader:
        logits = model(images)
        loss_sum += float(paddle.nn.functional.cross_entropy(logits, labels, reduction="sum"))
        correct += int((logits.argmax(axis=-1) == labels).astype("int64").sum())
        seen += int(labels.shape[0])
    model.train()
    return correct / max(seen, 1), loss_sum / max(seen, 1)
