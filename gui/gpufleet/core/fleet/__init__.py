"""The fleet: one supervised session per host, their events fanned out."""
