"""Mock pbs_mom: config parsing, hook store, job start (primary and sister), daemon."""
