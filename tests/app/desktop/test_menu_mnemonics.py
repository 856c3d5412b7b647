"""Every entry of a menu has its own Alt letter: a letter two entries share only moves the
highlight between them (Qt), so a person pressing it gets nothing done."""

from __future__ import annotations

import re
from collections import defaultdict

from specscope.app.desktop.actions import ACTIONS


def test_menu_mnemonics_are_unique_per_menu():
    letters: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    submenus = set()
    for spec in ACTIONS:
        # a submenu's entries share letters among themselves; its title, with the menu's
        where = f"{spec.menu} › {spec.submenu}" if spec.submenu else spec.menu
        texts = [(where, spec.text)]
        if spec.submenu and where not in submenus:
            submenus.add(where)
            texts.append((spec.menu, spec.submenu))
        for menu, text in texts:
            m = re.search(r"&([^&])", text.replace("&&", ""))
            if m:
                letters[menu][m.group(1).lower()].append(text)
    shared = {menu: {k: v for k, v in by.items() if len(v) > 1} for menu, by in letters.items()}
    shared = {menu: by for menu, by in shared.items() if by}
    assert not shared, f"menu entries sharing an Alt letter: {shared}"
    tops = [menu for menu in letters if " › " not in menu]
    top = [m.group(1).lower() for m in (re.search(r"&(.)", menu) for menu in tops) if m]
    assert len(top) == len(set(top)) == len(tops)
