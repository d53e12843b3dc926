package ope

import "testing"

// TestDefaults checks the default set: plain importance sampling is left
// out for a registered twin that is in it, and every other estimator is
// in.
func TestDefaults(t *testing.T) {
	out := map[string]bool{"is-trajectory": true, "is-stepwise": true}
	for _, e := range Registry() {
		if e.Default() == out[e.Name] {
			t.Errorf("%s: default %v", e.Name, e.Default())
		}
		if by := e.Dominated(); by != "" {
			twin, ok := Lookup(by)
			if !ok || !twin.Default() {
				t.Errorf("%s is dominated by %q, which is not a default estimator", e.Name, by)
			}
		}
	}
}
