// Package settings applies the zero-value-means-default rule of the
// learners' settings structs (ratio.Neural, value.Neural) in one place.
package settings

import "fmt"

// Int sets *v to d if it is 0 and returns an error naming the setting,
// prefixed by prefix ("ratio", "value: neural"), if it is negative.
func Int(prefix string, v *int, d int, name string) error {
	if *v < 0 {
		return fmt.Errorf("%s: %s %d, want >= 0", prefix, name, *v)
	}
	if *v == 0 {
		*v = d
	}
	return nil
}
