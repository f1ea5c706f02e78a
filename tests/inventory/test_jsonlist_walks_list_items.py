"""jsonlist.iter_items walks a List's items one by one: same objects as json.loads, exact item text."""

from __future__ import annotations

import json

import pytest
import yaml

from inventory.jsonlist import ListHead, NotAList, iter_items
from tests.conftest import H100_SLICES, VKS_CLAIM, VKS_SLICES


def _real_items():
    items = []
    for f in (H100_SLICES, VKS_SLICES, VKS_CLAIM):
        items.extend(yaml.safe_load(f.read_text())["items"])
    return items


def _kubectl_list(items, indent=None):
    # kubectl -o json orders the top-level keys alphabetically: apiVersion, items, kind, metadata.
    return json.dumps({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}, indent=indent)


@pytest.mark.parametrize("indent", [None, 2], ids=["compact", "indented"])
def test_walked_items_equal_what_json_loads_gives(indent):
    text = _kubectl_list(_real_items(), indent=indent)
    walked = list(iter_items(text))
    assert [item for item, _ in walked] == json.loads(text)["items"]
    assert len(walked) == len(_real_items())


@pytest.mark.parametrize("indent", [None, 2], ids=["compact", "indented"])
def test_each_item_text_decodes_to_its_item_and_is_a_slice_of_the_input(indent):
    text = _kubectl_list(_real_items(), indent=indent)
    for item, item_text in iter_items(text):
        assert json.loads(item_text) == item
        assert item_text in text
        assert item_text[0] == "{" and item_text[-1] == "}"


def test_compact_item_text_is_the_item_encoded_exactly_as_in_the_file():
    items = _real_items()
    text = _kubectl_list(items)
    assert [t for _, t in iter_items(text)] == [json.dumps(i) for i in items]


def test_keys_before_and_after_items_land_in_the_head():
    head = ListHead()
    text = _kubectl_list(_real_items()[:2])
    assert not head.complete
    got = list(iter_items(text, head))
    assert len(got) == 2
    assert head.complete
    assert head.fields == {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}}


def test_head_fields_after_items_are_not_known_until_the_walk_passes_them():
    head = ListHead()
    walk = iter_items(_kubectl_list(_real_items()[:2]), head)
    next(walk)
    assert head.fields == {"apiVersion": "v1"}  # kind and metadata come after items
    assert not head.complete
    list(walk)
    assert head.fields["kind"] == "List" and head.complete


def test_continue_token_of_an_api_page_is_read_from_metadata_after_items():
    page = {"kind": "ResourceSliceList", "apiVersion": "resource.k8s.io/v1", "items": _real_items()[:1],
            "metadata": {"resourceVersion": "12", "continue": "eyJzdGFydCI6IDJ9"}}  # fmt: skip
    head = ListHead()
    assert len(list(iter_items(json.dumps(page), head))) == 1
    assert head.fields["metadata"]["continue"] == "eyJzdGFydCI6IDJ9"


@pytest.mark.parametrize("text", ['{"kind":"List","items":[]}', '{ "items" : [ ] , "kind" : "List" }', '{"items":[\n\n]}'])
def test_an_empty_items_array_yields_nothing_and_completes(text):
    head = ListHead()
    assert list(iter_items(text, head)) == []
    assert head.complete
    assert head.fields == {k: v for k, v in json.loads(text).items() if k != "items"}


def test_a_single_object_without_items_is_not_a_list_and_fills_the_head():
    obj = yaml.safe_load(VKS_SLICES.read_text())["items"][0]
    head = ListHead()
    with pytest.raises(NotAList):
        list(iter_items(json.dumps(obj, indent=2), head))
    assert head.complete
    assert head.fields == obj


@pytest.mark.parametrize("items", ['{"a": 1}', '"x"', "null", "3"])
def test_items_that_is_not_an_array_is_not_a_list(items):
    with pytest.raises(NotAList):
        list(iter_items('{"kind":"List","items":' + items + "}"))


@pytest.mark.parametrize("text", ["[]", "[{}]", '"List"', "42"])
def test_a_top_level_that_is_not_an_object_is_not_a_list(text):
    with pytest.raises(NotAList):
        list(iter_items(text))


def test_truncated_text_raises_after_yielding_the_complete_items():
    items = _real_items()
    text = _kubectl_list(items)
    cut = text.index(json.dumps(items[3])) + 40  # inside the fourth item
    got = []
    with pytest.raises(json.JSONDecodeError):
        for item, _ in iter_items(text[:cut]):
            got.append(item)
    assert got == items[:3]


def test_text_cut_after_the_items_array_raises_and_leaves_the_head_incomplete():
    text = _kubectl_list(_real_items()[:2])
    head = ListHead()
    with pytest.raises(json.JSONDecodeError):
        list(iter_items(text[: text.index('"kind"')], head))
    assert not head.complete


@pytest.mark.parametrize("tail", ["x", "{}", ',{"a":1}', "]"])
def test_trailing_garbage_after_the_list_raises(tail):
    text = _kubectl_list(_real_items()[:1]) + "\n" + tail
    with pytest.raises(json.JSONDecodeError, match="Extra data"):
        list(iter_items(text))


def test_trailing_whitespace_is_accepted():
    assert len(list(iter_items(_kubectl_list(_real_items()[:2]) + " \n\t\r\n"))) == 2


@pytest.mark.parametrize("text", ['{"items":[{"a":1} {"b":2}]}', '{"items":[{"a":1},]}', '{"items" [{}]}', '{"kind":"List" "items":[]}'])
def test_missing_or_extra_separators_raise_decode_errors(text):
    with pytest.raises(json.JSONDecodeError):
        list(iter_items(text))


HOSTILE = {
    "quote": 'say "hi"',
    "backslash": "C:\\temp\\new\\x",
    "script": "</script><script>alert(1)</script>",
    "unicode": "GPU ☃ — ü 日本",
    "astral": "\U0001f680",
    "control": "tab\tnl\nnul\x00",
    "braces": "}]},{\"items\":[",
}


@pytest.mark.parametrize("ensure_ascii", [True, False], ids=["escaped", "utf8"])
def test_hostile_and_unicode_label_values_survive_exactly(ensure_ascii):
    obj = yaml.safe_load(VKS_SLICES.read_text())["items"][0]
    obj["metadata"]["labels"] = dict(HOSTILE)
    other = {"kind": "Pod", "metadata": {"name": "p", "annotations": {"x": "\\\"]"}}}
    text = json.dumps({"kind": "List", "items": [obj, other]}, ensure_ascii=ensure_ascii)
    walked = list(iter_items(text))
    assert [i for i, _ in walked] == [obj, other]
    assert walked[0][0]["metadata"]["labels"] == HOSTILE
    assert json.loads(walked[0][1])["metadata"]["labels"] == HOSTILE
    assert walked[0][1] == json.dumps(obj, ensure_ascii=ensure_ascii)
