"""What a run gives the user: results, traces, plots, the progress line, and the one reader/writer of
files."""
