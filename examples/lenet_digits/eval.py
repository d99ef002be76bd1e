"""Evaluate trained weights on lite_data/test_list.txt; prints `[Eval] acc: X`.

python eval.py --pretrained=./output/latest.pdparams
"""

from __future__ import annotations

import argparse

import paddle
from lenet_digits.engine import evaluate, make_eval_loader
from lenet_digits.model import LeNet
from lenet_digits.utils import load_weights, resolve_device


def get_args(add_help: bool = True) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="LeNet digits evaluation", add_help=add_help)
    parser.add_argument("--pretrained", default="./pretrained/lenet_digits_pretrained.pdparams")
    parser.add_argument("--data_dir", default="./lite_data")
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--device", default="cpu", help="cpu or gpu")
    return parser.parse_args()


def main(args: argparse.Namespace) -> None:
    paddle.device.set_device(resolve_device(args.device))
    model = LeNet()
    load_weights(model, args.pretrained)
    acc, loss = evaluate(model, make_eval_loader(args.data_dir, args.batch_size))
    num_samples = len(make_eval_loader(args.data_dir, 1))
    print(f"evaluated {args.pretrained} on {num_samples} test images, loss: {loss:.4f}")
    print(f"[Eval] acc: {acc:.4f}")


if __name__ == "__main__":
    main(get_args())
