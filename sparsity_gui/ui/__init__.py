"""Every Qt widget of the app lives in this package."""
