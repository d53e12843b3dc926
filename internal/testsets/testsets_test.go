package testsets

import "testing"

func TestSets(t *testing.T) {
	for _, c := range []struct {
		stat, long string
		wantStat   bool
		wantLong   bool
	}{
		{"", "", false, false},
		{"0", "0", false, false},
		{"1", "", true, false},
		{"yes", "0", true, false},
		{"", "1", true, true}, // the long sweeps include the statistical set
		{"0", "1", true, true},
	} {
		t.Setenv("IHOPE_STAT", c.stat)
		t.Setenv("IHOPE_LONG", c.long)
		if Stat() != c.wantStat || Long() != c.wantLong {
			t.Errorf("IHOPE_STAT=%q IHOPE_LONG=%q: Stat %v, Long %v; want %v, %v", c.stat, c.long, Stat(), Long(), c.wantStat, c.wantLong)
		}
	}
}
