"""Display images of recordings: the tile engine, stacked channels, operator images."""

from .ahead import build_ahead, plan_ahead
from .images import DisplayImage, RenderResult
from .levels import auto_levels, difference_levels
from .plugin_images import plugin_image, plugin_view
from .scales import (
    FREQ_SCALES,
    FrequencyScaleError,
    check_freq_scale,
    freq_scale_problem,
    usable_freq_scale,
)
from .stacked import StackedEngine
from .tiles import (
    DEFAULT_CACHE_BYTES,
    REDUCTIONS,
    TILE_CELLS,
    Tile,
    TileCache,
    TileEngine,
    render_progressive,
)

__all__ = [
    "DEFAULT_CACHE_BYTES",
    "FREQ_SCALES",
    "REDUCTIONS",
    "TILE_CELLS",
    "DisplayImage",
    "FrequencyScaleError",
    "RenderResult",
    "StackedEngine",
    "Tile",
    "TileCache",
    "TileEngine",
    "auto_levels",
    "build_ahead",
    "check_freq_scale",
    "difference_levels",
    "freq_scale_problem",
    "plan_ahead",
    "plugin_image",
    "plugin_view",
    "render_progressive",
    "usable_freq_scale",
]
