"""A step's output is read in bounded chunks whatever its line lengths, its log is capped (head and tail kept,
the dropped bytes counted and stated), and a query's captured output is bounded (issue 22)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tipc.execute import proc

# The child writes `chunks` MiB, chunk i made of the letter chr(97 + i % 26), with no newline at all.
_LONG_LINE = """
import os, sys
for i in range(int(sys.argv[1])):
    os.write(1, bytes([97 + i % 26]) * (1 << 20))
"""

# Runs proc.run on a long line in a fresh interpreter (tipc's side alone, measured from its own peak RSS).
_MEASURE = """
import json, resource, sys
from tipc.execute import proc
lines = []
res = proc.run([sys.executable, sys.argv[1], sys.argv[2]], cwd=".", log_path=sys.argv[3],
               log_limit=int(sys.argv[4]), on_line=lines.append)
print(json.dumps({"code": res.exit_code, "dropped": res.log_dropped, "lines": [l[-120:] for l in lines],
                  "first": len(lines[0]) if lines else 0,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _measure(tmp_path: Path, chunks: int, limit: int, log: Path) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            str(tmp_path / "measure.py"),
            str(tmp_path / "long.py"),
            str(chunks),
            str(log),
            str(limit),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout)
    return out


def test_a_huge_line_without_newline_costs_tipc_a_chunk_not_the_line(tmp_path: Path) -> None:
    chunks, limit = 256, 8 << 20
    (tmp_path / "long.py").write_text(_LONG_LINE)
    (tmp_path / "measure.py").write_text(_MEASURE)
    log = tmp_path / "step.log"
    # The same reader on a 16 MiB line gives the machine's own overhead (allocator arenas, huge pages), which
    # differs between hosts; what the 256 MiB line adds on top of it must be a few chunks, not the line
    # (it was 4.8 GiB for a 3 GiB line).
    small = _measure(tmp_path, 16, limit, tmp_path / "small.log")
    out = _measure(tmp_path, chunks, limit, log)
    assert out["code"] == 0
    grown = out["peak_mib"] - small["peak_mib"]
    assert grown < 48, (out["peak_mib"], small["peak_mib"])
    total = chunks << 20
    assert out["dropped"] == total - limit
    data = log.read_bytes()
    head, marker, tail = data[: limit // 2], data[limit // 2 : -(limit // 2)], data[-(limit // 2) :]
    assert head == b"a" * (1 << 20) + b"b" * (1 << 20) + b"c" * (1 << 20) + b"d" * (1 << 20)
    last = [chr(97 + i % 26).encode() * (1 << 20) for i in range(chunks - 4, chunks)]
    assert tail == b"".join(last)
    assert f"{total - limit} bytes of output dropped here".encode() in marker
    assert len(data) < limit + 300
    assert not (tmp_path / "step.log.tail").exists()
    # the line callback got the one line, cut, with what it did not show counted
    assert len(out["lines"]) == 1
    assert out["first"] < proc.MAX_LINE_BYTES + 100
    assert out["lines"][0].endswith(
        f"[tipc: {total - proc.MAX_LINE_BYTES} more bytes of this line not shown]"
    )


def test_many_lines_over_the_cap_keep_the_first_and_the_last(tmp_path: Path) -> None:
    code = "import sys\nfor i in range(200000):\n    sys.stdout.write(f'line {i:06d}\\n')\n"
    log = tmp_path / "step.log"
    lines: list[str] = []
    limit = 256 << 10
    res = proc.run(
        [sys.executable, "-c", code], cwd=tmp_path, log_path=log, log_limit=limit, on_line=lines.append
    )
    assert res.exit_code == 0
    assert len(lines) == 200000 and lines[-1] == "line 199999"  # the callback sees every line
    total = 200000 * len("line 000000\n")
    assert res.log_dropped == total - limit
    text = log.read_text()
    assert text.startswith("line 000000\nline 000001\n")
    assert text.endswith("line 199998\nline 199999\n")
    found = re.findall(r"\[tipc: (\d+) bytes of output dropped here", text)
    assert found == [str(total - limit)]
    assert log.stat().st_size < limit + 300


def test_output_under_the_cap_is_kept_whole(tmp_path: Path) -> None:
    log = tmp_path / "step.log"
    res = proc.run(
        [sys.executable, "-c", "print('a\\r'); print('b' * 100, end='')"],
        cwd=tmp_path,
        log_path=log,
        log_limit=1024,
    )
    assert res.log_dropped == 0
    assert log.read_bytes() == b"a\r\n" + b"b" * 100


def test_the_capped_log_joins_a_ring_that_wrapped(tmp_path: Path) -> None:
    log = proc.CappedLog(tmp_path / "x.log", 10)  # head 5, tail 5
    for piece in (b"0123", b"4567", b"89ab", b"c", b"defg"):
        log.write(piece)
    assert log.close() == 17 - 10
    data = (tmp_path / "x.log").read_bytes()
    assert data.startswith(b"01234\n[tipc: 7 bytes of output dropped here")
    assert data.endswith(b"]\ncdefg")
    with pytest.raises(ValueError):
        log.write(b"late")
    with pytest.raises(ValueError):
        proc.CappedLog(tmp_path / "y.log", 0)


def test_capture_keeps_a_bounded_part_of_a_query_that_prints_without_end(tmp_path: Path) -> None:
    code = "import os\nfor _ in range(64):\n    os.write(1, b'x' * (1 << 20))\n"
    rc, out = proc.capture([sys.executable, "-c", code], cwd=tmp_path, limit=1 << 20)
    assert rc == 0
    assert out.startswith("x" * (1 << 20) + "\n[tipc: ")
    assert out.endswith(f"{63 << 20} more bytes of output not kept]")
    rc, out = proc.capture([sys.executable, "-c", "print('a\\r'); print('b')"], cwd=tmp_path)
    assert (rc, out) == (0, "a\nb")


def test_a_pipe_talks_to_its_child_and_is_stopped_at_its_deadline(tmp_path: Path) -> None:
    with proc.Pipe(["cat"], cwd=tmp_path, env=None, timeout_s=30) as cat:
        cat.stdin.write(b"hello\n")
        cat.stdin.flush()
        assert cat.stdout.readline() == b"hello\n"
    assert cat.close() == 0 and not cat.timed_out
    slow = proc.Pipe(["sleep", "30"], cwd=tmp_path, env=None, timeout_s=0.3)
    assert slow.stdout.read() == b""  # the group was killed at the deadline
    assert slow.close() is None and slow.timed_out
