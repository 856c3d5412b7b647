"""The desktop app: the main window, its actions table, undo, the live window.

:mod:`~specscope.app.desktop.gui` starts it; :mod:`~specscope.app.desktop.controllers`
holds one controller per panel (annotations, designer, playback, processing,
profiler); :mod:`~specscope.app.desktop.show` opens a window from a script.
"""
