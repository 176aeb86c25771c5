package sandbox

// ExitText is exitText for the external tests.
var ExitText = exitText
