//go:build !unix

package traci

// lockPorts is a no-op where flock is not available.
func lockPorts() func() { return func() {} }
