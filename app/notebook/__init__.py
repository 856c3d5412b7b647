"""The explorer and the filter designer inline in Jupyter, drawn without a display.

:mod:`~specscope.app.notebook.pump` runs the one thread that touches Qt objects in a
kernel; :mod:`~specscope.app.notebook.canvas` turns offscreen frames into widget
images; :mod:`~specscope.app.notebook.explorer` and
:mod:`~specscope.app.notebook.designer` are the widgets.
"""
