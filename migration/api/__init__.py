"""Migration API: stored readiness evaluations and a cluster's migration plan."""
