"""Serving client: post each lite-data image to the pipeline HTTP service and print one line per image.

    python pipeline_http_client.py --image_dir=../../lite_data/infer/ [--url=http://127.0.0.1:18093/lenet_digits/prediction]
    image_name: ../../lite_data/infer/digit_0.png, class_id: 0, prob: 0.998512

Speaks Paddle Serving's pipeline protocol: {"key": [...], "value": [...], "logid": n} in, {"err_no": 0,
"err_msg": "", "key": [...], "value": [...]} out. The server is `tipc serve` (Paddle Serving itself no longer
installs with Paddle >= 2.5). Pre- and postprocessing are the repo's own (lenet_digits.transforms), so the
lines match infer.py's for the same images. Exits 1 if any request fails.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request

import numpy as np

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, REPO_ROOT)

from lenet_digits.transforms import format_result, list_images, load_image, postprocess  # noqa: E402


def get_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="LeNet digits pipeline HTTP client")
    parser.add_argument("--image_dir", default="../../lite_data/infer/", help="an image file or a folder")
    parser.add_argument("--url", default="http://127.0.0.1:18093/lenet_digits/prediction")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request")
    return parser.parse_args()


def predict(url: str, image: np.ndarray, logid: int, timeout: float) -> dict:
    """One pipeline request; the value is the preprocessed [1, 1, 8, 8] tensor as a JSON nested list."""
    payload = {"key": ["image"], "value": [json.dumps(image[np.newaxis].tolist())], "logid": logid}
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:  # 4xx/5xx still carry a pipeline-shaped JSON body
        body = exc.read().decode("utf-8", errors="replace")
        try:
            return json.loads(body)
        except json.JSONDecodeError:
            return {"err_no": exc.code, "err_msg": body}


def main() -> int:
    args = get_args()
    failures = 0
    for logid, path in enumerate(list_images(args.image_dir)):
        try:
            reply = predict(args.url, load_image(path), logid, args.timeout)
        except OSError as exc:
            print(f"image_name: {path}, error: cannot reach {args.url}: {exc}", file=sys.stderr)
            failures += 1
            continue
        if reply.get("err_no") != 0:
            message = f"err_no: {reply.get('err_no')}, err_msg: {reply.get('err_msg')}"
            print(f"image_name: {path}, {message}", file=sys.stderr)
            failures += 1
            continue
        probs = np.asarray(json.loads(reply["value"][0]), dtype=np.float32)
        [(class_id, prob)] = postprocess(probs)
        print(format_result(path, class_id, prob), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
