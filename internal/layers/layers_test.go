package layers

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const module = "github.com/ihope-ope/ihope"

// goList runs "go list" in dir with the given arguments and returns its
// output lines.
func goList(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(gobin, append([]string{"list"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return strings.Fields(string(out))
}

// room says which room a package of the main module is in.
func room(pkg string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
	switch {
	case rel == "sim" || strings.HasPrefix(rel, "sim/"):
		return "worlds"
	case strings.HasPrefix(rel, "research/"):
		return "harness"
	case strings.HasPrefix(rel, "internal/cli") || strings.HasPrefix(rel, "cmd/"):
		return "command"
	case strings.HasPrefix(rel, "internal/"):
		return "internal"
	}
	return "library"
}

// rank orders the rooms: a package may link only rooms of its rank or
// lower. The library's internal/ helpers (numerics, formatting, progress)
// rank with it, so a library package linking one is fine.
var rank = map[string]int{"library": 0, "internal": 0, "worlds": 1, "harness": 2, "command": 3}

func TestImportsRunDownwards(t *testing.T) {
	pkgs := goList(t, "../..", "./...")
	if len(pkgs) < 30 {
		t.Fatalf("go list ./... gave %d packages, want the whole module", len(pkgs))
	}
	rooms := map[string]int{}
	for _, p := range pkgs {
		rooms[room(p)]++
	}
	for _, r := range []string{"library", "worlds", "harness", "command"} {
		if rooms[r] == 0 {
			t.Fatalf("no package in room %s: the tree has moved; update room()", r)
		}
	}
	for _, p := range pkgs {
		from := room(p)
		// Test-only helpers under internal/ (sumogen, pendulumgen, testsets,
		// this package) build worlds on purpose: only the library proper
		// and the worlds are held to their rank.
		if from == "internal" {
			continue
		}
		for _, dep := range goList(t, "../..", "-deps", p) {
			if !strings.HasPrefix(dep, module) {
				continue
			}
			if to := room(dep); rank[to] > rank[from] {
				t.Errorf("%s (%s) links %s (%s): imports must run downwards (docs/ARCHITECTURE.md)", p, from, dep, to)
			}
		}
	}
}

// TestBeamLinksNoInternal checks that the Beam module imports no internal/
// package of the main module directly and does not link the command line.
func TestBeamLinksNoInternal(t *testing.T) {
	pkgs := goList(t, "../../beam", "-f", "{{.ImportPath}}:{{join .Imports \",\"}}", "./...")
	for _, line := range pkgs {
		pkg, imports, _ := strings.Cut(line, ":")
		for _, imp := range strings.Split(imports, ",") {
			if strings.HasPrefix(imp, module+"/internal/") {
				t.Errorf("%s imports %s: beam/ must use the main module's public packages", pkg, imp)
			}
		}
	}
	for _, dep := range goList(t, "../../beam", "-deps", "./...") {
		if strings.HasPrefix(dep, module+"/internal/cli") {
			t.Errorf("beam/ links %s", dep)
		}
	}
}
