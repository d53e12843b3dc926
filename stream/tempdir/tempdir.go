// Package tempdir makes temporary directories that a killed process does
// not leave behind for good: each is named with the pid of the process
// that made it, and making one removes the directories of the same prefix
// whose process is gone (a SIGKILL runs no deferred clean-up).
package tempdir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// New removes the stale directories of prefix in parent (os.TempDir() if
// parent is "") and makes a new one, parent/<prefix><pid>-<random>, which
// the caller removes when done.
func New(parent, prefix string) (string, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	Sweep(parent, prefix)
	return os.MkdirTemp(parent, prefix+strconv.Itoa(os.Getpid())+"-")
}

// Sweep removes the directories parent/<prefix><pid>-* whose process pid
// no longer runs, and returns the ones it removed. Names of another shape
// (an older version's <prefix><random>) and directories of live
// processes are left alone; errors (a directory of another user) leave
// the directory in place, as there is nothing the caller could do.
func Sweep(parent, prefix string) []string {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.IsDir() {
			continue
		}
		digits, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(digits)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || alive(pid) {
			continue
		}
		path := filepath.Join(parent, e.Name())
		if os.RemoveAll(path) == nil {
			removed = append(removed, path)
		}
	}
	return removed
}
