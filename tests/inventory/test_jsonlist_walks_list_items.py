"""jsonlist splits a List into its items: same objects as json.loads, each item's exact bytes,
its identity read without decoding it, and clear errors for anything that is not a List."""

from __future__ import annotations

import json

import pytest
import yaml

from inventory.jsonlist import Head, JSONError, decode, head, split_list
from tests.conftest import H100_SLICES, VKS_CLAIM, VKS_SLICES


def _real_items():
    items = []
    for f in (H100_SLICES, VKS_SLICES, VKS_CLAIM):
        items.extend(yaml.safe_load(f.read_text())["items"])
    return items


def _kubectl_list(items, indent=None, **meta):
    # kubectl -o json orders the top-level keys alphabetically: apiVersion, items, kind, metadata.
    doc = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": "", **meta}}
    return json.dumps(doc, indent=indent)


@pytest.mark.parametrize("indent", [None, 2], ids=["compact", "indented"])
@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
def test_split_items_decode_to_what_json_loads_gives(indent, as_bytes):
    text = _kubectl_list(_real_items(), indent=indent)
    doc = split_list(text.encode() if as_bytes else text)
    assert doc is not None and doc.kind == "List"
    assert [decode(raw) for raw in doc.items] == json.loads(text)["items"]
    for raw in doc.items:
        assert json.loads(bytes(raw)) == decode(raw)


def test_compact_item_bytes_are_the_item_exactly_as_in_the_file():
    items = _real_items()
    doc = split_list(_kubectl_list(items).encode())
    assert [bytes(raw).decode() for raw in doc.items] == [json.dumps(i) for i in items]


def test_indented_item_bytes_are_a_slice_of_the_input():
    text = _kubectl_list(_real_items(), indent=2)
    for raw in split_list(text.encode()).items:
        assert bytes(raw).decode() in text


def test_head_reads_each_items_identity():
    items = _real_items()
    for raw, item in zip(split_list(_kubectl_list(items)).items, items, strict=True):
        m = item["metadata"]
        assert head(raw) == Head(item["kind"], item["apiVersion"], m["name"], m.get("namespace", ""),
                                 m.get("uid", ""), m.get("resourceVersion", ""))  # fmt: skip


def test_head_of_an_api_list_item_has_no_kind():
    item = {k: v for k, v in _real_items()[0].items() if k not in ("kind", "apiVersion")}
    h = head(json.dumps(item).encode())
    assert (h.kind, h.api_version, h.name) == ("", "", item["metadata"]["name"])


def test_head_of_an_item_with_odd_field_types_is_none():
    assert head(b'{"kind": 3, "metadata": {"name": "x"}}') is None
    assert head(b'{"kind": "Pod", "metadata": {"name": ["x"]}}') is None


def test_continue_token_of_an_api_page_is_read_after_the_items():
    page = {"kind": "ResourceSliceList", "apiVersion": "resource.k8s.io/v1", "items": _real_items()[:1],
            "metadata": {"resourceVersion": "12", "continue": "eyJzdGFydCI6IDJ9"}}  # fmt: skip
    doc = split_list(json.dumps(page))
    assert (len(doc.items), doc.kind, doc.continue_token) == (1, "ResourceSliceList", "eyJzdGFydCI6IDJ9")
    assert split_list(_kubectl_list(_real_items()[:1])).continue_token == ""


@pytest.mark.parametrize("text", ['{"kind":"List","items":[]}', '{ "items" : [ ] , "kind" : "List" }', '{"items":[\n\n]}'])
def test_an_empty_items_array_is_a_list_without_items(text):
    doc = split_list(text)
    assert doc is not None and doc.items == []


def test_a_single_object_without_items_is_not_a_list():
    obj = yaml.safe_load(VKS_SLICES.read_text())["items"][0]
    assert split_list(json.dumps(obj, indent=2)) is None


@pytest.mark.parametrize("items", ['{"a": 1}', '"x"', "3"])
def test_items_that_is_not_an_array_is_not_a_list(items):
    assert split_list('{"kind":"List","items":' + items + "}") is None


@pytest.mark.parametrize("text", ["[]", "[{}]", '"List"', "42"])
def test_a_top_level_that_is_not_an_object_is_not_a_list(text):
    assert split_list(text) is None


def test_truncated_text_is_a_json_error():
    items = _real_items()
    text = _kubectl_list(items)
    cut = text.index(json.dumps(items[3])) + 40  # inside the fourth item
    with pytest.raises(JSONError):
        split_list(text[:cut])
    with pytest.raises(JSONError):
        split_list(text[: text.index('"kind"')])


@pytest.mark.parametrize("tail", ["x", "{}", ',{"a":1}', "]"])
def test_trailing_garbage_after_the_list_is_a_json_error(tail):
    with pytest.raises(JSONError):
        split_list(_kubectl_list(_real_items()[:1]) + "\n" + tail)


def test_trailing_whitespace_is_accepted():
    assert len(split_list(_kubectl_list(_real_items()[:2]) + " \n\t\r\n").items) == 2


@pytest.mark.parametrize("text", ['{"items":[{"a":1} {"b":2}]}', '{"items":[{"a":1},]}', '{"items" [{}]}', '{"kind":"List" "items":[]}'])
def test_missing_or_extra_separators_are_json_errors(text):
    with pytest.raises(JSONError):
        split_list(text)


def test_decode_of_invalid_json_is_a_json_error():
    with pytest.raises(JSONError):
        decode(b'{"a": ')


HOSTILE = {
    "quote": 'say "hi"',
    "backslash": "C:\\temp\\new\\x",
    "script": "</script><script>alert(1)</script>",
    "unicode": "GPU ☃ — ü 日本",
    "astral": "\U0001f680",
    "control": "tab\tnl\nnul\x00",
    "braces": '}]},{"items":[',
}


@pytest.mark.parametrize("ensure_ascii", [True, False], ids=["escaped", "utf8"])
def test_hostile_and_unicode_label_values_survive_exactly(ensure_ascii):
    obj = yaml.safe_load(VKS_SLICES.read_text())["items"][0]
    obj["metadata"]["labels"] = dict(HOSTILE)
    other = {"kind": "Pod", "metadata": {"name": "p", "annotations": {"x": '\\"]'}}}
    text = json.dumps({"kind": "List", "items": [obj, other]}, ensure_ascii=ensure_ascii)
    doc = split_list(text.encode())
    assert [decode(raw) for raw in doc.items] == [obj, other]
    assert decode(doc.items[0])["metadata"]["labels"] == HOSTILE
    assert bytes(doc.items[0]).decode() == json.dumps(obj, ensure_ascii=ensure_ascii)


@pytest.mark.parametrize("shape", [
    lambda n: "[" * n + "]" * n,
    lambda n: '{"kind":"","metadata":{},"x":' + "[" * (n - 1) + "]" * (n - 1) + "}",  # an object around arrays
    lambda n: '{"a":' * (n - 1) + "[]" + "}" * (n - 1),  # arrays inside objects
    lambda n: "[" + '{"a":[' * ((n - 1) // 2) + "]}" * ((n - 1) // 2) + "]",  # alternating, as deep as n when n is odd
])  # fmt: skip
def test_the_text_nesting_check_counts_each_level_once(shape):
    """The bytes-level check agrees with a walk of the decoded value at the limit and one past
    it, whatever kinds alternate (it peeled ``{[]}`` as one level, so 101 levels passed)."""
    from inventory.jsonlist import MAX_DEPTH, nested_deeper, nesting_within

    for n in (MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2):
        text = shape(n).encode()
        value = json.loads(text)
        within = nesting_within(text)
        assert within is None or within == (not nested_deeper(value)), (n, within)
