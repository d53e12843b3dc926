//go:build unix

package traci

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockPorts takes a lock shared by every process of this program on the
// machine (a flock on a file in the temporary directory) and returns its
// release. Start holds it from choosing a free port until its own SUMO
// has answered the version handshake, so that no other SUMO started
// through this package can bind that port in between: without it, two
// test binaries starting SUMOs side by side could pick the same port, and
// one client would talk to the other's SUMO (seen in CI: "Unable to
// create listening socket: Address already in use"). If the lock cannot
// be taken, Start goes on without it.
func lockPorts() func() {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "ihope-traci-ports.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return func() {}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return func() {}
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}
