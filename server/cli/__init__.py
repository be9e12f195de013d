"""The ``feltd`` command line."""
