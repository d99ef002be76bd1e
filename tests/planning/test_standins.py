"""The stand-ins' Python recorder writes its JSON by hand (importing json was most of each call's CPU): the
line must be what json.dumps writes for the same values, whatever the strings hold."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tipc.planning.observe.standins import _RECORDER

_NS: dict[str, Any] = {"__name__": "recorder"}
exec(compile(_RECORDER, "_tipc_record.py", "exec"), _NS)  # tipc's own recorder text, as the stand-in runs it

# every code point, lone surrogates (what surrogateescape makes of undecodable bytes) included
_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=()), max_size=40)
_VALUES = st.fixed_dictionaries(
    {
        "name": _TEXT,
        "argv": st.lists(_TEXT, max_size=5),
        "cwd": _TEXT,
        "env": st.dictionaries(_TEXT, _TEXT, max_size=6),
        "stdout": st.one_of(st.none(), _TEXT),
        "stderr": st.one_of(st.none(), _TEXT),
        "via": st.just("stand-in"),
    }
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_the_recorders_json_is_json_dumps(value: dict[str, Any]) -> None:
    assert _NS["dumps"](value) == json.dumps(value)
