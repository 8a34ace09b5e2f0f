"""The desktop UI (PySide6 + pyqtgraph): the only package that imports Qt."""
