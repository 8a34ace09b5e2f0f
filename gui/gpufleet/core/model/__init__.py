"""Plain data shared by the stages: an alert as the rule engine reports it, a finding as the
health check and the diagnosis report it."""
