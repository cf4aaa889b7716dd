"""The machine a model runs on: machine files, units, the network's cost model, roofline costs, device
mapping."""
