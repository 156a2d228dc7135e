package sim

import "testing"

// A UTF-8 byte order mark at the start of the simulator's configuration is
// dropped, not read as part of the first key.
func TestParseConfigDropsBOM(t *testing.T) {
	cfg, err := ParseConfig("c.yaml", []byte("\ufeffseed: 7\n"))
	if err != nil || cfg.Seed != 7 {
		t.Fatalf("with a BOM: seed %d, %v", cfg.Seed, err)
	}
}
