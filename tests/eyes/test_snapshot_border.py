"""What the page script answers is checked at the border into Python (issue 26): a value of
the wrong type becomes "unknown" for that field, never an exception that ends the run."""

from __future__ import annotations

from typing import Any

from core.eyes.snapshot import _element

RECORD: dict[str, Any] = {
    "index": 3,
    "tag": "button",
    "name": "Go",
    "line": "[3]<button>Go</button>",
    "rect": [10, 20, 30, 40],
    "inView": True,
    "isNew": False,
    "submits": True,
    "formAction": "http://127.0.0.1:8000/admin/auth/user/",
    "formMethod": "post",
}


def test_a_well_typed_record_is_read_as_it_is() -> None:
    element = _element(RECORD)
    assert (element.form_action, element.form_method) == (RECORD["formAction"], "post")


def test_an_element_where_a_url_belongs_becomes_unknown() -> None:
    # What a form whose control is named "action" handed over before the fix: the select.
    clobbered = {**RECORD, "formAction": {"0": {}, "1": {}}, "formMethod": ["post"]}
    element = _element(clobbered)
    assert (element.form_action, element.form_method) == (None, None)
    assert element.submits_form and element.name == "Go"


def test_every_optional_field_of_the_wrong_type_becomes_unknown() -> None:
    odd = {
        **RECORD,
        "role": 7,
        "frame": {"href": "x"},
        "inputType": [],
        "autocomplete": 1.5,
        "sensitive": "secret-ish",
        "frameLabel": {},
        "frameKey": 12,
        "localIndex": "4",
    }
    element = _element(odd)
    assert element.role is None and element.frame is None and element.input_type is None
    assert element.autocomplete is None and element.sensitive is None
    assert element.frame_label is None and element.frame_key is None
    assert element.local_index is None
