package gcstart

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// gcPercent returns the current GOGC without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestDefer: the collector is off after Defer and its pacing comes back
// at the first collection, forced or caused by the memory limit; with GOGC
// set in the environment Defer changes nothing.
func TestDefer(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	for _, forced := range []bool{true, false} {
		before, limit := gcPercent(), debug.SetMemoryLimit(-1)
		restored = make(chan struct{})
		Defer(16 << 20)
		if p, l := gcPercent(), debug.SetMemoryLimit(-1); p != -1 || l != 16<<20 {
			t.Fatalf("after Defer: GOGC %d, memory limit %d; want -1 (off) and %d", p, l, 16<<20)
		}
		if forced {
			runtime.GC()
		} else {
			// Allocate well past the limit, keeping little of it: the
			// limit starts a collection.
			var keep [][]byte
			for i := range 64 {
				b := make([]byte, 1<<20)
				b[0] = byte(i)
				keep = append(keep[:0], b)
			}
			runtime.KeepAlive(keep)
		}
		<-restored
		if p, l := gcPercent(), debug.SetMemoryLimit(-1); p != before || l != limit {
			t.Errorf("forced %v: after the first collection GOGC %d, memory limit %d; want %d and %d", forced, p, l, before, limit)
		}
	}
	restored = nil

	t.Setenv("GOGC", "150")
	before := gcPercent()
	Defer(16 << 20)
	if p := gcPercent(); p != before {
		t.Errorf("with GOGC set: GOGC %d after Defer, want %d", p, before)
	}
}
