//go:build unix

package sumo

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ihope-ope/ihope/internal/proctest"
)

// The helper process behind TestNoSumoLeftBehind: it starts SUMO in the
// directory the parent names and then fails the test, or waits to be
// interrupted.
func TestHelperProcess(t *testing.T) {
	mode, dir := os.Getenv("IHOPE_SUMO_HELPER"), os.Getenv("IHOPE_SUMO_DIR")
	if mode == "" {
		t.Skip("helper process for TestNoSumoLeftBehind")
	}
	n, err := Build(context.Background(), dir, Config{Warmup: 12})
	if err != nil {
		t.Fatal(err)
	}
	s, err := n.Start(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Kill)
	for k := range 5 {
		if _, err := s.Step(k % NumPhases); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Printf("SUMO PID %d\n", s.Pid())
	os.Stdout.Sync()
	switch mode {
	case "fail":
		t.Fatal("deliberate failure in the middle of an episode")
	case "interrupt":
		time.Sleep(time.Minute) // until the parent interrupts
	}
}

// SUMO is reaped when a test fails midway (t.Cleanup) and when the
// program is interrupted (SIGINT kills the Go process without running any
// cleanup; the kernel then kills SUMO through Pdeathsig).
func TestNoSumoLeftBehind(t *testing.T) {
	requireSumo(t)
	for _, mode := range []string{"fail", "interrupt"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.v")
			cmd.Env = append(os.Environ(), "IHOPE_SUMO_HELPER="+mode, "IHOPE_SUMO_DIR="+dir)
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var once sync.Once
			t.Cleanup(func() { once.Do(func() { cmd.Process.Kill(); cmd.Wait() }) })
			pid := 0
			var out strings.Builder
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				line := sc.Text()
				out.WriteString(line + "\n")
				if _, err := fmt.Sscanf(line, "SUMO PID %d", &pid); err == nil {
					if mode == "interrupt" {
						cmd.Process.Signal(os.Interrupt)
					}
				}
			}
			err = cmd.Wait()
			once.Do(func() {})
			if pid == 0 {
				t.Fatalf("helper never started SUMO:\n%s", out.String())
			}
			if err == nil {
				t.Fatalf("helper succeeded, want a failure or an interrupt:\n%s", out.String())
			}
			if mode == "fail" && !strings.Contains(out.String(), "deliberate failure") {
				t.Fatalf("helper output:\n%s", out.String())
			}
			// The kernel delivers Pdeathsig at once, but give SUMO a
			// moment to die.
			deadline := time.Now().Add(5 * time.Second)
			for syscall.Kill(pid, 0) == nil && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("SUMO (pid %d) still alive after the helper's %s", pid, mode)
			}
			proctest.NoneLeft(t, dir)
		})
	}
}
