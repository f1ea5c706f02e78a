"""Finding categories are long snake_case words; in narrow cells they wrap after an underscore,
never mid-word, and the name stays escaped text."""

from __future__ import annotations

from inventory.templatetags.claimscope import snake_breaks


def test_a_category_gets_a_break_opportunity_after_each_underscore():
    assert snake_breaks("claim_stuck_deallocating") == "claim_<wbr>stuck_<wbr>deallocating"
    assert snake_breaks("simple") == "simple"


def test_the_name_is_escaped():
    assert snake_breaks("<b>x_y</b>") == "&lt;b&gt;x_<wbr>y&lt;/b&gt;"
