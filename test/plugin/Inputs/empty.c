/* A shared library with no plugin entry point. */
int mnccTestNotAPlugin(void) { return 0; }
