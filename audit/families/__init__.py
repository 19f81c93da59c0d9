"""Paper families: one registration each (claims with their views and readings, recipes, experiments)."""
