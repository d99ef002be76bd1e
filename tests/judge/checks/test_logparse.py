import math

from tipc.judge.checks.logparse import parse_fields, parse_line, step_index

DEMO = (
    "[Epoch 1/5][Iter 10/40] loss: 2.1034, acc: 0.3125, lr: 0.010000, avg_reader_cost: 0.00012 sec, "
    "avg_batch_cost: 0.01234 sec, avg_samples: 16.0, avg_ips: 1296.5 images/sec"
)
OCR = (
    "[2022/05/05 10:00:00] ppocr INFO: epoch: [1/500], global_step: 10, lr: 0.001000, loss: 3.1429, "
    "loss_shrink_maps: 1.2, avg_reader_cost: 0.50209 s, avg_batch_cost: 0.79047 s, avg_samples: 8.0, "
    "ips: 10.12054 samples/s, eta: 0:05:00"
)
CLAS = (
    "[2022/05/05 10:00:00] ppcls INFO: [Train][Epoch 1/2][Iter: 0/10]lr(LinearWarmup): 0.00010000, "
    "CELoss: 7.12345, loss: 7.12345, batch_cost: 2.54 s, reader_cost: 1.23 s, ips: 12.6 samples/s, "
    "eta: 0:01:23"
)
DET = (
    "[05/05 10:00:00] ppdet.engine INFO: Epoch: [0] [ 0/10] learning_rate: 0.000010 loss: 8.1 loss_cls: 1.0 "
    "eta: 0:01:00 batch_cost: 1.2 data_cost: 0.5 ips: 3.3 images/s"
)
SEG = (
    "2022-05-05 10:00:00 [INFO]\t[TRAIN] epoch: 1, iter: 10/20, loss: 2.3, lr: 0.01, batch_cost: 0.5, "
    "reader_cost: 0.01, ips: 4.0 samples/sec | ETA 00:00:05"
)


def fields(text: str) -> dict[str, tuple[float, str | None]]:
    return {f.key: (f.value, f.unit) for f in parse_fields(text)}


def test_demo_line_has_every_field_with_units() -> None:
    f = fields(DEMO)
    assert f["loss"] == (2.1034, None)
    assert f["avg_reader_cost"] == (0.00012, "sec")
    assert f["avg_ips"] == (1296.5, "images/sec")
    p = parse_line(DEMO, 1)
    assert (p.epoch, p.epoch_total, p.iter, p.iter_total) == (1, 5, 10, 40)
    assert p.is_iteration and not p.is_eval


def test_repo_styles() -> None:
    ocr = parse_line(OCR, 1)
    assert ocr.get("ips") is not None and ocr.get("ips").unit == "samples/s"  # type: ignore[union-attr]
    assert ocr.global_step == 10 and ocr.epoch == 1
    assert "eta" not in fields(OCR)  # a time is not a number
    clas = parse_line(CLAS, 1)
    assert clas.loss() is not None and clas.loss().value == 7.12345  # type: ignore[union-attr]
    assert clas.iter == 0 and clas.is_iteration
    det = parse_line(DET, 1)
    assert fields(DET)["loss"] == (8.1, None) and det.is_iteration
    seg = parse_line(SEG, 1)
    assert seg.iter == 10 and seg.iter_total == 20 and fields(SEG)["ips"] == (4.0, "samples/sec")


def test_separators_lists_tensors_and_non_finite() -> None:
    assert fields("step 3 loss=1.5 avg_ips = 12 img/s")["avg_ips"] == (12.0, "img/s")
    assert fields("iter 3 loss 1.25")["loss"] == (1.25, None)
    assert fields("loss: [0.75], top1: (0.9, 0.8)")["top1"] == (0.9, None)
    t = "iter 3 loss: Tensor(shape=[1], dtype=float32, place=Place(cpu), stop_gradient=True, [2.30258512])"
    assert fields(t)["loss"] == (2.30258512, None)
    assert math.isnan(fields("iter 1 loss: nan")["loss"][0])
    assert math.isinf(fields("iter 1 loss: inf")["loss"][0])
    assert "loss" not in fields("lossy info: none")


def test_eval_lines_are_not_iterations() -> None:
    assert parse_line("[Eval] acc: 0.9312", 1).is_eval
    clas_eval = "[Eval][Epoch 1][Avg]CELoss: 2.3, loss: 2.3, top1: 0.1, top5: 0.5"
    p = parse_line(clas_eval, 1)
    assert p.is_eval and not p.is_iteration
    assert not parse_line("Evaluating...", 1).is_eval  # no metric: a mention, not metrics
    assert not parse_line("loss: 1.0", 1).is_iteration  # no speed field and no progress marker


def test_step_index_uses_epochs_and_falls_back_to_ordinals() -> None:
    lines = [
        parse_line(f"[Epoch {e}/2][Iter {i}/40] loss: 1.0 avg_ips: 1 images/sec", 1)
        for e in (1, 2)
        for i in (10, 20, 30, 40)
    ]
    assert step_index(lines) == [10, 20, 30, 40, 50, 60, 70, 80]
    unordered = [parse_line("loss: 1 ips: 2 images/s", 1) for _ in range(3)]
    assert step_index(unordered) == [1, 2, 3]


def test_metric_lines_without_eval_word_and_eval_prose() -> None:
    from tipc.judge.checks.logparse import mentions_eval_run

    ocr = "[2022/05/05 10:00:00] ppocr INFO: cur metric, precision: 0.5, recall: 0.3, hmean: 0.4, fps: 10.2"
    assert parse_line(ocr, 1).is_eval
    assert not parse_line(DEMO, 1).is_eval  # acc on an iteration line is a training figure
    assert mentions_eval_run("start eval ...") and mentions_eval_run("[2022] ppcls INFO: Eval begin")
    assert mentions_eval_run("Evaluating epoch 1")
    assert not mentions_eval_run("ppocr INFO:     eval_batch_step : [0, 2000]")
    assert not mentions_eval_run("Eval :")


def test_more_repo_styles() -> None:
    video = (
        "[2021/06/11 14:22:23] epoch:[  1/1  ] train step:0    loss: 2.39258 lr: 0.010000 top1: 0.06250 "
        "top5: 0.46875 batch_cost: 2.54236 sec, reader_cost: 1.71367 sec, ips: 3.14685 instance/sec."
    )
    p = parse_line(video, 1)
    assert p.is_iteration and not p.is_eval and p.epoch == 1 and p.global_step == 0
    assert fields(video)["ips"] == (3.14685, "instance/sec")
    video_val = video.replace("train step", "val step")
    assert parse_line(video_val, 1).is_eval and not parse_line(video_val, 1).is_iteration
    gan = (
        "[04/23 10:24:36] ppgan.engine.trainer INFO: Iter: 10/100 lr: 2.000e-04 D_GAN_loss: 0.693 "
        "G_GAN_loss: 0.69 batch_cost: 0.86 sec reader_cost: 0.22 sec ips: 1.16 images/s eta: 0:01:17"
    )
    g = parse_line(gan, 1)
    assert g.is_iteration and g.iter == 10 and g.loss() is not None and g.loss().key == "D_GAN_loss"  # type: ignore[union-attr]
    nlp = "global step 10, epoch: 1, batch: 10, loss: 0.69315, speed: 2.31 step/s"
    n = parse_line(nlp, 1)
    assert n.is_iteration and n.global_step == 10 and fields(nlp)["speed"] == (2.31, "step/s")
    tqdm = "Epoch 1: 100%|##########| 40/40 [00:02<00:00, 15.2it/s, loss=2.1]"
    t = parse_line(tqdm, 1)
    assert t.is_iteration and t.loss() is not None and t.loss().value == 2.1  # type: ignore[union-attr]


def test_step_index_prefers_global_step() -> None:
    lines = [parse_line(f"global_step: {s}, epoch: 1, loss: 1.0, avg_ips: 3", 1) for s in (5, 10, 20)]
    assert step_index(lines) == [5, 10, 20]
    assert step_index([]) == []
