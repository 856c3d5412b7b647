"""Every entry of a menu has its own Alt letter: a letter two entries share only moves the
highlight between them (Qt), so a person pressing it gets nothing done."""

from __future__ import annotations

import re
from collections import defaultdict

from specscope.app.desktop.actions import ACTIONS


def test_menu_mnemonics_are_unique_per_menu():
    letters: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for spec in ACTIONS:
        m = re.search(r"&([^&])", spec.text.replace("&&", ""))
        if m:
            letters[spec.menu][m.group(1).lower()].append(spec.text)
    shared = {menu: {k: v for k, v in by.items() if len(v) > 1} for menu, by in letters.items()}
    shared = {menu: by for menu, by in shared.items() if by}
    assert not shared, f"menu entries sharing an Alt letter: {shared}"
    top = [m.group(1).lower() for m in (re.search(r"&(.)", menu) for menu in letters) if m]
    assert len(top) == len(set(top)) == len(letters)
