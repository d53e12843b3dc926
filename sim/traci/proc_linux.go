//go:build linux

package traci

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts SUMO in its own process group (so that a terminal's
// Ctrl-C reaches the Go program, which then closes SUMO itself) and asks
// the kernel to kill it if the Go program dies first. Strictly, Pdeathsig
// fires when the thread that started SUMO exits; the Go runtime keeps its
// threads for the life of the program unless a goroutine locked to one
// (runtime.LockOSThread) exits, which this package never does.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills SUMO's process group.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return cmd.Process.Kill()
	}
	return nil
}
