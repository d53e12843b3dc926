package traci

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ihope-ope/ihope/internal/proctest"
)

// requireSumo skips the test when SUMO is not installed.
func requireSumo(t testing.TB) {
	t.Helper()
	if _, err := LookPath(""); err != nil {
		t.Skip(err.Error())
	}
	if _, err := exec.LookPath("netconvert"); err != nil {
		t.Skip("netconvert not found: apt-get install -y sumo")
	}
}

// tinyNet builds a one-road network with a lane-area detector "det" and a
// flow, in a fresh directory whose path marks the SUMO processes of this
// test, and returns SUMO's arguments.
func tinyNet(t testing.TB) (dir string, args []string) {
	t.Helper()
	dir = t.TempDir()
	files := map[string]string{
		"n.nod.xml": `<nodes><node id="A" x="0" y="0"/><node id="B" x="500" y="0"/></nodes>`,
		"n.edg.xml": `<edges><edge id="AB" from="A" to="B" numLanes="1" speed="13.89"/></edges>`,
		"r.rou.xml": `<routes><flow id="f" from="AB" to="AB" begin="0" end="3600" period="2"/></routes>`,
		"d.add.xml": `<additional><laneAreaDetector id="det" lane="AB_0" pos="100" length="100" freq="3600" file="NUL"/></additional>`,
	}
	for name, s := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("netconvert", "--node-files", filepath.Join(dir, "n.nod.xml"),
		"--edge-files", filepath.Join(dir, "n.edg.xml"), "--xml-validation", "never",
		"-o", filepath.Join(dir, "n.net.xml")).CombinedOutput()
	if err != nil {
		t.Fatalf("netconvert: %v\n%s", err, out)
	}
	args = []string{"-n", filepath.Join(dir, "n.net.xml"), "-r", filepath.Join(dir, "r.rou.xml"),
		"-a", filepath.Join(dir, "d.add.xml"), "--xml-validation", "never", "--no-warnings"}
	return dir, args
}

func TestStartStepClose(t *testing.T) {
	requireSumo(t)
	dir, args := tinyNet(t)
	t.Cleanup(func() { proctest.NoneLeft(t, dir) })
	p, err := Start(context.Background(), Options{Args: args})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	if p.API < 20 || !strings.HasPrefix(p.Ident, "SUMO ") {
		t.Errorf("version %d %q", p.API, p.Ident)
	}
	ids, err := p.LaneAreaIDs()
	if err != nil || len(ids) != 1 || ids[0] != "det" {
		t.Errorf("LaneAreaIDs = %v, %v", ids, err)
	}
	if err := p.Step(60); err != nil {
		t.Fatal(err)
	}
	if now, err := p.Time(); now != 60 || err != nil {
		t.Errorf("Time = %v, %v; want 60", now, err)
	}
	// A vehicle every 2 s at 13.89 m/s: 100 m of detector hold 3 or 4.
	if n, err := p.LaneAreaVehicleNumber("det"); n < 3 || n > 4 || err != nil {
		t.Errorf("vehicles on det = %d, %v; want 3 or 4", n, err)
	}
	_, err = p.LaneAreaVehicleNumber("nope")
	var te *Error
	if !errors.As(err, &te) || te.Message != "Lane area detector 'nope' is not known" {
		t.Errorf("unknown detector: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case <-p.Done():
	default:
		t.Error("Close returned before SUMO was reaped")
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestStartReportsSumoMessage(t *testing.T) {
	requireSumo(t)
	dir := t.TempDir()
	t.Cleanup(func() { proctest.NoneLeft(t, dir) })
	_, err := Start(context.Background(), Options{Args: []string{"-n", filepath.Join(dir, "missing.net.xml")}})
	t.Logf("Start: %v", err)
	if err == nil || !strings.Contains(err.Error(), "missing.net.xml") || !strings.Contains(err.Error(), "sumo said") {
		t.Errorf("error %v, want SUMO's complaint about missing.net.xml", err)
	}
}

func TestCancelKillsSumo(t *testing.T) {
	requireSumo(t)
	dir, args := tinyNet(t)
	t.Cleanup(func() { proctest.NoneLeft(t, dir) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := Start(ctx, Options{Args: args})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	cancel()
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SUMO still running 10 s after cancel")
	}
	if err := p.Step(0); err == nil {
		t.Error("Step on a killed SUMO succeeded")
	} else {
		t.Logf("Step after cancel: %v", err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close after cancel: %v", err)
	}
}

func TestLookPath(t *testing.T) {
	_, err := LookPath("ihope-no-such-sumo-binary")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("LookPath of a missing binary: %v", err)
	}
	if got, want := ErrNotFound.Error(), "sumo not found: apt-get install -y sumo"; got != want {
		t.Errorf("ErrNotFound = %q, want %q", got, want)
	}
}
