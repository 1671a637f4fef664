"""The Hawkeye unit-test taxonomy: one package per optimization strategy (``units/<unit>/``), the
kernel modules several units share beside them (``block_scaled_fp4``, ``fp4_ptx``, ``gluon_compat``),
and the infrastructure apart in ``units/lib/``.

Browse without importing kernels::

    from units import list_units, get_unit, units_for_tags, unit_context
"""

from units.lib.index import (
    CONTEXT_MODES,
    get_unit,
    list_units,
    resolve,
    unit_context,
    unit_file,
    units_for_strategy,
    units_for_tags,
)
from units.lib.spec import Metric, Unit

__all__ = [
    "CONTEXT_MODES", "Metric", "Unit", "get_unit", "list_units", "resolve", "unit_context",
    "unit_file", "units_for_strategy", "units_for_tags",
]
