"""The pipeline hub: drains the fleet and feeds every consumer stage."""
