"""Communication operations of simulated processes: the operation table, point-to-point messages,
collectives."""
