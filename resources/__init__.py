"""Data shipped inside the package (bundled offline collections); see resources/README.md."""
