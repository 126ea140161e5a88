# Sphinx configuration of the real-tools suite's documented project (sphinx-autobuild).
project = "Pier real-tools docs"
extensions = []
html_theme = "basic"
