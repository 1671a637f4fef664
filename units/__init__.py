"""The Hawkeye unit-test taxonomy: one package per optimization strategy.

Browse without importing kernels::

    from units import list_units, get_unit, units_for_tags, unit_context
"""

from units.index import (
    CONTEXT_MODES,
    get_unit,
    list_units,
    resolve,
    unit_context,
    unit_file,
    units_for_strategy,
    units_for_tags,
)
from units.spec import Metric, Unit

__all__ = [
    "CONTEXT_MODES", "Metric", "Unit", "get_unit", "list_units", "resolve", "unit_context",
    "unit_file", "units_for_strategy", "units_for_tags",
]
