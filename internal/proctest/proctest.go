// Package proctest checks, in tests, that no child process was left
// behind (the SUMO runs of packages traci and sim/sumo).
package proctest

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// NoneLeft fails the test if a process whose command line contains
// marker (say the test's temporary directory) is alive. Without pgrep it
// logs that it could not check.
func NoneLeft(t testing.TB, marker string) {
	t.Helper()
	out, err := exec.Command("pgrep", "-f", marker).Output()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return // none
	case err != nil:
		t.Logf("pgrep unavailable (%v); not checked", err)
		return
	}
	t.Errorf("SUMO processes left behind: %s", strings.TrimSpace(string(out)))
}
