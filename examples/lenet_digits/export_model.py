"""Export trained weights to a static inference model (dynamic-to-static, paddle.jit.save).

    python export_model.py --pretrained=./output/latest.pdparams --save_inference_dir=./inference

Writes <save_inference_dir>/inference.pdmodel (or inference.json under PIR) + inference.pdiparams.
"""

from __future__ import annotations

import os

# The classic program format (inference.pdmodel) is what most deployment scripts expect; Paddle 3 writes
# PIR (inference.json) by default. Respect an explicit choice by the user.
os.environ.setdefault("FLAGS_enable_pir_api", "0")

import argparse

import paddle
from lenet_digits.model import LeNet, LeNetWithSoftmax
from lenet_digits.transforms import IMAGE_SIZE
from lenet_digits.utils import load_weights


def get_args(add_help: bool = True) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="LeNet digits export", add_help=add_help)
    parser.add_argument("--pretrained", default=None, help="trained weights (.pdparams)")
    parser.add_argument("--save_inference_dir", default="./inference", help="output folder")
    parser.add_argument("--img_size", type=int, default=IMAGE_SIZE)
    parser.add_argument("--device", default="cpu")
    return parser.parse_args()


def main(args: argparse.Namespace) -> None:
    paddle.device.set_device("cpu")  # exporting needs no accelerator
    model = LeNet()
    if args.pretrained and os.path.isfile(args.pretrained):
        load_weights(model, args.pretrained)
        print(f"[Export] loaded weights from {args.pretrained}")
    else:
        print(
            f"[WARNING] weight file {args.pretrained} does not exist, exporting random init!",
            flush=True,
        )
    deployed = LeNetWithSoftmax(model)
    deployed.eval()
    static = paddle.jit.to_static(
        deployed,
        input_spec=[
            paddle.static.InputSpec(shape=[None, 1, args.img_size, args.img_size], dtype="float32", name="x")
        ],
        full_graph=True,
    )
    os.makedirs(args.save_inference_dir, exist_ok=True)
    prefix = os.path.join(args.save_inference_dir, "inference")
    paddle.jit.save(static, prefix)
    written = sorted(n for n in os.listdir(args.save_inference_dir) if n.startswith("inference."))
    print(f"[Export] inference model saved in {args.save_inference_dir}: {', '.join(written)}")


if __name__ == "__main__":
    main(get_args())
