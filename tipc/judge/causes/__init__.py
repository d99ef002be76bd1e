"""Plain causes of failed steps, from the catalogue `specs/causes/causes.yaml` (schema tipc.causes/2).

A failed step's output and what is known around it (the `Context`: the Paddle version of the interpreter
that ran it, PIR in force, tipc's switches in force, what the earlier steps did, the repo's code) are matched
against the catalogue's entries in file order. An entry holds when all its conditions hold: conditions on
the output (a log line matches), and preconditions on the context (`paddle: ">=3"`, `upstream: {stage:
export, status: passed}`, `switch: device-cpu` ...). A precondition whose fact is unknown does not hold, so
an entry fires only where what it claims is true. Matching uses a closed set of condition operators (see
`OPERATORS`), never eval.

The step's own error comes first (entries in file order); an entry with `follows` names an earlier step that
did not pass only when the file this step lacks is what that step should have made. An entry marked
`last_resort` (the unrecognised failure: its exception type and message) holds only when no other did.

`explain_step` is what the runner is handed (tipc.execute.runner.RunOptions.explain); `explain_record`
finds the causes of every failed step of a record read back (tipc check, the causes benchmark).

This package's public face; its modules, each importing only those listed before it: `model` (vocabulary
and values), `logs` (a step's output as text), `repo_code` (searching the repo's code), `upstream` (which
earlier step should have made a missing file), `matching` (one matcher per operator), `catalogue` (the
entries that hold), `loading` (the schema-checked catalogue file), `context` (a step's Context from a run
record), `explain` (the entry points).
"""

from __future__ import annotations

from tipc.core.causes import Cause
from tipc.judge.causes.catalogue import Catalogue
from tipc.judge.causes.explain import diagnose, diagnose_log, explain_record, explain_step
from tipc.judge.causes.loading import default_path, load_catalogue
from tipc.judge.causes.logs import read_tail
from tipc.judge.causes.model import OPERATORS, Context, Earlier

__all__ = [
    "OPERATORS",
    "Catalogue",
    "Cause",
    "Context",
    "Earlier",
    "default_path",
    "diagnose",
    "diagnose_log",
    "explain_record",
    "explain_step",
    "load_catalogue",
    "read_tail",
]
