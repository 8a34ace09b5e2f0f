"""Work off the GUI thread: blocking calls in the thread pool, history read from the store."""
