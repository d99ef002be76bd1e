"""`tipc check`: placeholder until its issue lands."""

from __future__ import annotations

import argparse

from tipc.errors import UserError

HELP = "check (not implemented yet)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER)


def run(args: argparse.Namespace) -> int:
    raise UserError("tipc check is not implemented yet")
