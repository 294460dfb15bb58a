"""The note model's figures: the panels (panels.py), the arrays each draws and the layout
(figures.py), the scaling grid's figures (scaling.py) and its movies (movie.py)."""
