//go:build race

package harness

// raceDetector: the fault suite does not redraw toxicities under -race
// (toxiproxy's UpdateToxicJson writes fields its running connections read).
const raceDetector = true
