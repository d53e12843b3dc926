//go:build !unix

package traci

import "os/exec"

func setProcAttr(cmd *exec.Cmd) {}

// killGroup kills the SUMO process.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
