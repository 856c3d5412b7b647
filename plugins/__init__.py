"""Transforms shipped as plugins, discovered and loaded exactly like third-party ones.

Each public module here (``mel``, ``cqt``, ``scalogram``, ``reassigned``,
``multitaper``, ``features``, ``onsets``) is one plugin, found by
:mod:`specscope.compute.extensions` by scanning this folder (source ``shipped``),
listed from its source without importing it, and imported on first use.
Modules starting with ``_`` are helpers, not plugins.  Nothing here may import
Qt, ``specscope.app`` or ``specscope.widgets``.
"""
