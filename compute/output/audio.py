"""Floating-point WAV and RF64 headers that every reader takes without a warning.

libsndfile writes a float WAV's ``fmt `` chunk in 16 bytes, the PCM form, without the
``cbSize`` field the WAVE format asks of every other format tag, and writes float RF64 as
``WAVE_FORMAT_EXTENSIBLE``; sox warns "wave header missing extended part of fmt chunk" on
both.  :func:`float_wav_header` gives the form the format describes for non-PCM samples:
an 18-byte ``fmt `` chunk (``WAVE_FORMAT_IEEE_FLOAT``, ``cbSize`` 0), a ``fact`` chunk
with the number of frames, then the ``data`` chunk's header; the interleaved
little-endian samples follow it (:func:`float_wav_bytes`).  RF64 carries the sizes beyond
32 bits in its ``ds64`` chunk (EBU Tech 3306).  Nothing here imports Qt.
"""

from __future__ import annotations

import struct

import numpy as np

__all__ = ["FLOAT_SUBTYPES", "WAVE_FORMAT_IEEE_FLOAT", "float_wav_bytes", "float_wav_header"]

#: the ``fmt `` chunk's format tag of IEEE floating-point samples
WAVE_FORMAT_IEEE_FLOAT = 3
#: soundfile subtypes written here: name -> little-endian numpy dtype
FLOAT_SUBTYPES = {"FLOAT": "<f4", "DOUBLE": "<f8"}
_U32 = 0xFFFFFFFF


def float_wav_header(n_frames: int, n_channels: int, sample_rate: int, subtype: str = "FLOAT",
                     container: str = "WAV") -> bytes:
    """The bytes before the samples of a float WAV or RF64 file.

    Parameters
    ----------
    n_frames : int
        Samples per channel that follow.
    n_channels : int
        Channels, interleaved.
    sample_rate : int
        Samples per second (a whole number).
    subtype : str
        ``"FLOAT"`` (32-bit) or ``"DOUBLE"`` (64-bit), a key of :data:`FLOAT_SUBTYPES`.
    container : str
        ``"WAV"``, or ``"RF64"`` for data beyond what 32-bit sizes hold.

    Returns
    -------
    bytes
        ``RIFF``/``RF64`` header, (``ds64``), ``fmt `` (18 bytes), ``fact``, and the
        ``data`` chunk's id and size.

    Raises
    ------
    ValueError
        The subtype or container is not one of these, or a WAV's sizes exceed 32 bits.

    Examples
    --------
    >>> h = float_wav_header(48000, 2, 48000)
    >>> h[:4], h[12:16], int.from_bytes(h[16:20], "little"), len(h)
    (b'RIFF', b'fmt ', 18, 58)
    """
    if subtype not in FLOAT_SUBTYPES:
        raise ValueError(f"subtype={subtype!r}: expected one of {', '.join(FLOAT_SUBTYPES)}")
    width = np.dtype(FLOAT_SUBTYPES[subtype]).itemsize
    block = int(n_channels) * width
    data_bytes = int(n_frames) * block
    fmt = struct.pack("<HHIIHHH", WAVE_FORMAT_IEEE_FLOAT, int(n_channels), int(sample_rate),
                      int(sample_rate) * block, block, 8 * width, 0)
    chunks = [b"fmt ", struct.pack("<I", len(fmt)), fmt]
    # the WAVE format asks for a fact chunk (frames) with every non-PCM format tag
    if container == "WAV":
        riff = 4 + (8 + len(fmt)) + (8 + 4) + (8 + data_bytes)
        if riff > _U32 or n_frames > _U32:
            raise ValueError(f"{data_bytes} bytes of samples need RF64, not WAV")
        return b"".join([b"RIFF", struct.pack("<I", riff), b"WAVE", *chunks, b"fact",
                         struct.pack("<II", 4, int(n_frames)), b"data",
                         struct.pack("<I", data_bytes)])
    if container == "RF64":
        ds64 = 8 + 8 + 8 + 4
        riff = 4 + (8 + ds64) + (8 + len(fmt)) + (8 + 4) + (8 + data_bytes)
        return b"".join([b"RF64", struct.pack("<I", _U32), b"WAVE", b"ds64",
                         struct.pack("<IQQQI", ds64, riff, data_bytes, int(n_frames), 0),
                         *chunks, b"fact", struct.pack("<II", 4, min(int(n_frames), _U32)),
                         b"data", struct.pack("<I", _U32)])
    raise ValueError(f"container={container!r}: expected WAV or RF64")


def float_wav_bytes(block: np.ndarray, subtype: str = "FLOAT") -> bytes:
    """Samples shaped (channels, samples) as a float WAV's interleaved data.

    Parameters
    ----------
    block : numpy.ndarray
        Real samples, shaped (channels, samples).
    subtype : str
        ``"FLOAT"`` or ``"DOUBLE"``.

    Returns
    -------
    bytes
        Little-endian samples, frame after frame.

    Examples
    --------
    >>> float_wav_bytes(np.array([[1.0, 2.0], [3.0, 4.0]]), "FLOAT").hex()
    '0000803f000040400000004000008040'
    """
    return np.ascontiguousarray(np.asarray(block).T, dtype=FLOAT_SUBTYPES[subtype]).tobytes()
