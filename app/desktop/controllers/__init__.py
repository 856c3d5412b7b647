"""One controller per panel of the main window; each talks to the window through a Shell."""
