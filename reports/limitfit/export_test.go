package limitfit

// SlidingMax is slidingMax, for the external tests.
var SlidingMax = slidingMax
