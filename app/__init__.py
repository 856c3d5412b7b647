"""specscope.app — the front-ends: command line (cli/), desktop (desktop/), notebook (notebook/).

``specscope.app.show(x, fs=...)`` opens a window from a notebook or a script;
``specscope.app.explore(x, fs=...)`` shows the explorer inline in a Jupyter
notebook (no display needed) and ``specscope.app.design_filter(fs=...)`` the
filter designer.  Importing this package does not import Qt; these functions do.
"""


def show(*args, **kwargs):
    """Open a specscope window on a file, a Recording or an array (see ``desktop.show``)."""
    from specscope.app.desktop.show import show as _show

    return _show(*args, **kwargs)


def explore(*args, **kwargs):
    """The explorer as an inline notebook widget (see ``notebook.explorer.explore``)."""
    from specscope.app.notebook.explorer import explore as _explore

    return _explore(*args, **kwargs)


def design_filter(*args, **kwargs):
    """The filter designer as an inline notebook widget (see ``notebook.explorer.design_filter``)."""
    from specscope.app.notebook.explorer import design_filter as _design_filter

    return _design_filter(*args, **kwargs)
