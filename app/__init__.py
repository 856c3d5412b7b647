"""specscope.app — the desktop application and the command line.

``specscope.app.show(x, fs=...)`` opens a window from a notebook or a script;
``specscope.app.explore(x, fs=...)`` shows the explorer inline in a Jupyter
notebook (no display needed) and ``specscope.app.design_filter(fs=...)`` the
filter designer.  Importing this package does not import Qt; these functions do.
"""


def show(*args, **kwargs):
    """Open a specscope window on a file, a Recording or an array (see ``notebook.show``)."""
    from .notebook import show as _show

    return _show(*args, **kwargs)


def explore(*args, **kwargs):
    """The explorer as an inline notebook widget (see ``notebook_explorer.explore``)."""
    from .notebook_explorer import explore as _explore

    return _explore(*args, **kwargs)


def design_filter(*args, **kwargs):
    """The filter designer as an inline notebook widget (see ``notebook_explorer.design_filter``)."""
    from .notebook_explorer import design_filter as _design_filter

    return _design_filter(*args, **kwargs)
