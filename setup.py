"""Shim for tools that still call setup.py; all metadata lives in setup.cfg.

The one thing setup.cfg cannot say: the top-level ``resources/`` folder installs as the package
``mlirkit.resources`` (bundled offline collections), next to the packages found under ``mlirkit/``.
"""
from setuptools import find_packages, setup

setup(packages=find_packages(include=["mlirkit", "mlirkit.*"]) + ["mlirkit.resources"])
