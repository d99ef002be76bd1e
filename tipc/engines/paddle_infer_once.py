"""Worker: run Paddle Inference once on a saved batch. Meant to be started through `tipc.proc` in a child.

    python -m tipc.engines.paddle_infer_once MODEL_DIR INPUTS.npy OUT.npz [--input-name NAME]

Feeds INPUTS.npy (one array, the model's single input unless --input-name says otherwise) on CPU with one math
thread and writes every output to OUT.npz under its output name. Exit 0 on success, 3 with a message
otherwise.
A minimal stand-in for the checks helper's general worker, so the serving check depends only on its own code.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="paddle_infer_once")
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("inputs", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--input-name", default=None)
    args = parser.parse_args(argv)

    import numpy as np

    from tipc.serve.model import PredictorPool

    pool = PredictorPool(args.model_dir, size=1, cpu_threads=1)
    batch = np.load(args.inputs)
    name = args.input_name or pool.inputs[0].name
    if args.input_name is None and len(pool.inputs) != 1:
        sys.stderr.write(f"model has {len(pool.inputs)} inputs; pass --input-name\n")
        return 3
    outputs = pool.run({name: batch.astype(pool.inputs[0].dtype, copy=False)})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(args.out, **outputs)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
