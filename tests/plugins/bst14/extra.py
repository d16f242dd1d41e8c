"""A module of the plugin that its experiment does not import: still part of its code."""
SCALE = 1.0
