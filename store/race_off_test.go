//go:build !race

package store

// raceEnabled: the race detector is on (its tests run several times slower);
// long randomized tests take fewer steps.
const raceEnabled = false
