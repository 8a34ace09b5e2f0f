"""Qt-free core: config, secrets, transports, sessions, fleet, store, rules, cost, health,
diagnosis."""
