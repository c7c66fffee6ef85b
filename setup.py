"""Shim for tools that still call setup.py; all metadata lives in setup.cfg.

The one thing setup.cfg cannot say: the top-level ``resources/`` folder installs as the package
``mlirkit.resources`` (bundled offline collections), next to the packages found under ``mlirkit/``; each
of its folders (``ddtp/``, ``parallel/``, ...) is a data-only namespace package, declared so that
setuptools ships its files (the patterns of setup.cfg's ``[options.package_data]``) without warnings.
"""
from setuptools import find_namespace_packages, find_packages, setup

RESOURCES = ["mlirkit.resources"] + [f"mlirkit.resources.{name}"
                                     for name in find_namespace_packages(where="resources", exclude=["*__pycache__*"])]

setup(packages=find_packages(include=["mlirkit", "mlirkit.*"]) + RESOURCES)
