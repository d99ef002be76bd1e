"""A demo-like model repo built from a dict: scripts at the root, lite data, pretrained weights."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.helpers.trees import write_tree

STR2BOOL = "def str2bool(v):\n    return str(v).lower() in ('true', '1')\n"

DEMO_FILES: dict[str, str] = {
    "train.py": STR2BOOL
    + """
import argparse, os
import paddle

def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--data_dir", default="./lite_data")
    p.add_argument("--output_dir", default="./output")
    p.add_argument("--pretrained", default=None)
    p.add_argument("--use_gpu", type=str2bool, default=False)
    return p.parse_args()

def main(args):
    paddle.save({}, os.path.join(args.output_dir, "latest.pdparams"))
""",
    "eval.py": STR2BOOL
    + """
import argparse
p = argparse.ArgumentParser()
p.add_argument("--pretrained", required=True)
p.add_argument("--data_dir", default="./lite_data")
p.add_argument("--use_gpu", type=str2bool, default=False)
""",
    "export_model.py": """
import argparse
p = argparse.ArgumentParser()
p.add_argument("--pretrained", required=True)
p.add_argument("--save_inference_dir", default="./inference")
""",
    "infer.py": STR2BOOL
    + """
import argparse
import paddle.inference as paddle_infer
p = argparse.ArgumentParser()
p.add_argument("--model_dir", required=True)
p.add_argument("--img_path", default=None)
p.add_argument("--use_gpu", type=str2bool, default=False)
p.add_argument("--enable_mkldnn", type=str2bool, default=False)
p.add_argument("--cpu_threads", type=int, default=1)
p.add_argument("--batch_size", type=int, default=1)
p.add_argument("--use_tensorrt", type=str2bool, default=False)
p.add_argument("--precision", default="fp32")
p.add_argument("--benchmark", type=str2bool, default=False)
""",
    "predict.py": """
import argparse
p = argparse.ArgumentParser()
p.add_argument("--pretrained")
p.add_argument("--img_path")
""",
    "lite_data/train_list.txt": "images/0.png 0\n",
    "lite_data/test_list.txt": "images/1.png 1\n",
    "lite_data/images/0.png": "not really a png",
    "lite_data/images/1.png": "not really a png",
    "pretrained/lenet_digits.pdparams": "weights",
}


def build_tree(root: Path, files: dict[str, str]) -> Path:
    return write_tree(root, {rel: textwrap.dedent(text) for rel, text in files.items()})


# A Python serving deployment (added to DEMO_FILES where a test wants the serving chain).
SERVING_FILES: dict[str, str] = {
    "deploy/serving_python/README.md": "# serving\n",
    "deploy/serving_python/pipeline_http_client.py": """
import argparse
p = argparse.ArgumentParser()
p.add_argument("--image_dir", default="../../lite_data/images/")
p.add_argument("--url", default="http://127.0.0.1:18093/lenet_digits/prediction")
p.add_argument("--timeout", type=float, default=30.0)
""",
}
