"""One package per paper: ``<module>/__init__.py`` (metadata), ``experiment.py``,
``claims.py``, ``figures.py`` and the method's own modules. See docs/adding-a-paper.md."""
