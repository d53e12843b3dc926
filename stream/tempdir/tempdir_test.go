package tempdir

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// New removes the folder of a dead process (a fake stale folder, as a
// SIGKILL leaves it) and keeps every other: live processes', other
// prefixes', older names without a pid, and plain files.
func TestNewSweepsDeadPids(t *testing.T) {
	cmd := exec.Command("sh", "-c", "exit 0")
	if err := cmd.Run(); err != nil {
		t.Skip("no sh to make a dead pid:", err)
	}
	dead := strconv.Itoa(cmd.Process.Pid)
	const prefix = "ihope-sumo-"
	parent := t.TempDir()
	cases := []struct {
		name string
		dir  bool
		kept bool
	}{
		{prefix + dead + "-123", true, false},                    // stale: its process is gone
		{prefix + "1073741824-9", true, false},                   // a pid above any pid_max
		{prefix + strconv.Itoa(os.Getppid()) + "-1", true, true}, // the go command, alive
		{prefix + strconv.Itoa(os.Getpid()) + "-2", true, true},  // this process
		{prefix + "2384723984", true, true},                      // an older version's name: no pid
		{"ihope-other-" + dead + "-1", true, true},               // another prefix
		{prefix + dead + "-file", false, true},                   // not a directory
	}
	for _, c := range cases {
		p := filepath.Join(parent, c.name)
		if c.dir {
			if err := os.MkdirAll(filepath.Join(p, "net"), 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir, err := New(parent, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if want := prefix + strconv.Itoa(os.Getpid()) + "-"; !strings.HasPrefix(filepath.Base(dir), want) || filepath.Dir(dir) != parent {
		t.Errorf("new folder %s, want %s/%s*", dir, parent, want)
	}
	entries, _ := os.ReadDir(parent)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, c := range cases {
		if slices.Contains(names, c.name) != c.kept {
			t.Errorf("%s: kept %v, want %v", c.name, !c.kept, c.kept)
		}
	}
	if len(names) != 6 { // 5 kept and the new one
		t.Errorf("left %q", names)
	}
}
