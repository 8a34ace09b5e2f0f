"""Rental cost: accrual per host, idle share and advice."""
