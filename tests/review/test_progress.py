"""The live progress of a review: a table on a terminal, one line per event elsewhere."""

from __future__ import annotations

import io

from tipc.review.progress import PlainReviewObserver, RichReviewObserver, make_review_observer
from tipc.review.summary import Row


def _rows() -> tuple[Row, Row]:
    ok = Row("good", "/s/good", "h1", "PASS", wall_s=12.0, peak_rss_bytes=300 << 20)
    bad = Row(
        "bad", "/s/bad", "h2", "FAIL", first_failure="artefacts.licence", cause="no licence", wall_s=3.0
    )
    return ok, bad


def test_plain_lines() -> None:
    out = io.StringIO()
    obs = make_review_observer(out)
    assert isinstance(obs, PlainReviewObserver)
    obs.queued(["good", "bad"])
    obs.started("good")
    obs.stage("good", "[2/5] eval/norm_train ...")
    ok, bad = _rows()
    obs.finished(ok)
    obs.finished(bad)
    lines = out.getvalue().splitlines()
    assert lines[0] == "review: started good"
    assert lines[1] == "review: good: [2/5] eval/norm_train ..."  # the stage it is in
    assert lines[2] == "review: [1/2] good PASS 12.0s 300.0 MiB"
    assert lines[3] == "review: [2/2] bad FAIL 3.0s - artefacts.licence: no licence"


def test_live_table() -> None:
    out = io.StringIO()
    obs = RichReviewObserver(out, no_color=True)
    obs.queued(["good", "bad"])
    obs.started("good")
    obs.started("bad")
    obs.stage("bad", "check agreement ...")
    assert obs.state["bad"][0] == "check agreement ..."  # a running check's state is its stage
    ok, bad = _rows()
    obs.finished(ok)
    obs.finished(bad)
    obs.close()
    text = out.getvalue()
    assert "submission" in text and "good" in text and "PASS" in text
    assert "artefacts.licence: no licence" in text
