"""specscope.app — the desktop application and the command line.

``specscope.app.show(x, fs=...)`` opens a window from a notebook or a script.
Importing this package does not import Qt; ``show`` does.
"""


def show(*args, **kwargs):
    """Open a specscope window on a file, a Recording or an array (see ``notebook.show``)."""
    from .notebook import show as _show

    return _show(*args, **kwargs)
