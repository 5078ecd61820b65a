"""Which mitigation makes a judge right more often: the experiment, its analysis, and pairwise judging."""
