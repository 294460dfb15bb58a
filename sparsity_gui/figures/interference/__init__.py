"""The interference model's figures: the panels and the layout (figures.py), the sweep's
figure (sweep.py) and its movies (movie.py)."""
