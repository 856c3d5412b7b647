"""What both Qt front-ends share: the compute thread, the shell, the view controller.

:mod:`~specscope.app.qt.worker` runs every heavy job off the GUI thread;
:mod:`~specscope.app.qt.shell` is the small interface a controller needs of its
window; :mod:`~specscope.app.qt.view_controller` turns viewports into typed tile
requests.  Nothing here knows the desktop window or the notebook widgets.
"""
