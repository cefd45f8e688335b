"""UITree: numbering, rendering, lookups and serialisation."""

from __future__ import annotations

import pickle

import pytest

from gui_gym.core.ui import UIElement, UITree, render_text


def tree() -> UITree:
    return UITree.build(
        [
            UIElement(7, "container", bounds=(0, 0, 360, 720)),
            UIElement(7, "button", "Search", clickable=True, bounds=(300, 0, 360, 40)),
            UIElement(
                7,
                "input",
                description="Search wikiHow",
                editable=True,
                focused=True,
                bounds=(0, 0, 300, 40),
            ),
            UIElement(7, "text", "Tips & <tricks>", bounds=(0, 50, 360, 90)),
            UIElement(
                7,
                "checkbox",
                "Wi-Fi",
                checkable=True,
                checked=True,
                enabled=False,
                bounds=(0, 100, 360, 140),
            ),
        ],
        can_scroll_down=True,
    )


def test_build_numbers_elements_in_order() -> None:
    t = tree()
    assert [e.index for e in t] == [0, 1, 2, 3, 4]


def test_indices_must_equal_positions() -> None:
    with pytest.raises(ValueError, match="indices must equal positions"):
        UITree((UIElement(1, "text", "x"),))


def test_render_text_format() -> None:
    assert render_text(tree()).splitlines() == [
        "<button id=1 clickable>Search</button>",
        "<input id=2 editable focused>Search wikiHow</input>",
        "<text id=3>Tips &amp; &lt;tricks&gt;</text>",
        "<checkbox id=4 checkable checked disabled>Wi-Fi</checkbox>",
        "<!-- more content: scroll down -->",
    ]


def test_empty_containers_are_not_rendered() -> None:
    assert "container" not in tree().text


def test_getitem_out_of_range_names_the_valid_range() -> None:
    with pytest.raises(IndexError, match=r"valid indices: 0\.\.4"):
        tree()[5]


def test_find_by_role_text_regex_and_flags() -> None:
    t = tree()
    assert [e.index for e in t.find(role="button")] == [1]
    assert [e.index for e in t.find(text="Search wikiHow")] == [2]
    assert [e.index for e in t.find(text_regex="^Tips")] == [3]
    assert [e.index for e in t.find(checked=True)] == [4]
    assert t.find_one(role="slider") is None


def test_at_point_prefers_interactive_elements() -> None:
    t = tree()
    assert t.at_point(320, 20).index == 1
    assert t.at_point(10, 60).index == 3
    assert t.at_point(1000, 1000) is None


def test_identity_ignores_index() -> None:
    a = UIElement(1, "button", "OK", resource_id="ok")
    b = UIElement(9, "button", "OK", resource_id="ok")
    assert a.identity == b.identity


def test_dict_round_trip_and_pickle() -> None:
    t = tree()
    assert UITree.from_dict(t.to_dict()) == t
    assert pickle.loads(pickle.dumps(t)) == t


def test_from_dict_rejects_unknown_fields() -> None:
    with pytest.raises(ValueError, match="unknown UIElement field"):
        UIElement.from_dict({"index": 0, "role": "text", "colour": "red"})
