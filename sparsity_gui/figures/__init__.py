"""Publication figures drawn by matplotlib, without Qt: the paper and talk styles
(`style`), the drawing helpers every panel shares (`draw`), writing PNG, SVG and PDF with
the standalone script that redraws each figure (`save`), the layout rules a figure must
keep (`layout`) and the note model's panels (`note`).

Every drawing function depends only on numpy, matplotlib and its arguments (plain arrays
and a small dict of settings), so the script written beside a figure is made from the
function's own source: one piece of drawing code serves the app, the CLI, the Python API
and the researcher's script. Library code never uses pyplot (no global figure state, no
GUI backend): figures are `matplotlib.figure.Figure` objects drawn by the Agg canvas."""
