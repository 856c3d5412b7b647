"""Pipelines: the one representation of processing, saved as JSON.

:class:`Pipeline` (the JSON model: steps, validation, files) runs on arrays and,
chunked, on recordings; :meth:`Pipeline.bind` gives a :class:`BoundPipeline`
(the stages for one sample rate, streaming, the tile engine's block
function).  Modules: :mod:`.model` (the document and :class:`Pipeline`),
:mod:`.step` (:class:`Step`), :mod:`.stages` (each step as a stream),
:mod:`.binding` (:class:`BoundPipeline`, :class:`PipelineResult`), :mod:`.events`
(a pipeline ending in a detector: :meth:`Pipeline.detect` gives its events).
"""

from ..filters import FILTER_DESIGNS, SETTLE_TOL
from .binding import DEFAULT_CHUNK_SAMPLES, BlockChain, BoundPipeline, PipelineResult
from .model import MAX_FILE_BYTES, SCHEMA, Pipeline, load
from .stages import Designed
from .step import Step

__all__ = [
    "DEFAULT_CHUNK_SAMPLES",
    "FILTER_DESIGNS",
    "MAX_FILE_BYTES",
    "SCHEMA",
    "SETTLE_TOL",
    "BlockChain",
    "BoundPipeline",
    "Designed",
    "Pipeline",
    "PipelineResult",
    "Step",
    "load",
]
