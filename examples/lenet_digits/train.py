"""Train LeNet on the lite digits data; logs every iteration and evaluates at the end of every epoch.

python train.py --device=cpu --epochs=5 --batch_size=16 --output_dir=./output/
"""

from __future__ import annotations

import argparse
import os
import time

import paddle
from lenet_digits.data import DigitsDataset
from lenet_digits.engine import evaluate, make_eval_loader
from lenet_digits.model import LeNet
from lenet_digits.utils import AverageMeter, load_weights, resolve_device, set_seed


def get_args(add_help: bool = True) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="LeNet digits training", add_help=add_help)
    parser.add_argument("--device", default="cpu", help="cpu or gpu")
    parser.add_argument(
        "--data_dir", default="./lite_data", help="folder with train_list.txt / test_list.txt"
    )
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=0.01, help="initial learning rate (cosine decay to 0)")
    parser.add_argument("--weight_decay", type=float, default=1e-4)
    parser.add_argument("--output_dir", default="./output/", help="where latest/best_model .pdparams go")
    parser.add_argument("--pretrained", default=None, help="weights to start from (.pdparams)")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--print_freq", type=int, default=1, help="log every N iterations")
    # Checkpoint segments (tipc converge): off unless given; without them training and its log are unchanged.
    parser.add_argument(
        "--save_interval", type=int, default=0, help="save a checkpoint every N global steps (0: never)"
    )
    parser.add_argument("--checkpoint_dir", default=None, help="where checkpoints go (default: output_dir)")
    parser.add_argument(
        "--resume", default=None, help="checkpoint prefix to resume from (<prefix>.pdparams and .pdopt)"
    )
    parser.add_argument(
        "--start_step", type=int, default=0, help="global steps already done: fast-forward the data past them"
    )
    parser.add_argument("--max_steps", type=int, default=0, help="stop after this global step (0: no limit)")
    return parser.parse_args()


class Logger:
    """Prints to stdout and appends the same line to <output_dir>/train.log."""

    def __init__(self, log_path: str) -> None:
        self.log_file = open(log_path, "a")  # noqa: SIM115 - closed in close()

    def __call__(self, message: str) -> None:
        print(message, flush=True)
        self.log_file.write(message + "\n")
        self.log_file.flush()

    def close(self) -> None:
        self.log_file.close()


def main(args: argparse.Namespace) -> None:
    paddle.device.set_device(resolve_device(args.device))
    set_seed(args.seed)
    os.makedirs(args.output_dir, exist_ok=True)
    log = Logger(os.path.join(args.output_dir, "train.log"))
    # the segment flags show only when given, so the log of a plain run stays as it was
    segment_flags = ("save_interval", "checkpoint_dir", "resume", "start_step", "max_steps")
    shown = {k: v for k, v in vars(args).items() if k not in segment_flags or v}
    log(f"[Config] {shown}")

    train_set = DigitsDataset(args.data_dir, "train_list.txt")
    train_loader = paddle.io.DataLoader(
        train_set, batch_size=args.batch_size, shuffle=True, drop_last=False, num_workers=0
    )
    eval_loader = make_eval_loader(args.data_dir, batch_size=64)

    model = LeNet()
    if args.pretrained:
        load_weights(model, args.pretrained)
        log(f"[Train] loaded pretrained weights from {args.pretrained}")
    segments = bool(args.save_interval or args.resume or args.start_step or args.max_steps)

    iters_per_epoch = len(train_loader)
    scheduler = paddle.optimizer.lr.CosineAnnealingDecay(
        learning_rate=args.lr, T_max=max(args.epochs * iters_per_epoch, 1)
    )
    optimizer = paddle.optimizer.Adam(
        learning_rate=scheduler, parameters=model.parameters(), weight_decay=args.weight_decay
    )
    loss_fn = paddle.nn.CrossEntropyLoss()
    if args.resume:
        load_weights(model, args.resume + ".pdparams")
        optimizer.set_state_dict(paddle.load(args.resume + ".pdopt"))
        # The schedule's position comes from the checkpoint, its peak from --lr (so a changed --lr shows).
        scheduler.base_lr = args.lr
        scheduler.step(scheduler.last_epoch)
        log(f"[Train] resumed from {args.resume} at step {args.start_step}")
    checkpoint_dir = args.checkpoint_dir or args.output_dir
    global_step = 0
    stop = False

    reader_cost = AverageMeter()
    batch_cost = AverageMeter()
    samples = AverageMeter()
    loss_meter = AverageMeter()
    acc_meter = AverageMeter()
    best_acc = -1.0
    model.train()
    for epoch in range(1, args.epochs + 1):
        tic = time.perf_counter()
        for it, (images, labels) in enumerate(train_loader, start=1):
            global_step += 1
            if global_step <= args.start_step:
                continue  # fast-forward: the loader still draws the same shuffled batches
            reader_cost.update(time.perf_counter() - tic)
            lr = optimizer.get_lr()
            logits = model(images)
            loss = loss_fn(logits, labels)
            loss.backward()
            optimizer.step()
            optimizer.clear_grad()
            scheduler.step()

            n = int(labels.shape[0])
            acc = float((logits.argmax(axis=-1) == labels).astype("float32").mean())
            loss_meter.update(float(loss), n)
            acc_meter.update(acc, n)
            samples.update(n)
            batch_cost.update(time.perf_counter() - tic)
            if it % args.print_freq == 0 or it == iters_per_epoch:
                avg_samples = samples.total / max(samples.count, 1)
                log(
                    f"[Epoch {epoch}/{args.epochs}][Iter {it}/{iters_per_epoch}] "
                    f"loss: {loss_meter.avg:.4f}, acc: {acc_meter.avg:.4f}, lr: {lr:.6f}, "
                    f"avg_reader_cost: {reader_cost.avg:.5f} sec, avg_batch_cost: {batch_cost.avg:.5f} sec, "
                    f"avg_samples: {avg_samples:.1f}, "
                    f"avg_ips: {samples.total / max(batch_cost.total, 1e-12):.1f} images/sec"
                )
                for meter in (reader_cost, batch_cost, samples, loss_meter, acc_meter):
                    meter.reset()
            if segments:
                log(f"[Step {global_step}] loss: {float(loss):.6f}, acc: {acc:.6f}, lr: {lr:.8f}")
            if args.save_interval and global_step % args.save_interval == 0:
                os.makedirs(checkpoint_dir, exist_ok=True)
                prefix = os.path.join(checkpoint_dir, f"step_{global_step}")
                paddle.save(model.state_dict(), prefix + ".pdparams")
                paddle.save(optimizer.state_dict(), prefix + ".pdopt")
                log(f"[Checkpoint] saved step {global_step} to {prefix}")
            tic = time.perf_counter()
            if args.max_steps and global_step >= args.max_steps:
                stop = True
                break
        if stop:
            log(f"[Train] stopped after step {global_step} (--max_steps)")
            break
        if global_step <= args.start_step:
            continue  # an epoch skipped whole: nothing trained, nothing to evaluate

        eval_acc, _ = evaluate(model, eval_loader)
        log(f"[Eval] acc: {eval_acc:.4f}")
        paddle.save(model.state_dict(), os.path.join(args.output_dir, "latest.pdparams"))
        paddle.save(optimizer.state_dict(), os.path.join(args.output_dir, "latest.pdopt"))
        if eval_acc > best_acc:
            best_acc = eval_acc
            paddle.save(model.state_dict(), os.path.join(args.output_dir, "best_model.pdparams"))
            best_path = os.path.join(args.output_dir, "best_model.pdparams")
            log(f"[Train] best acc {best_acc:.4f}, saved {best_path}")
    latest_path = os.path.join(args.output_dir, "latest.pdparams")
    log(f"[Train] done; latest weights: {latest_path}, best acc: {best_acc:.4f}")
    log.close()


if __name__ == "__main__":
    main(get_args())
