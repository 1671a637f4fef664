"""``python -m hawkeye_env ...`` runs the ``hawkeye`` command line (for machines where the package's
console script is not installed, e.g. a source tree on ``PYTHONPATH``)."""

from hawkeye_env.cli import app

app(prog_name="hawkeye")
