"""What the tests share: stand-in samplers and servers, stream builders, the fixtures'
machinery; imported as ``tests.support.X`` (bench/ imports the same)."""
