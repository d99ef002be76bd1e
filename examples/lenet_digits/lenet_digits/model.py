"""LeNet-5 style CNN sized for 1x8x8 inputs (conv-pool, conv-pool, three fully connected layers)."""

from __future__ import annotations

import paddle
from paddle import nn

NUM_CLASSES = 10


class LeNet(nn.Layer):
    def __init__(self, num_classes: int = NUM_CLASSES) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2D(1, 6, kernel_size=3, padding=1),  # 6x8x8
            nn.ReLU(),
            nn.MaxPool2D(kernel_size=2, stride=2),  # 6x4x4
            nn.Conv2D(6, 16, kernel_size=3, padding=1),  # 16x4x4
            nn.ReLU(),
            nn.MaxPool2D(kernel_size=2, stride=2),  # 16x2x2
        )
        self.classifier = nn.Sequential(
            nn.Linear(16 * 2 * 2, 120),
            nn.ReLU(),
            nn.Linear(120, 84),
            nn.ReLU(),
            nn.Linear(84, num_classes),
        )

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        x = self.features(x)
        x = paddle.flatten(x, start_axis=1)
        logits: paddle.Tensor = self.classifier(x)
        return logits


class LeNetWithSoftmax(nn.Layer):
    """What export_model.py saves: the deployed model returns class probabilities, not logits."""

    def __init__(self, model: LeNet) -> None:
        super().__init__()
        self.model = model
        self.softmax = nn.Softmax(axis=-1)

    def forward(self, x: paddle.Tensor) -> paddle.Tensor:
        probs: paddle.Tensor = self.softmax(self.model(x))
        return probs
