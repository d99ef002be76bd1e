"""Predict with the training engine (dynamic graph): one line per image.

python predict.py --pretrained=./pretrained/lenet_digits_pretrained.pdparams --img_path=./lite_data/infer/
image_name: ./lite_data/infer/digit_0.png, class_id: 0, prob: 0.998512
"""

from __future__ import annotations

import argparse

import numpy as np
import paddle
from lenet_digits.model import LeNet
from lenet_digits.transforms import format_result, list_images, load_image, postprocess
from lenet_digits.utils import load_weights, resolve_device


def get_args(add_help: bool = True) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="LeNet digits prediction (training engine)", add_help=add_help
    )
    parser.add_argument("--pretrained", default="./pretrained/lenet_digits_pretrained.pdparams")
    parser.add_argument(
        "--img_path", default="./lite_data/infer/", help="an image file or a folder of images"
    )
    parser.add_argument("--batch_size", type=int, default=1)
    parser.add_argument("--device", default="cpu", help="cpu or gpu")
    return parser.parse_args()


@paddle.no_grad()
def main(args: argparse.Namespace) -> None:
    paddle.device.set_device(resolve_device(args.device))
    model = LeNet()
    load_weights(model, args.pretrained)
    model.eval()
    paths = list_images(args.img_path)
    for start in range(0, len(paths), args.batch_size):
        batch_paths = paths[start : start + args.batch_size]
        batch = np.stack([load_image(p) for p in batch_paths])
        probs = paddle.nn.functional.softmax(model(paddle.to_tensor(batch)), axis=-1).numpy()
        results = list(postprocess(probs))
        if len(results) != len(batch_paths):  # zip(strict=True) needs Python 3.10; the demo runs on 3.9 too
            raise RuntimeError(f"{len(results)} results for {len(batch_paths)} images")
        for path, (class_id, prob) in zip(batch_paths, results):
            print(format_result(path, class_id, prob), flush=True)


if __name__ == "__main__":
    main(get_args())
