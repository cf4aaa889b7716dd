"""The simulation engine: running a model on SimPy, the process and thread contexts, cores, limits."""
