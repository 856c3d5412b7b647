"""The installed version of specscope."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("specscope")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"
