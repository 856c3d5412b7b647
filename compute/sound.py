"""The sound card, through ``sounddevice`` (PortAudio): one loader for input and output.

``sounddevice`` is an optional extra (``pip install 'specscope[audio]'``): live
audio input and playback load it only when they need it, and its absence — or
the absence of the PortAudio library it wraps — is one line that says what to
install, never a traceback.
"""

from __future__ import annotations

from typing import Any

from .errors import SpecscopeError

__all__ = ["load_sounddevice"]


def load_sounddevice(purpose: str, device: str) -> Any:
    """The ``sounddevice`` module, or a one-line error saying what to install.

    Parameters
    ----------
    purpose : str
        What needs it, for the message ("playback", "audio input").
    device : str
        What is unavailable without PortAudio ("audio output", "audio input").

    Returns
    -------
    module
        The imported ``sounddevice`` module.

    Raises
    ------
    SpecscopeError
        ``sounddevice`` is not installed (the message gives the pip command), or
        the PortAudio library it wraps cannot be loaded.
    """
    try:
        import sounddevice
    except ImportError:
        raise SpecscopeError(f"{purpose} needs the sounddevice package: pip install "
                             "'specscope[audio]'") from None
    except OSError as exc:  # the package is there but PortAudio is not
        raise SpecscopeError(f"{device} is unavailable: {exc} (install PortAudio, "
                             "e.g. apt install libportaudio2)") from None
    return sounddevice
