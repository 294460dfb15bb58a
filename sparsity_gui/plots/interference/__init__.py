"""The interference model's live panels (panels.py) and the sweep's figure (sweep.py)."""
