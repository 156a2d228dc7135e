//go:build !race

package harness

// raceDetector: see faults_race_test.go.
const raceDetector = false
