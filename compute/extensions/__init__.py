"""Plugins: discovery without import, loading under a namespace, checks of their results.

- :mod:`.discovery` finds plugins (shipped, entry points, folders) and reads
  their metadata without importing them (:func:`list_plugins`, :func:`views`);
- :mod:`.loading` imports a plugin under its namespace and isolates its
  calls (:func:`load`, :func:`load_all`, :func:`reset`);
- :mod:`.checks` knows the output kinds and checks results against them
  (:func:`check_result`, :func:`events_to_annotations`).

Operators are looked up by name, and plugins loaded for them, through
:mod:`specscope.compute.operators`.
"""

from .checks import OUTPUT_KINDS, check_result, events_to_annotations
from .discovery import (
    ENTRY_POINT_GROUP,
    SOURCES,
    CallError,
    Plugin,
    PluginError,
    add_search_path,
    discover,
    get_plugin,
    list_plugins,
    missing_imports,
    output_kind,
    plugin_of,
    problems,
    rescan,
    search_paths,
    user_plugin_dir,
    view_title,
    views,
)
from .loading import load, load_all, load_for_operator, reset

__all__ = [
    "ENTRY_POINT_GROUP",
    "OUTPUT_KINDS",
    "SOURCES",
    "CallError",
    "Plugin",
    "PluginError",
    "add_search_path",
    "check_result",
    "discover",
    "events_to_annotations",
    "get_plugin",
    "list_plugins",
    "load",
    "load_all",
    "load_for_operator",
    "missing_imports",
    "output_kind",
    "plugin_of",
    "problems",
    "rescan",
    "reset",
    "search_paths",
    "user_plugin_dir",
    "view_title",
    "views",
]
