"""OpenEnv's ``server`` package for hawkeye-env: ``server.app`` runs ``hawkeye_env.server.app``."""
